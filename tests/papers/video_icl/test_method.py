"""In-context inference: shapes, cache == recomputation end to end, NLL scoring, bad input."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.video_icl import (
    VQVAE,
    VideoGPT,
    continuation_nll,
    evaluate_episode,
    evaluate_episodes,
    imitate,
    make_corpus,
    make_episode,
    tokenize_corpus,
    tokenizer_ceiling,
    train_video_model,
)


@pytest.fixture(scope="module")
def parts():
    """An untrained tiny tokenizer (8x8 frames -> 2x2 tokens) and transformer."""
    with torch_seed(0):
        vq = VQVAE(num_codes=8, code_dim=4, hidden=8).eval()
        gpt = VideoGPT(vocab_size=8, max_len=4 * 8, d_model=16, n_layers=1, n_heads=2).eval()
    return vq, gpt


def test_imitate_shapes_and_cache_equivalence(parts, split):
    vq, gpt = parts
    ep = make_episode(np.random.default_rng(0), "similar", split=split, shot_len=4, size=8)
    demo, prefix = ep.demo.frames, ep.query_prefix  # 4 + 2 frames, generate 2: 8 frames
    a = imitate(gpt, vq, demo, prefix, 2, np.random.default_rng(5), use_cache=True)
    b = imitate(gpt, vq, demo, prefix, 2, np.random.default_rng(5), use_cache=False)
    assert a.shape == (2, 8, 8, 3) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    none = imitate(gpt, vq, None, prefix, 2, np.random.default_rng(5))
    assert none.shape == (2, 8, 8, 3)


def test_continuation_nll_and_episode_scores(parts, split):
    vq, gpt = parts
    ep = make_episode(np.random.default_rng(1), "contrast", split=split, shot_len=4, size=8)
    nll = continuation_nll(gpt, vq, ep.demo.frames, ep.query_prefix, ep.query.frames[2:])
    assert np.isfinite(nll) and nll > 0
    out = evaluate_episode(gpt, vq, ep, np.random.default_rng(2))
    assert {"predicted", "target", "correct", "psnr", "ssim", "nll_with", "nll_without",
            "nll_contrast", "nll_control"} <= set(out)  # fmt: skip
    assert out["target"] == ep.demo_action
    assert tokenizer_ceiling(vq, ep) in range(-1, 6)


def test_training_on_continuous_clips_runs(parts):
    vq, _ = parts
    vids = make_corpus(np.random.default_rng(0), 6, "two_shot", p=0.7, shot_len=4, size=8)
    tok = tokenize_corpus(vq, vids)
    assert tok.shape == (6, 8 * 4) and tok.dtype == torch.int64
    with torch_seed(1):
        gpt = VideoGPT(8, 32, d_model=16, n_layers=1, n_heads=2)
    before = gpt.loss(tok).item()
    train_video_model(gpt, tok, steps=20, batch_size=6, lr=3e-3, warmup=2)
    assert gpt.loss(tok).item() < before


def test_bad_input_raises(parts):
    vq, gpt = parts
    good = np.zeros((2, 8, 8, 3), np.float32)
    with pytest.raises(ValueError, match=r"query_prefix_frames of shape \(8, 8, 3\)"):
        imitate(gpt, vq, None, good[0], 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"demo_frames of shape \(2, 16, 16, 3\)"):
        imitate(gpt, vq, np.zeros((2, 16, 16, 3)), good, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_frames=0"):
        imitate(gpt, vq, None, good, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="a context of"):
        imitate(gpt, vq, good.repeat(4, 0), good, 2, np.random.default_rng(0))


def test_batches_score_like_single_clips(parts, split):
    vq, gpt = parts
    rng = np.random.default_rng(3)
    eps = [make_episode(rng, "similar", split=split, shot_len=4, size=8) for _ in range(3)]
    demo = np.stack([e.demo.frames for e in eps])
    prefix = np.stack([e.query_prefix for e in eps])
    cont = np.stack([e.query.frames[2:] for e in eps])
    batched = continuation_nll(gpt, vq, demo, prefix, cont)
    single = [continuation_nll(gpt, vq, d, p, c) for d, p, c in zip(demo, prefix, cont)]
    np.testing.assert_allclose(batched, single, rtol=1e-5)
    gen = imitate(gpt, vq, demo, prefix, 2, np.random.default_rng(5))
    assert gen.shape == (3, 2, 8, 8, 3)
    rows = evaluate_episodes(gpt, vq, eps, np.random.default_rng(5))
    np.testing.assert_allclose([r["nll_with"] for r in rows], single, rtol=1e-5)
    with pytest.raises(ValueError, match="as many clips"):
        continuation_nll(gpt, vq, demo[:2], prefix, cont)
    mixed = [eps[0], make_episode(rng, "none", split=split, shot_len=4, size=8)]
    with pytest.raises(ValueError, match="share setting"):
        evaluate_episodes(gpt, vq, mixed, rng)
