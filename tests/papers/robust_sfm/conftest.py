"""Shared fixtures: small synthetic scenes (module scope, built once per test module)."""

import numpy as np
import pytest

from iclr25.papers.robust_sfm import make_scene


@pytest.fixture(scope="module")
def clean_scene():
    """Noiseless, outlier-free ring scene: 8 cameras, about 80 tracks."""
    return make_scene(
        np.random.default_rng(3), num_cameras=8, num_points=100, noise_px=0.0, dropout=0.0
    )


@pytest.fixture(scope="module")
def outlier_scene():
    """Ring scene with 30 % outliers of every kind and 1 px noise."""
    return make_scene(
        np.random.default_rng(4), num_cameras=10, num_points=150, noise_px=1.0, outlier_rate=0.3
    )
