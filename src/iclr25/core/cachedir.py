"""The machine-wide cache folder of iclr25 (derived data that is safe to delete).

`$ICLR25_CACHE` if set, else `$XDG_CACHE_HOME/iclr25`, else `~/.cache/iclr25`; `ICLR25_CACHE=off`
(or `none`, `0`) disables every cache. Users: ilp_orbit's solver labels (`ilp_orbit/labels`) and
the dequantised copies of GGUF models loaded by the hf backend (`lm/`). Nothing needs a cache
entry: a missing or damaged one is computed again.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "ICLR25_CACHE"


def cache_root() -> Path | None:
    """The cache folder, or None when `ICLR25_CACHE=off`."""
    root = os.environ.get(CACHE_ENV, "")
    if root.lower() in ("off", "none", "0"):
        return None
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "iclr25")
    return Path(root)
