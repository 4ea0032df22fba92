"""Shared fixtures: a split and a small corpus (module scope)."""

import numpy as np
import pytest

from iclr25.papers.video_icl import make_split


@pytest.fixture(scope="module")
def split():
    """The default split (20 % of scenes and of (shape, colour, action) triples held out)."""
    return make_split(np.random.default_rng(7))
