"""The whole pipeline of one seed, shared by the experiments: a split, a tokenizer, video models
trained on a corpus, and their evaluation on held-out episodes.

`PipelineConfig` holds every knob (geometry, tokenizer, corpus, transformer, evaluation); the
experiments subclass it. The defaults are the laptop geometry chosen in the pilots (the docs
page, "Set-up"): 16x16 frames cut into 4x4 patches by a patch-local tokenizer (16 tokens per
frame), sprites and backgrounds on the 4-px grid moving 4 px per frame (one patch), shots of 4
frames, so a 2-shot training clip and an episode ([demonstration 4 frames ; query prefix 2
frames ; 2 generated frames]) are both 128 tokens long.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.config import configclass
from iclr25.core.seeding import Rngs, torch_seed
from iclr25.papers.video_icl.baselines import evaluate_episodes, tokenizer_ceiling
from iclr25.papers.video_icl.data import (
    ACTIONS,
    SETTINGS,
    Split,
    make_corpus,
    make_episode,
)
from iclr25.papers.video_icl.method import imitate, tokenize_corpus, train_video_model
from iclr25.papers.video_icl.metrics import classify_action
from iclr25.papers.video_icl.model import VideoGPT
from iclr25.papers.video_icl.tokenizer import VQVAE, codebook_usage, train_tokenizer

CHANCE = 1.0 / len(ACTIONS)
"""Imitation accuracy of a generator that picks an action uniformly (1/6)."""


@configclass
class PipelineConfig:
    """Geometry, tokenizer, corpus, transformer and evaluation of one seed's pipeline."""

    size: Annotated[int, Range(8, None)] = 16
    """Frame side in pixels."""
    downsample: Annotated[int, Range(1, 4)] = 2
    """Tokenizer stride-2 stages: patches of 2^downsample pixels."""
    speed: Annotated[int, Range(1, None)] = 4
    """Pixels moved per frame."""
    grid: Annotated[int, Range(1, None)] = 4
    """Start positions and offsets on this pixel grid."""
    shot_len: Annotated[int, Range(3, None)] = 4
    """Frames per shot (a training clip is 2 shots; an episode's demonstration is one shot)."""
    n_prefix: Annotated[int, Range(1, None)] = 2
    """Static query frames given as context."""
    codes: Annotated[int, Range(2, None)] = 256
    """Codebook size (the transformer's vocabulary)."""
    tok_steps: Annotated[int, Range(1, None)] = 1500
    """Tokenizer Adam steps (batch 32, lr 2e-3, dead-code restart every 100)."""
    tok_videos: Annotated[int, Range(1, None)] = 300
    """Corpus-B videos whose frames train the tokenizer (training scenes only)."""
    n_videos: Annotated[int, Range(1, None)] = 20000
    """Training videos per corpus."""
    p: Annotated[float, Range(0, 1)] = 0.7
    """Corpus B: probability that the action persists across the cut."""
    d_model: Annotated[int, Range(4, None)] = 64
    """Transformer width."""
    n_layers: Annotated[int, Range(1, None)] = 4
    """Transformer depth."""
    steps: Annotated[int, Range(1, None)] = 8000
    """Transformer AdamW steps (every model of an experiment gets the same)."""
    batch_size: Annotated[int, Range(1, None)] = 16
    """Clips per step."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 2e-3
    """Peak learning rate (100 warm-up steps, cosine to 0.1 lr)."""
    n_episodes: Annotated[int, Range(1, None)] = 100
    """Held-out episodes per demonstration setting (the same queries in every setting)."""
    top_k: Annotated[int, Range(1, None)] = 5
    """Top-k sampling at generation."""

    @property
    def geometry(self) -> dict[str, int]:
        """The keyword arguments of `data.make_corpus` / `data.make_episode` for this geometry."""
        return dict(size=self.size, speed=self.speed, grid=self.grid, shot_len=self.shot_len)

    @property
    def frame_tokens(self) -> int:
        """Tokens per frame."""
        return (self.size // 2**self.downsample) ** 2


def fit_tokenizer(cfg: PipelineConfig, split: Split, rngs: Rngs) -> VQVAE:
    """A patch-local VQ-VAE trained on the frames of `cfg.tok_videos` corpus-B videos (training
    scenes only; the held-out scenes are never seen by the tokenizer)."""
    vids = make_corpus(rngs.np, cfg.tok_videos, "two_shot", p=cfg.p, split=split, **cfg.geometry)
    frames = np.concatenate([v.frames for v in vids])
    with torch_seed(rngs.int_seed()):
        vq = VQVAE(num_codes=cfg.codes, code_dim=8, hidden=64, downsample=cfg.downsample,
                   local=True)  # fmt: skip
    return train_tokenizer(vq, frames, steps=cfg.tok_steps, batch_size=32, lr=2e-3,
                           restart_every=100, generator=rngs.torch())  # fmt: skip


def fit_model(
    cfg: PipelineConfig,
    tokenizer: VQVAE,
    split: Split,
    kind: str,
    rngs: Rngs,
    *,
    p: float | None = None,
    d_model: int | None = None,
    log=None,
) -> tuple[VideoGPT, float]:
    """Train a `VideoGPT` on `cfg.n_videos` fresh videos of corpus `kind` ("two_shot": corpus B
    with persistence `p` (default `cfg.p`), "single_shot": corpus A, "pairs": the explicit-pairs
    upper bound). Returns the model and its mean training loss over the last 10 % of the logged
    steps (one in 50); `log(step, loss)` is called at each of them when given."""
    p = cfg.p if p is None else p
    vids = make_corpus(rngs.np, cfg.n_videos, kind, p=p, split=split, **cfg.geometry)
    toks = tokenize_corpus(tokenizer, vids)
    with torch_seed(rngs.int_seed()):
        model = VideoGPT(
            tokenizer.num_codes, toks.shape[1], d_model=d_model or cfg.d_model,
            n_layers=cfg.n_layers, n_heads=4, frame_tokens=cfg.frame_tokens,
        )  # fmt: skip
    losses: list[float] = []

    def record(step: int, loss: float) -> None:
        losses.append(loss)
        if log is not None:
            log(step, loss)

    train_video_model(model, toks, steps=cfg.steps, batch_size=cfg.batch_size, lr=cfg.lr,
                      warmup=min(100, cfg.steps // 10), generator=rngs.torch(),
                      log=record)  # fmt: skip
    return model, float(np.mean(losses[-max(1, len(losses) // 10) :]))


def make_episodes(cfg: PipelineConfig, split: Split, seed: int) -> dict[str, list]:
    """`cfg.n_episodes` episodes per setting; episode i has the same query (scene, start, action)
    in every setting, only the demonstration differs (paired comparisons)."""
    out: dict[str, list] = {s: [] for s in SETTINGS}
    for i in range(cfg.n_episodes):
        for s in SETTINGS:
            rng = np.random.default_rng([seed, i])
            out[s].append(make_episode(rng, s, split=split, n_prefix=cfg.n_prefix,
                                       **cfg.geometry))  # fmt: skip
    return out


def evaluate(
    cfg: PipelineConfig,
    model: VideoGPT | None,
    tokenizer: VQVAE,
    episodes: dict[str, list],
    rng: np.random.Generator,
    *,
    oracle: bool = False,
) -> dict[str, float]:
    """Scores of one generator over `episodes` (from `make_episodes`).

    Keys `"<setting>/<metric>"`: `acc` (tracked action == the demonstration's; the contrast
    setting's `acc` is the flip rate), `flip` (tracked action == the query's contrast action, in
    every setting: the contrast demonstration's flip rate against the rate without one),
    `still` (generations with no readable motion), `psnr`, `ssim`; for a model also `dnll`
    (true continuation's mean token NLL without minus with the demonstration; > 0: the
    demonstration helps), `dnll_control` (with a random-action demonstration minus with this
    one: position-matched), `pacc` (the P-Acc analogue: the demonstrated action's continuation
    is likelier than the other of {query action, contrast}; a random demonstration's episodes
    count only where its action is one of the two).
    """
    out: dict[str, float] = {}
    for setting, eps in episodes.items():
        if oracle and setting == "none":
            continue
        rows = evaluate_episodes(model, tokenizer, eps, rng, top_k=cfg.top_k, oracle=oracle)
        col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
        contra = np.array([e.contrast.actions[0] for e in eps])
        out[f"{setting}/acc"] = float(col["correct"].mean())
        out[f"{setting}/flip"] = float((col["predicted"] == contra).mean())
        out[f"{setting}/still"] = float((col["predicted"] < 0).mean())
        for k in ("psnr", "ssim")[oracle:]:  # the oracle's copies are exact: PSNR infinite
            v = col[k][~np.isnan(col[k])]
            out[f"{setting}/{k}"] = float(v.mean()) if len(v) else float("nan")
        if "nll_with" in col:
            out[f"{setting}/dnll"] = float((col["nll_without"] - col["nll_with"]).mean())
            out[f"{setting}/dnll_control"] = float((col["nll_control"] - col["nll_with"]).mean())
            # P-Acc needs the target's own continuation: the query's action or its contrast
            # (a random demonstration of a third action has neither; those episodes are left out)
            truth = col["target"] == np.array([e.action for e in eps])
            own = np.where(truth, col["nll_with"], col["nll_contrast"])
            alt = np.where(truth, col["nll_contrast"], col["nll_with"])
            ok = truth | (col["target"] == contra)
            out[f"{setting}/pacc"] = float((own < alt)[ok].mean()) if ok.any() else float("nan")
    return out


def in_shot_accuracy(
    cfg: PipelineConfig, model: VideoGPT, tokenizer: VQVAE, episodes: list, rng
) -> float:
    """Continuation within a shot (no cut, no demonstration): the query prefix plus its first
    moving frame is the context; how often the generated rest moves the same way. A model that
    cannot do this cannot imitate across a cut."""
    pre = np.stack([e.query.frames[: e.n_prefix + 1] for e in episodes])
    gens = imitate(model, tokenizer, None, pre, episodes[0].query.num_frames - pre.shape[1], rng,
                   top_k=cfg.top_k)  # fmt: skip
    ok = [classify_action(np.concatenate([p[-1:], g]), e.query.scenes[0]) == e.action
          for p, g, e in zip(pre, gens, episodes, strict=True)]  # fmt: skip
    return float(np.mean(ok))


def ceiling(tokenizer: VQVAE, episodes: list) -> dict[str, float]:
    """Tokenizer diagnostics on held-out queries: the tracker's accuracy on round-tripped true
    clips (the most any generator decoded by this tokenizer can score) and codebook usage."""
    acc = np.mean([tokenizer_ceiling(tokenizer, e) == e.target_action for e in episodes])
    toks = tokenizer.encode(np.concatenate([e.query.frames for e in episodes]))
    use = codebook_usage(toks, tokenizer.num_codes)
    return {"tokenizer/ceiling": float(acc), **{f"tokenizer/{k}": v for k, v in use.items()}}
