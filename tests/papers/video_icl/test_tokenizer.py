"""VQ-VAE: straight-through gradients, codebook lookup, shapes, usage, bad input."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.video_icl import VQVAE, VectorQuantizer, codebook_usage, train_tokenizer


@pytest.fixture
def vq(seed):
    with torch_seed(seed):
        return VQVAE(num_codes=16, code_dim=4, hidden=8)


def test_straight_through_gradient_reaches_the_encoder(vq):
    x = torch.rand(2, 16, 16, 3)
    rec, out = vq(x)
    assert rec.shape == (2, 16, 16, 3) and out.tokens.shape == (2, 4, 4)
    ((rec - x) ** 2).mean().backward()  # reconstruction loss only: no commitment term
    g = vq.encoder[0].weight.grad
    assert g is not None and g.abs().sum() > 0
    # the forward value of z_q is exactly the selected code
    z_e = vq.encoder(x.permute(0, 3, 1, 2))
    q = vq.quantizer(z_e)
    e = vq.quantizer.codebook.weight[q.tokens].permute(0, 3, 1, 2)
    torch.testing.assert_close(q.z_q, e, rtol=0, atol=1e-6)


def test_codebook_lookup_is_the_nearest_code(seed):
    with torch_seed(seed):
        q = VectorQuantizer(num_codes=10, code_dim=3)
    q.codebook.weight.data = torch.randn(10, 3)
    z = torch.randn(50, 3)
    brute = torch.cdist(z, q.codebook.weight).argmin(1)
    torch.testing.assert_close(q.lookup(z), brute)
    torch.testing.assert_close(q.lookup(q.codebook.weight.data), torch.arange(10))


def test_encode_decode_shapes_and_range(vq):
    frames = np.random.default_rng(0).random((5, 16, 16, 3), dtype=np.float32)
    tok = vq.encode(frames)
    assert tok.shape == (5, 4, 4) and tok.dtype == torch.int64
    assert int(tok.min()) >= 0 and int(tok.max()) < 16
    out = vq.decode(tok)
    assert out.shape == (5, 16, 16, 3) and out.min() >= 0 and out.max() <= 1


def test_codebook_usage():
    u = codebook_usage(torch.arange(8).repeat(3), 16)
    assert u["used_fraction"] == 0.5 and u["perplexity"] == pytest.approx(8.0)
    assert codebook_usage(torch.zeros(5, dtype=torch.int64), 4)["perplexity"] == pytest.approx(1)


def test_training_lowers_the_loss_and_restarts_dead_codes(vq, seed):
    rng = np.random.default_rng(seed)
    frames = np.repeat(rng.random((4, 1, 1, 3), dtype=np.float32), 16, 1).repeat(16, 2)
    before = vq.loss(frames)[0].item()
    train_tokenizer(vq, frames, steps=40, batch_size=4, lr=1e-2, restart_every=20,
                    generator=torch.Generator().manual_seed(seed))  # fmt: skip
    after = vq.loss(frames)[0].item()
    assert after < before


@pytest.mark.parametrize("shape", [(2, 16, 16), (2, 15, 16, 3), (2, 16, 16, 4)])
def test_bad_frames_raise(vq, shape):
    with pytest.raises(ValueError, match=r"frames of shape .* must be \(T, H, W, 3\)"):
        vq.encode(np.zeros(shape, np.float32))


def test_bad_tokens_raise(vq):
    with pytest.raises(ValueError, match=r"\[0, 15\]"):
        vq.decode(torch.full((1, 4, 4), 16))
    with pytest.raises(ValueError, match="num_codes=1"):
        VQVAE(num_codes=1)


def test_local_tokenizer_codes_depend_only_on_their_patch(seed):
    with torch_seed(seed):
        vq = VQVAE(num_codes=32, code_dim=4, hidden=8, downsample=2, local=True).eval()
    x = np.random.default_rng(seed).random((1, 16, 16, 3)).astype(np.float32)
    tok = vq.encode(x)
    # rolling the frame by whole patches rolls the token grid the same way
    torch.testing.assert_close(
        vq.encode(np.roll(x, (4, -8), (1, 2))), torch.roll(tok, (1, -2), (1, 2))
    )
    # changing one patch changes at most that patch's code
    y = x.copy()
    y[0, 4:8, 8:12] = 0.5
    diff = (vq.encode(y) != tok)[0]
    assert not diff.flatten()[[i for i in range(16) if i != 1 * 4 + 2]].any()
