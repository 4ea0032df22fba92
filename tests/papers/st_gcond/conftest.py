"""Shared fixtures: a small CSBM and a fast condensation config."""

import numpy as np
import pytest

from iclr25.papers.st_gcond import CondenseConfig, TeacherConfig, make_csbm


@pytest.fixture(scope="module")
def csbm():
    return make_csbm(np.random.default_rng(7), num_nodes=160, num_classes=4, num_features=16)


@pytest.fixture
def fast_cfg():
    """A few steps of everything, with the torch-only teacher (no torch_geometric needed)."""
    return CondenseConfig(
        num_syn=10,
        steps=4,
        num_subtasks=2,
        extractor_width=16,
        pool_size=2,
        gen_hidden=8,
        target_dim=8,
        real_batch=32,
        teachers=TeacherConfig(names=("mae",), hidden=8, epochs=3),
        gm_outer=2,
        gm_model_steps=1,
    )
