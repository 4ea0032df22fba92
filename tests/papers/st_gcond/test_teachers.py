"""The self-supervised teachers and their fusion into Z_T."""

import numpy as np
import pytest
import torch

from iclr25.core.testing import needs
from iclr25.papers.st_gcond import Teacher, fuse_teachers, pretrain_teachers


def test_masked_autoencoder_teacher_learns(csbm):
    g = csbm.graph
    (short,) = pretrain_teachers(g, ("mae",), np.random.default_rng(0), hidden=8, epochs=2)
    (long,) = pretrain_teachers(g, ("mae",), np.random.default_rng(0), hidden=8, epochs=40)
    assert long.embeddings.shape == (g.num_nodes, 8) and torch.isfinite(long.embeddings).all()
    assert long.final_loss < short.final_loss  # the scaled cosine error falls with training


@needs("torch_geometric")
def test_pyg_teachers_run_offline_and_are_deterministic(csbm):
    g = csbm.graph
    a = pretrain_teachers(g, ("dgi", "gae"), np.random.default_rng(3), hidden=8, epochs=5)
    b = pretrain_teachers(g, ("dgi", "gae"), np.random.default_rng(3), hidden=8, epochs=5)
    assert [t.name for t in a] == ["dgi", "gae"]
    for ta, tb in zip(a, b):
        assert ta.embeddings.shape == (g.num_nodes, 8)
        assert np.isfinite(ta.final_loss)
        torch.testing.assert_close(ta.embeddings, tb.embeddings)


def test_fusion_gives_equal_weight_blocks(seed):
    g = torch.Generator().manual_seed(seed)
    ts = [
        Teacher("dgi", torch.randn(50, 6, generator=g) * 100, 0.0),
        Teacher("mae", torch.randn(50, 3, generator=g), 0.0),
    ]
    z = fuse_teachers(ts, 8)  # blocks of 4 and 4 (the second padded: only 3 dims)
    assert z.shape == (50, 8)
    torch.testing.assert_close(z.mean(0), torch.zeros(8), atol=1e-5, rtol=0)
    block_var = [z[:, :4].pow(2).sum(1).mean(), z[:, 4:].pow(2).sum(1).mean()]
    torch.testing.assert_close(torch.stack(block_var), torch.tensor([0.5, 0.5]))
    assert torch.all(z[:, 7] == 0)


@pytest.mark.parametrize(
    ("names", "match"), [((), "names="), (("dgi", "dgi"), "names="), (("gin",), "teacher='gin'")]
)
def test_bad_teacher_names(csbm, names, match):
    with pytest.raises(ValueError, match=match):
        pretrain_teachers(csbm.graph, names, np.random.default_rng(0))


def test_fusion_refuses_too_small_a_target():
    t = Teacher("mae", torch.randn(5, 3), 0.0)
    with pytest.raises(ValueError, match="target_dim=1"):
        fuse_teachers([t, t], 1)
