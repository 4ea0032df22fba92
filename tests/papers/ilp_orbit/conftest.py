"""The label cache of these tests lives in a temporary folder (tests never need a cache)."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def _label_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ICLR25_CACHE", str(tmp_path_factory.mktemp("ilp_orbit_cache")))
    yield
    mp.undo()
