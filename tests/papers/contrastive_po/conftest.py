"""Shared fixtures: a tiny untrained dual encoder and a few small typographic pairs."""

import numpy as np
import pytest
import torch

from iclr25.papers.contrastive_po import TinyCLIP, typographic_pairs


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_model():
    """A 4-channel TinyCLIP (untrained), built under a fixed seed."""
    torch.manual_seed(0)
    return TinyCLIP(dim=8, width=4, word_dim=8).eval()


@pytest.fixture(scope="module")
def tiny_pairs():
    """Twelve 32x32 pairs over four classes."""
    return typographic_pairs(12, np.random.default_rng(0), (0, 1, 2, 3), size=32)
