"""The shared pipeline: paired episodes, evaluation keys, the tuning choice, tiny end to end."""

import dataclasses

import numpy as np
import pytest

from iclr25.core.seeding import make_rngs
from iclr25.papers.video_icl import (
    SETTINGS,
    PipelineConfig,
    ceiling,
    evaluate,
    fit_model,
    fit_tokenizer,
    in_shot_accuracy,
    make_episodes,
    make_split,
)
from iclr25.papers.video_icl.tune import LRS, choose

TINY = PipelineConfig(tok_steps=5, tok_videos=3, n_videos=6, steps=2, n_episodes=3, d_model=8,
                      n_layers=1)  # fmt: skip


@pytest.fixture(scope="module")
def trained():
    rngs = make_rngs(0)
    split = make_split(rngs.child("split").np)
    vq = fit_tokenizer(TINY, split, rngs.child("tok"))
    model, loss = fit_model(TINY, vq, split, "two_shot", rngs.child("model"))
    return split, vq, model, loss


def test_episodes_share_the_query_across_settings(split):
    eps = make_episodes(TINY, split, seed=3)
    assert set(eps) == set(SETTINGS) and all(len(v) == 3 for v in eps.values())
    for i in range(3):
        q = [eps[s][i].query for s in SETTINGS]
        assert all(np.array_equal(c.frames, q[0].frames) for c in q)
        assert len({eps[s][i].action for s in SETTINGS}) == 1
    assert eps["none"][0].demo is None and eps["similar"][0].demo is not None
    # held-out combinations only
    for e in eps["similar"]:
        assert split.is_heldout(e.query.scenes[0], e.action)


def test_evaluation_keys_and_ranges(trained):
    split, vq, model, loss = trained
    assert np.isfinite(loss) and model.frame_tokens == TINY.frame_tokens == 16
    eps = make_episodes(TINY, split, seed=4)
    out = evaluate(TINY, model, vq, eps, np.random.default_rng(0))
    for s in SETTINGS:
        for k in ("acc", "flip", "still", "dnll", "dnll_control", "pacc"):
            assert f"{s}/{k}" in out
        assert 0 <= out[f"{s}/acc"] <= 1
    assert out["none/dnll"] == 0.0  # without a demonstration "with" and "without" coincide
    assert out["contrast/flip"] == out["contrast/acc"]  # its target is the contrast action
    oracle = evaluate(TINY, None, vq, {s: eps[s] for s in ("similar", "contrast")},
                      np.random.default_rng(0), oracle=True)  # fmt: skip
    assert oracle["similar/acc"] == oracle["contrast/acc"] == oracle["contrast/flip"] == 1.0
    assert oracle["similar/flip"] == 0.0 and "similar/psnr" not in oracle
    assert 0 <= in_shot_accuracy(TINY, model, vq, eps["none"], np.random.default_rng(1)) <= 1
    c = ceiling(vq, eps["similar"])
    assert 0 <= c["tokenizer/ceiling"] <= 1 and 0 < c["tokenizer/used_fraction"] <= 1


def test_geometry_and_config_checks():
    assert TINY.geometry == dict(size=16, speed=4, grid=4, shot_len=4)
    with pytest.raises(ValueError, match="lr"):
        dataclasses.replace(TINY, lr=0.0)


def test_tuning_chooses_the_lowest_mean_validation_loss():
    def loss(kind, lr, seed):  # a minimum at 2e-3, except for "pairs" (lowest lr)
        return (lr - 2e-3) ** 2 + seed * 1e-9 + (kind == "pairs") * lr

    kinds = ("two_shot", "single_shot", "pairs")
    rows = [{"kind": k, "lr": lr, "seed": s, "val_loss": loss(k, lr, s)}
            for k in kinds for lr in LRS for s in (100, 101)]  # fmt: skip
    chosen = choose(rows)
    assert chosen["two_shot"] == chosen["single_shot"] == 2e-3 and chosen["pairs"] == min(LRS)


def test_tuning_choice_covers_a_widened_grid_per_corpus():
    rows = [{"kind": "two_shot", "lr": lr, "seed": 100, "val_loss": -lr} for lr in (*LRS, 8e-3)]
    rows += [{"kind": "pairs", "lr": lr, "seed": 100, "val_loss": lr} for lr in LRS]
    assert choose(rows) == {"two_shot": 8e-3, "pairs": min(LRS)}
