"""VideoGPT: KV cache equals recomputation, causality, loss, bad input."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.video_icl import VideoGPT, train_video_model


@pytest.fixture(params=[None, 6], ids=["absolute", "factorised"])
def gpt(seed, request):
    with torch_seed(seed):
        return VideoGPT(vocab_size=12, max_len=40, d_model=16, n_layers=2, n_heads=2,
                        frame_tokens=request.param).eval()  # fmt: skip


def test_factorised_positions_share_the_spatial_table(seed):
    with torch_seed(seed):
        m = VideoGPT(vocab_size=12, max_len=40, d_model=16, frame_tokens=6)
    pos = m.positions(0, 40)
    # tokens 6 frames apart differ by the time embeddings only
    torch.testing.assert_close(pos[7] - pos[1], m.time_pos.weight[1] - m.time_pos.weight[0])
    assert m.time_pos.num_embeddings == 7 and m.space_pos.num_embeddings == 6
    with pytest.raises(ValueError, match="frame_tokens=0"):
        VideoGPT(vocab_size=12, max_len=40, frame_tokens=0)


def test_kv_cache_equals_recomputation(gpt, seed):
    prompt = torch.randint(12, (2, 7), generator=torch.Generator().manual_seed(seed))
    a, la = gpt.generate(prompt, 20, top_k=5, generator=torch.Generator().manual_seed(1),
                         use_cache=True, return_logits=True)  # fmt: skip
    b, lb = gpt.generate(prompt, 20, top_k=5, generator=torch.Generator().manual_seed(1),
                         use_cache=False, return_logits=True)  # fmt: skip
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    torch.testing.assert_close(la, lb, rtol=1e-5, atol=1e-5)
    # the cached forward over a split sequence equals one full forward
    seq = torch.cat([prompt, a], 1)
    full, _ = gpt(seq)
    first, cache = gpt(seq[:, :10])
    rest, _ = gpt(seq[:, 10:], cache)
    torch.testing.assert_close(torch.cat([first, rest], 1), full, rtol=1e-5, atol=1e-5)


def test_future_tokens_do_not_change_past_logits(gpt, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(12, (1, 30), generator=g)
    y = x.clone()
    y[0, 20:] = torch.randint(12, (10,), generator=g)
    lx, _ = gpt(x)
    ly, _ = gpt(y)
    torch.testing.assert_close(lx[:, :20], ly[:, :20], rtol=0, atol=1e-6)
    assert not torch.allclose(lx[:, 20:], ly[:, 20:])


def test_top_k_sampling_stays_in_the_top_k(gpt):
    prompt = torch.zeros(64, 3, dtype=torch.int64)
    new, logits = gpt.generate(prompt, 1, top_k=3, generator=torch.Generator().manual_seed(0),
                               return_logits=True)  # fmt: skip
    top = logits[:, 0].topk(3, -1).indices
    assert (top == new).any(1).all()


def test_training_learns_a_repeating_sequence(gpt, seed):
    tokens = torch.arange(40).remainder(4)[None].repeat(8, 1)
    before = gpt.loss(tokens).item()
    train_video_model(gpt, tokens, steps=30, batch_size=8, lr=1e-2, warmup=5,
                      generator=torch.Generator().manual_seed(seed))  # fmt: skip
    assert gpt.loss(tokens).item() < 0.5 * before
    nll = gpt.token_nll(tokens[:1])
    assert nll.shape == (1, 39) and np.isfinite(nll.numpy()).all()


def test_bad_input_raises(gpt):
    with pytest.raises(ValueError, match="a context of 41 tokens"):
        gpt(torch.zeros(1, 41, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"\(B, L\) int64"):
        gpt(torch.zeros(4, dtype=torch.int64))
    with pytest.raises(ValueError, match="top_k=13"):
        gpt.generate(torch.zeros(1, 2, dtype=torch.int64), 3, top_k=13)
    with pytest.raises(ValueError, match="d_model=10"):
        VideoGPT(8, 8, d_model=10, n_heads=4)
