"""Metrics: the exact sprite tracker, imitation accuracy, the P-Acc analogue, flip rate, delta-NLL,
PSNR and SSIM.

The paper's V-Acc and P-Acc come from a pretrained Something-Something v2 classifier applied to
generated clips (notes §3). Here the generator of the data is known, so `track_clip` reads the
sprite's position (template matching of its known colour and shape) and the background's offset
(matching against its known texture) in every frame, and `classify_action` names the motion. It is
a *stronger* stand-in for V-Acc: exact on rendered frames (tested), no classifier error. The
P-Acc analogue (`preference_accuracy`) uses the model's own likelihood: how often the demonstrated
action's true continuation has lower NLL than the contrast action's.
# DEVIATION: P-Acc in the paper is a classifier's probability of the demonstrated class; ours is a
# likelihood comparison by the generator itself. FVD, FID and LPIPS need downloaded network
# weights and are not computed (no network, ever); PSNR and a hand-written SSIM are.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from iclr25.core.checks import check_float, check_int
from iclr25.papers.video_icl.data import (
    ACTIONS,
    COLOURS,
    SPRITE_SIZE,
    Scene,
    background_texture,
    sprite_mask,
)

COLOUR_TOL = 0.3
"""A pixel belongs to the sprite when its RGB distance to the sprite's colour is below this (the
grey backgrounds are at least 0.45 away from every sprite colour)."""


def _clip(name: str, frames) -> np.ndarray:
    a = np.asarray(frames, dtype=np.float32)
    if a.ndim != 4 or a.shape[-1] != 3 or a.shape[1] != a.shape[2] or len(a) == 0:
        raise ValueError(f"{name} of shape {a.shape} is not allowed: must be (T, S, S, 3), T >= 1")
    return a


def track_sprite(frames, scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """The sprite's top-left (y, x) in each frame of `frames` `(T, S, S, 3)`, by circular template
    matching of its colour mask: score = (#sprite pixels of the template that match the colour)
    - (#non-sprite pixels of its 4x4 box that match), maximised over all S*S positions.

    Returns:
        positions `(T, 2)` int64 and scores `(T,)` as a fraction of the sprite's pixel count
        (1.0 on a clean frame).
    """
    f = _clip("frames", frames)
    colour = np.asarray(COLOURS[scene.colour], np.float32)
    m = (np.linalg.norm(f - colour, axis=-1) < COLOUR_TOL).astype(np.float32)  # (T, S, S)
    mask = sprite_mask(scene.shape)
    score = np.zeros_like(m)
    for i in range(SPRITE_SIZE):
        for j in range(SPRITE_SIZE):
            score += (1.0 if mask[i, j] else -1.0) * np.roll(m, (-i, -j), (1, 2))
    T, S = m.shape[0], m.shape[1]
    best = score.reshape(T, -1).argmax(1)
    pos = np.stack([best // S, best % S], 1).astype(np.int64)
    return pos, score.reshape(T, -1).max(1) / mask.sum()


@functools.lru_cache(maxsize=32)
def _texture_rolls(kind: str, S: int) -> np.ndarray:
    """All S*S rolls of a background texture, `(S*S, S, S)`, index a*S + b for roll (a, b)."""
    tex = background_texture(kind, S)
    rolls = np.stack([np.roll(tex, (a, b), (0, 1)) for a in range(S) for b in range(S)])
    rolls.setflags(write=False)
    return rolls


def track_background(frames, scene: Scene, sprite_pos: np.ndarray | None = None) -> np.ndarray:
    """The background texture's roll (y, x) in each frame `(T, S, S, 3)`: the offset minimising
    the squared error between the frame's grey level and the rolled known texture, over the pixels
    outside the sprite's 4x4 box at `sprite_pos` `(T, 2)` (tracked if None). Returns `(T, 2)`."""
    f = _clip("frames", frames)
    T, S = f.shape[0], f.shape[1]
    if sprite_pos is None:
        sprite_pos, _ = track_sprite(f, scene)
    grey = f.mean(-1)
    valid = np.ones((T, S, S), np.float32)
    for t in range(T):
        y, x = (int(v) for v in sprite_pos[t])
        valid[t, (y + np.arange(SPRITE_SIZE))[:, None] % S, (x + np.arange(SPRITE_SIZE)) % S] = 0
    rolls = _texture_rolls(scene.background, S)
    # sum valid * (grey - roll)^2 without the roll-independent sum valid * grey^2
    err = np.einsum("thw,khw->tk", valid, rolls**2) - 2 * np.einsum(
        "thw,khw->tk", valid * grey, rolls
    )
    best = err.argmin(1)
    return np.stack([best // S, best % S], 1).astype(np.int64)


def track_clip(frames, scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """(sprite positions `(T, 2)`, background offsets `(T, 2)`) of a clip `(T, S, S, 3)`."""
    pos, _ = track_sprite(frames, scene)
    return pos, track_background(frames, scene, pos)


def _wrap(d: np.ndarray, S: int) -> np.ndarray:
    return (d + S // 2) % S - S // 2


def step_actions(frames, scene: Scene) -> np.ndarray:
    """The action of each step t -> t+1 of a clip `(T, S, S, 3)`: `(T-1,)` ints, an index into
    `ACTIONS`, or -1 for no motion or a motion that is no action (e.g. a vertical pan).

    A step whose background moved horizontally is a pan (content moving +x: pan_left); otherwise
    the sprite's dominant displacement axis and sign give up/down/left/right.
    """
    f = _clip("frames", frames)
    S = f.shape[1]
    pos, off = track_clip(f, scene)
    ds = _wrap(np.diff(pos, axis=0), S)
    db = _wrap(np.diff(off, axis=0), S)
    out = np.full(len(ds), -1, np.int64)
    for t, (s, b) in enumerate(zip(ds, db, strict=True)):
        if b[1] != 0 and b[0] == 0:
            out[t] = ACTIONS.index("pan_left" if b[1] > 0 else "pan_right")
        elif b.any():
            out[t] = -1
        elif abs(s[0]) > abs(s[1]):
            out[t] = ACTIONS.index("down" if s[0] > 0 else "up")
        elif abs(s[1]) > abs(s[0]):
            out[t] = ACTIONS.index("right" if s[1] > 0 else "left")
    return out


def classify_action(frames, scene: Scene) -> int:
    """The action shown by a clip `(T, S, S, 3)`: the most common action among its moving steps
    (ties: the earliest), or -1 when nothing moves. Pass the last context frame first so that the
    first generated frame's motion counts."""
    steps = step_actions(frames, scene)
    steps = steps[steps >= 0]
    if len(steps) == 0:
        return -1
    counts = np.bincount(steps, minlength=len(ACTIONS))
    return int(np.flatnonzero(counts == counts.max())[0])


def _vec(name, x, kind=float) -> np.ndarray:
    a = np.asarray(x, dtype=kind)
    if a.ndim != 1 or len(a) == 0:
        raise ValueError(f"{name} of shape {a.shape} is not allowed: must be a non-empty 1-d array")
    if kind is float and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has non-finite values (NaN or inf)")
    return a


def imitation_accuracy(predicted, target) -> float:
    """Fraction of episodes whose tracked action equals the target action (`(n,)` ints)."""
    p, t = _vec("predicted", predicted, np.int64), _vec("target", target, np.int64)
    if p.shape != t.shape:
        raise ValueError(f"predicted {p.shape} and target {t.shape} must have the same shape")
    return float(np.mean(p == t))


def flip_rate(predicted, contrast) -> float:
    """Contrast flip rate: the fraction of contrast-demonstration episodes whose generation shows
    the contrast action (the demonstration's), not the query's own (`(n,)` ints each)."""
    return imitation_accuracy(predicted, contrast)


def preference_accuracy(nll_target, nll_alternative) -> float:
    """P-Acc analogue: the fraction of episodes where the target continuation's NLL is lower than
    the alternative's (ties count 1/2). `(n,)` floats each."""
    # DEVIATION: the generator's own likelihoods stand in for the paper's SSv2 classifier
    a, b = _vec("nll_target", nll_target), _vec("nll_alternative", nll_alternative)
    if a.shape != b.shape:
        raise ValueError(f"nll_target {a.shape} and nll_alternative {b.shape} must match")
    return float(np.mean((a < b) + 0.5 * (a == b)))


def delta_nll(nll_without, nll_with) -> float:
    """Mean NLL of the true continuation without the demonstration minus with it (nats/token);
    > 0 means the demonstration helps. `(n,)` floats each.

    "Without" may be no demonstration at all (the query then starts at position 0, so the two
    terms also differ in absolute position) or a random-action demonstration (position-matched,
    `Episode.control`); report both."""
    a, b = _vec("nll_without", nll_without), _vec("nll_with", nll_with)
    if a.shape != b.shape:
        raise ValueError(f"nll_without {a.shape} and nll_with {b.shape} must match")
    return float(np.mean(a - b))


def _pair(x, y):
    a, b = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if a.shape != b.shape or a.ndim < 2:
        raise ValueError(f"shapes {a.shape} and {b.shape} are not allowed: must be equal, >= 2-d")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("images have non-finite values (NaN or inf)")
    return a, b


def psnr(x, y, data_range: float = 1.0) -> float:
    """Peak signal-to-noise ratio 10 log10(R^2 / MSE) over all entries, in dB; `inf` when x == y
    (not capped)."""
    a, b = _pair(x, y)
    data_range = check_float("data_range", data_range, 0.0, low_open=True)
    mse = float(np.mean((a - b) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(data_range**2 / mse)


def _gauss(win: int, sigma: float) -> np.ndarray:
    r = np.arange(win) - (win - 1) / 2
    g = np.exp(-(r**2) / (2 * sigma**2))
    return g / g.sum()


def _filter_valid(img: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Separable 'valid' filtering of the last two axes (H, W) of `img` `(..., H, W)`."""
    w = len(g)
    H, W = img.shape[-2:]
    rows = sum(g[k] * img[..., k : H - w + 1 + k, :] for k in range(w))
    return sum(g[k] * rows[..., :, k : W - w + 1 + k] for k in range(w))


def ssim(
    x, y, data_range: float = 1.0, win_size: int = 11, sigma: float = 1.5
) -> float:  # fmt: skip
    """Structural similarity (Wang, Bovik, Sheikh, Simoncelli 2004, eq. 13) with their Gaussian
    window (11 x 11, sigma 1.5, normalised), K1 = 0.01, K2 = 0.03, over the 'valid' window
    positions, averaged over positions, channels and frames.

    Shapes: x, y `(H, W)`, `(H, W, C)` or `(T, H, W, C)`; H, W >= win_size.
    """
    a, b = _pair(x, y)
    data_range = check_float("data_range", data_range, 0.0, low_open=True)
    win_size = check_int("win_size", win_size, 1)
    sigma = check_float("sigma", sigma, 0.0, low_open=True)
    if win_size % 2 == 0:
        raise ValueError(f"win_size={win_size} is not allowed: must be odd")
    if a.ndim >= 3:  # channels last -> (..., C, H, W)
        a, b = np.moveaxis(a, -1, -3), np.moveaxis(b, -1, -3)
    if min(a.shape[-2:]) < win_size:
        raise ValueError(f"images of size {a.shape[-2:]} are smaller than win_size={win_size}")
    g = _gauss(win_size, sigma)
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    mx, my = _filter_valid(a, g), _filter_valid(b, g)
    vx = _filter_valid(a * a, g) - mx**2
    vy = _filter_valid(b * b, g) - my**2
    cxy = _filter_valid(a * b, g) - mx * my
    s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2))
    return float(s.mean())
