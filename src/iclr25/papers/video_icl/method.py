"""Video in-context learning: train on continuous clips, imitate a demonstration at inference.

Training (notes §2.2): every training video (one continuous clip, possibly containing a hard cut
between shots) is tokenised frame by frame, flattened to `T * h * w` tokens and fed to `VideoGPT`
with next-token cross-entropy. No demonstration/query pair is built and no separator token is
inserted; the context is as long as demonstration + query + generation.

Inference (notes §2.3): context = [demonstration tokens ; query prefix tokens] -> top-k sampling
of `n_frames * h * w` tokens (KV cache) -> decoded frames. The demonstration is the only task
specification.

Scoring without sampling: `continuation_nll` is the mean per-token NLL of a given continuation
after a context; delta-NLL (`metrics.delta_nll`) compares it with and without the demonstration,
and the P-Acc analogue compares the demonstrated action's continuation with the contrast action's.
"""

from __future__ import annotations

import numpy as np
import torch

from iclr25.core.checks import check_float, check_int
from iclr25.papers.video_icl.model import VideoGPT
from iclr25.papers.video_icl.tokenizer import VQVAE


def _frames(name: str, frames, size: int | None = None, allow_empty: bool = False) -> np.ndarray:
    a = np.asarray(frames, dtype=np.float32)
    if a.ndim != 4 or a.shape[-1] != 3 or (size is not None and a.shape[1:3] != (size, size)):
        raise ValueError(
            f"{name} of shape {a.shape} is not allowed: must be (T, H, W, 3)"
            + (f" with H = W = {size}" if size is not None else "")
        )
    if not allow_empty and len(a) == 0:
        raise ValueError(f"{name} has no frames: need at least one")
    return a


def tokenize_frames(tokenizer: VQVAE, frames) -> torch.Tensor:
    """Frames `(T, H, W, 3)` -> flat tokens `(T * h * w,)` int64, frames in time order, each in
    raster order."""
    a = _frames("frames", frames, allow_empty=True)
    if len(a) == 0:
        return torch.zeros(0, dtype=torch.int64)
    return tokenizer.encode(a).reshape(-1)


def tokenize_corpus(tokenizer: VQVAE, videos, batch: int = 512) -> torch.Tensor:
    """A list of equally long clips (`.frames` `(T, H, W, 3)` or arrays) -> tokens `(N, T*h*w)`."""
    arrs = [np.asarray(getattr(v, "frames", v), np.float32) for v in videos]
    if not arrs or len({a.shape for a in arrs}) != 1:
        raise ValueError("videos must be a non-empty list of clips of one shape (T, H, W, 3)")
    flat = np.concatenate(arrs)
    toks = torch.cat([tokenizer.encode(flat[i : i + batch]) for i in range(0, len(flat), batch)])
    return toks.reshape(len(arrs), -1)


def train_video_model(
    model: VideoGPT,
    tokens: torch.Tensor,
    *,
    steps: int = 1000,
    batch_size: int = 32,
    lr: float = 1e-3,
    warmup: int = 50,
    weight_decay: float = 0.0,
    generator: torch.Generator | None = None,
    log=None,
) -> VideoGPT:
    """Next-token training on continuous clips: `tokens` `(N, L)` (one row per video, L <= the
    model's max_len), AdamW with linear warm-up then cosine decay to 0.1 lr.

    `log(step, loss=...)` is called every 50 steps when given. Returns `model` (eval mode).
    """
    steps = check_int("steps", steps, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    lr = check_float("lr", lr, 0.0, low_open=True)
    warmup = check_int("warmup", warmup, 0)
    weight_decay = check_float("weight_decay", weight_decay, 0.0)
    if not torch.is_tensor(tokens) or tokens.ndim != 2 or tokens.shape[1] > model.max_len:
        raise ValueError(f"tokens of shape {tuple(getattr(tokens, 'shape', ()))} are not allowed:"
                         f" must be (N, L) with L <= max_len={model.max_len}")  # fmt: skip
    # DEVIATION: optimiser and schedule are not in the notes; AdamW, warm-up, cosine to 0.1 lr
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)

    def lr_at(s):
        if s < warmup:
            return (s + 1) / warmup
        frac = (s - warmup) / max(1, steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    for step in range(steps):
        idx = torch.randint(len(tokens), (min(batch_size, len(tokens)),), generator=generator)
        loss = model.loss(tokens[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if log is not None and step % 50 == 0:
            log(step, loss=loss.item())
    return model.eval()


def _batch(name: str, frames, size: int | None = None) -> tuple[np.ndarray, bool]:
    """`(T, H, W, 3)` (one clip) or `(N, T, H, W, 3)` (N clips of one length) -> 5-D, single?"""
    a = np.asarray(frames, dtype=np.float32)
    single = a.ndim == 4
    a = a[None] if single else a
    if a.ndim != 5 or len(a) == 0:
        raise ValueError(f"{name} of shape {np.shape(frames)} is not allowed: must be "
                         "(T, H, W, 3) or (N, T, H, W, 3) with N >= 1")  # fmt: skip
    for clip in a[:1]:
        _frames(name, clip, size)
    return a, single


def _tokens(tokenizer: VQVAE, clips: np.ndarray) -> torch.Tensor:
    """`(N, T, H, W, 3)` -> `(N, T * h * w)` tokens."""
    N, T = clips.shape[:2]
    if T == 0:
        return torch.zeros(N, 0, dtype=torch.int64)
    return tokenizer.encode(clips.reshape(N * T, *clips.shape[2:])).reshape(N, -1)


def _context(tokenizer, demo_frames, query_prefix_frames):
    q, single = _batch("query_prefix_frames", query_prefix_frames)
    parts = []
    if demo_frames is not None:
        d, d_single = _batch("demo_frames", demo_frames, q.shape[2])
        if d_single != single or len(d) != len(q):
            raise ValueError(
                f"demo_frames {np.shape(demo_frames)} and query_prefix_frames "
                f"{np.shape(query_prefix_frames)} must hold as many clips"
            )
        parts.append(_tokens(tokenizer, d))
    parts.append(_tokens(tokenizer, q))
    return torch.cat(parts, 1), q, single


def imitate(
    model: VideoGPT,
    tokenizer: VQVAE,
    demo_frames,
    query_prefix_frames,
    n_frames: int,
    rng: np.random.Generator,
    *,
    top_k: int = 5,
    use_cache: bool = True,
) -> np.ndarray:
    """In-context imitation: continue the query after watching the demonstration.

    Args:
        model: a trained `VideoGPT`.
        tokenizer: the `VQVAE` it was trained with.
        demo_frames: `(T_d, H, W, 3)` demonstration clip, or None (no demonstration); or a batch
            `(N, T_d, H, W, 3)` of N demonstrations, sampled together.
        query_prefix_frames: `(T_q, H, W, 3)` first frames of the query (or `(N, T_q, H, W, 3)`).
        n_frames: frames to generate.
        rng: numpy Generator; a torch generator is seeded from it.
        top_k: top-k sampling (k = 5 by default; greedy freezes motion).
        use_cache: KV-cache generation (False: recompute the prefix every step; same output).

    Returns:
        `(n_frames, H, W, 3)` float32 generated frames in [0, 1] (`(N, n_frames, H, W, 3)` for
        a batch).
    """
    n_frames = check_int("n_frames", n_frames, 1)
    ctx, q, single = _context(tokenizer, demo_frames, query_prefix_frames)
    f = 2**tokenizer.downsample
    h, w = q.shape[2] // f, q.shape[3] // f
    g = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
    new = model.generate(ctx, n_frames * h * w, top_k=top_k, generator=g, use_cache=use_cache)
    out = tokenizer.decode(new.reshape(-1, h, w)).reshape(len(q), n_frames, *q.shape[2:])
    return out[0] if single else out


def continuation_nll(
    model: VideoGPT, tokenizer: VQVAE, demo_frames, query_prefix_frames, continuation_frames
):
    """Mean per-token NLL (nats) of `continuation_frames` `(T_c, H, W, 3)` given
    [demonstration ; query prefix] (demonstration may be None). With batches `(N, ...)` of
    clips, an `(N,)` array of them."""
    ctx, q, single = _context(tokenizer, demo_frames, query_prefix_frames)
    c, c_single = _batch("continuation_frames", continuation_frames, q.shape[2])
    if c_single != single or len(c) != len(q):
        raise ValueError("continuation_frames must hold as many clips as query_prefix_frames")
    nll = model.token_nll(torch.cat([ctx, _tokens(tokenizer, c)], 1))
    per_clip = nll[:, ctx.shape[1] - 1 :].mean(1).numpy().astype(np.float64)
    return float(per_clip[0]) if single else per_clip
