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


def evaluate_episode(
    model: VideoGPT | None,
    tokenizer: VQVAE | None,
    episode: Episode,
    rng: np.random.Generator,
    *,
    top_k: int = 5,
    oracle: bool = False,
) -> dict[str, float]:
    """Generate the query's continuation for one episode and score it.

    Returns a dict: `predicted` (tracked action of [last prefix frame ; generation], -1 none),
    `target` (the demonstration's action, the query's own when there is none), `correct`,
    `psnr` and `ssim` against the true continuation of the query doing the target action (the
    query's own or its contrast action; NaN for a random demonstration of a third action), and
    for a model: `nll_with` and `nll_without` (true continuation of the query given
    [demo ; prefix] and given the prefix only) and `nll_contrast` (the contrast action's
    continuation given [demo ; prefix]), and `nll_control` (the true continuation given
    [control demonstration of a random action ; prefix]: the position-matched comparison).
    """
    n_gen = episode.query.num_frames - episode.n_prefix
    prefix = episode.query_prefix
    qscene = episode.query.scenes[0]
    demo = None if episode.demo is None else episode.demo.frames
    if oracle:
        if episode.demo is None:
            raise ValueError("oracle=True needs a demonstration (setting 'none' has none)")
        gen = oracle_imitate(demo, episode.demo.scenes[0], prefix, qscene, n_gen)
    else:
        gen = imitate(model, tokenizer, demo, prefix, n_gen, rng, top_k=top_k)
    pred = classify_action(np.concatenate([prefix[-1:], gen]), qscene)
    out = {"predicted": float(pred), "target": float(episode.target_action),
           "correct": float(pred == episode.target_action)}  # fmt: skip
    truth = episode.query.frames[episode.n_prefix :]
    S = truth.shape[1]
    target_truth = {
        episode.action: truth,
        episode.contrast.actions[0]: episode.contrast.frames[episode.n_prefix :],
    }
    t = target_truth.get(episode.target_action)
    out["psnr"] = psnr(gen, t) if t is not None else float("nan")
    win = min(11, S if S % 2 else S - 1)
    out["ssim"] = ssim(gen, t, win_size=win) if t is not None else float("nan")
    if model is not None and not oracle:
        cont_c = episode.contrast.frames[episode.n_prefix :]
        out["nll_with"] = continuation_nll(model, tokenizer, demo, prefix, truth)
        out["nll_without"] = continuation_nll(model, tokenizer, None, prefix, truth)
        out["nll_contrast"] = continuation_nll(model, tokenizer, demo, prefix, cont_c)
        if episode.control is not None:
            out["nll_control"] = continuation_nll(
                model, tokenizer, episode.control.frames, prefix, truth
            )
    return out


def tokenizer_ceiling(tokenizer: VQVAE, episode: Episode) -> int:
    """The tracked action of the query's *true* clip after a round trip through the tokenizer
    (`decode(encode(frames))`): the accuracy of these over episodes bounds what any generator
    decoded by this tokenizer can score (1.0 for a perfect tokenizer). Returns the action index
    (-1 for none)."""
    rec = tokenizer.decode(tokenizer.encode(episode.query.frames))
    return classify_action(rec[episode.n_prefix - 1 :], episode.query.scenes[0])
