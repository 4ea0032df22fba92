"""Baselines that need no training of their own, and the evaluation of one episode.

- No demonstration, random demonstration, contrast demonstration: the same model and `imitate`,
  with the episode's demonstration setting (`data.make_episode(setting=...)`); `evaluate_episode`
  runs any of them.
- `oracle_imitate`: a program that tracks the demonstration's motion exactly and replays it from
  the query's last frame (an upper bound on imitation accuracy: 1.0 on clean demonstrations).
- `tokenizer_ceiling`: the tracker on the true continuation after a round trip through the
  tokenizer; the accuracy no generator decoded by that tokenizer can beat.
- The explicit-pairs upper bound is a training variant, not a function here: train `VideoGPT` with
  `method.train_video_model` on `data.make_corpus(kind="pairs")` (demonstration -> query pairs of
  the same action) instead of the continuous-clip corpus.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.checks import check_int
from iclr25.papers.video_icl.data import Episode, Scene, render_frames
from iclr25.papers.video_icl.method import continuation_nll, imitate
from iclr25.papers.video_icl.metrics import (
    _wrap,
    classify_action,
    psnr,
    ssim,
    track_clip,
)
from iclr25.papers.video_icl.model import VideoGPT
from iclr25.papers.video_icl.tokenizer import VQVAE


def oracle_imitate(
    demo_frames, demo_scene: Scene, query_prefix_frames, query_scene: Scene, n_frames: int
) -> np.ndarray:
    """Copy the tracked motion: the median per-step displacement of the demonstration's moving
    steps (sprite and background), replayed from the query's last prefix frame.

    Shapes: demo `(T_d, S, S, 3)`, query prefix `(T_q, S, S, 3)` -> `(n_frames, S, S, 3)`.
    """
    n_frames = check_int("n_frames", n_frames, 1)
    demo = np.asarray(demo_frames, np.float32)
    q = np.asarray(query_prefix_frames, np.float32)
    S = q.shape[1]
    pos, off = track_clip(demo, demo_scene)
    ds, db = _wrap(np.diff(pos, axis=0), S), _wrap(np.diff(off, axis=0), S)
    moving = (ds != 0).any(1) | (db != 0).any(1)
    step_s = np.median(ds[moving], 0).round().astype(int) if moving.any() else np.zeros(2, int)
    step_b = np.median(db[moving], 0).round().astype(int) if moving.any() else np.zeros(2, int)
    qpos, qoff = track_clip(q[-1:], query_scene)
    k = np.arange(1, n_frames + 1)[:, None]
    return render_frames(query_scene, (qpos + k * step_s) % S, (qoff + k * step_b) % S, S)


def evaluate_episodes(
    model: VideoGPT | None,
    tokenizer: VQVAE | None,
    episodes: list[Episode],
    rng: np.random.Generator,
    *,
    top_k: int = 5,
    oracle: bool = False,
) -> list[dict[str, float]]:
    """Generate each episode's query continuation and score it; episodes of one setting and
    geometry (equal context lengths) are generated and scored as one batch.

    Returns one dict per episode: `predicted` (tracked action of [last prefix frame ;
    generation], -1 none), `target` (the demonstration's action, the query's own when there is
    none), `correct`, `psnr` and `ssim` against the true continuation of the query doing the
    target action (the query's own or its contrast action; NaN for a random demonstration of a
    third action), and for a model: `nll_with` and `nll_without` (true continuation of the query
    given [demo ; prefix] and given the prefix only) and `nll_contrast` (the contrast action's
    continuation given [demo ; prefix]), and `nll_control` (the true continuation given
    [control demonstration of a random action ; prefix]: the position-matched comparison).
    """
    if not episodes:
        raise ValueError("episodes=[] is not allowed: need at least one")
    e0 = episodes[0]
    if any((e.demo is None) != (e0.demo is None) or e.n_prefix != e0.n_prefix
           or e.query.frames.shape != e0.query.frames.shape for e in episodes):  # fmt: skip
        raise ValueError("episodes must share setting, geometry and n_prefix to be batched")
    n_gen = e0.query.num_frames - e0.n_prefix
    prefix = np.stack([e.query_prefix for e in episodes])
    demo = None if e0.demo is None else np.stack([e.demo.frames for e in episodes])
    if oracle:
        if demo is None:
            raise ValueError("oracle=True needs a demonstration (setting 'none' has none)")
        gens = [oracle_imitate(e.demo.frames, e.demo.scenes[0], e.query_prefix,
                               e.query.scenes[0], n_gen) for e in episodes]  # fmt: skip
    else:
        gens = imitate(model, tokenizer, demo, prefix, n_gen, rng, top_k=top_k)
    truth = np.stack([e.query.frames[e.n_prefix :] for e in episodes])
    contrast = np.stack([e.contrast.frames[e.n_prefix :] for e in episodes])
    S = truth.shape[2]
    win = min(11, S if S % 2 else S - 1)  # SSIM window: odd, at most the frame side
    rows = []
    for i, (e, gen) in enumerate(zip(episodes, gens, strict=True)):
        qscene = e.query.scenes[0]
        pred = classify_action(np.concatenate([e.query_prefix[-1:], gen]), qscene)
        row = {"predicted": float(pred), "target": float(e.target_action),
               "correct": float(pred == e.target_action)}  # fmt: skip
        t = {e.action: truth[i], e.contrast.actions[0]: contrast[i]}.get(e.target_action)
        row["psnr"] = psnr(gen, t) if t is not None else float("nan")
        row["ssim"] = ssim(gen, t, win_size=win) if t is not None else float("nan")
        rows.append(row)
    if model is not None and not oracle:
        scores = {
            "nll_with": continuation_nll(model, tokenizer, demo, prefix, truth),
            "nll_without": continuation_nll(model, tokenizer, None, prefix, truth),
            "nll_contrast": continuation_nll(model, tokenizer, demo, prefix, contrast),
        }
        if all(e.control is not None for e in episodes):
            control = np.stack([e.control.frames for e in episodes])
            scores["nll_control"] = continuation_nll(model, tokenizer, control, prefix, truth)
        for i, row in enumerate(rows):
            row.update({k: float(v[i]) for k, v in scores.items()})
    return rows


def evaluate_episode(
    model: VideoGPT | None,
    tokenizer: VQVAE | None,
    episode: Episode,
    rng: np.random.Generator,
    *,
    top_k: int = 5,
    oracle: bool = False,
) -> dict[str, float]:
    """`evaluate_episodes` for one episode (the same keys)."""
    return evaluate_episodes(model, tokenizer, [episode], rng, top_k=top_k, oracle=oracle)[0]


def tokenizer_ceiling(tokenizer: VQVAE, episode: Episode) -> int:
    """The tracked action of the query's *true* clip after a round trip through the tokenizer
    (`decode(encode(frames))`): the accuracy of these over episodes bounds what any generator
    decoded by this tokenizer can score (1.0 for a perfect tokenizer). Returns the action index
    (-1 for none)."""
    rec = tokenizer.decode(tokenizer.encode(episode.query.frames))
    return classify_action(rec[episode.n_prefix - 1 :], episode.query.scenes[0])
