"""RESfM's (and ESFM's) supervised training over many scenes (notes §2 "Training"; ground check
§1.4): camera-block sampling, Adam with a MultiStepLR schedule, validation on held-out scenes
and the best checkpoint.

    >>> net = init_model(seed=0, features=64)
    >>> result = train(net, train_scenes, val_scenes, TrainConfig(steps=3000), rng)
    >>> result.model          # the same module, with the best checkpoint's weights loaded

Each step draws `batch_size` training scenes and, from each, a contiguous block of its
cameras (10-20 % of them, at most 100; 40-100 % when the scene has fewer than 50 cameras),
keeps the tracks with more than 2 views inside the block, and takes one Adam step on the mean
of the per-scene losses: `resfm_loss` (1.0 x outlier-weighted reprojection + 0.1 x balanced
BCE) for RESfM, the plain reprojection loss for ESFM.

Determinism: with one torch thread, the same model initialisation and the same `rng` give
the same weights (the test suite checks it); the runner owns the thread count.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from iclr25.core.checks import check_float, check_int
from iclr25.papers.robust_sfm.data import Scene
from iclr25.papers.robust_sfm.method import RESfMNet, reprojection_loss, resfm_loss

__all__ = [
    "Batch",
    "TrainConfig",
    "TrainResult",
    "batch_loss",
    "camera_block",
    "capped_reprojection",
    "evaluate",
    "init_model",
    "sample_block",
    "train",
]


@dataclass(frozen=True)
class TrainConfig:
    """Training settings; defaults are the official ones except where marked.

    Attributes:
        steps: Adam steps (the budget). An official epoch is one pass over the 27 training
            scenes in batches of 4 (7 steps), 20k epochs in all; experiments set their own.
        batch_size: scenes per step (4).
        lr: Adam's learning rate (1e-3).
        gamma: MultiStepLR factor (0.9).
        milestone_start, milestone_every: the schedule's milestones as fractions of `steps`.
        block_fraction: (low, high) fraction of a scene's cameras per block (0.1, 0.2).
        small_block_fraction: the same for scenes with fewer than `small_scene` cameras
            (0.4, 1.0).
        small_scene: the camera count below which `small_block_fraction` applies (50).
        max_block: at most this many cameras per block (100).
        min_block: at least this many cameras per block (3).
        min_track_views: tracks need more than 2 views inside the block (3).
        w_reprojection, w_classification: loss weights (1.0, 0.1).
        hinge: the loss's depth hinge (1e-3).
        normalize_grad: the loss's gradient-normalisation hook (True).
        threshold: P(outlier) above which an entry counts as an outlier in validation (0.6).
        validate_every: steps between validations (the last step is always validated).
    """

    steps: int = 140_000
    batch_size: int = 4
    lr: float = 1e-3
    gamma: float = 0.9
    # DEVIATION: the official milestones are epochs 10k, 11k, ..., 20k of 20k; with a step
    # budget instead of epochs they are kept as fractions: from 50 % of the steps, every 5 %.
    milestone_start: float = 0.5
    milestone_every: float = 0.05
    block_fraction: tuple[float, float] = (0.1, 0.2)
    small_block_fraction: tuple[float, float] = (0.4, 1.0)
    small_scene: int = 50
    max_block: int = 100
    # DEVIATION: a block needs >= 3 cameras for tracks of > 2 views to exist at all (the notes
    # give no lower bound).
    min_block: int = 3
    min_track_views: int = 3
    w_reprojection: float = 1.0
    w_classification: float = 0.1
    hinge: float = 1e-3
    normalize_grad: bool = True
    threshold: float = 0.6
    # DEVIATION: the official validation period could not be read; every 100 steps.
    validate_every: int = 100

    def __post_init__(self) -> None:
        check_int("steps", self.steps, 1)
        check_int("batch_size", self.batch_size, 1)
        check_float("lr", self.lr, 0, None, low_open=True)
        check_float("gamma", self.gamma, 0, 1, low_open=True)
        check_float("milestone_start", self.milestone_start, 0, 1)
        check_float("milestone_every", self.milestone_every, 0, 1, low_open=True)
        for name in ("block_fraction", "small_block_fraction"):
            lo, hi = getattr(self, name)
            check_float(f"{name}[0]", lo, 0, 1, low_open=True)
            check_float(f"{name}[1]", hi, lo, 1)
        check_int("small_scene", self.small_scene, 0)
        check_int("min_block", self.min_block, 1)
        check_int("max_block", self.max_block, self.min_block)
        check_int("min_track_views", self.min_track_views, 1)
        check_float("w_reprojection", self.w_reprojection, 0)
        check_float("w_classification", self.w_classification, 0)
        check_float("hinge", self.hinge, 0, None, low_open=True)
        check_float("threshold", self.threshold, 0, 1)
        check_int("validate_every", self.validate_every, 1)

    def milestones(self) -> list[int]:
        """The MultiStepLR milestones, in steps."""
        out, f = [], self.milestone_start
        while f < 1.0 - 1e-9:
            s = round(f * self.steps)
            if s > 0 and (not out or s > out[-1]):
                out.append(s)
            f += self.milestone_every
        return out


@dataclass
class Batch:
    """One training sample: a camera block of a scene, with local indices.

    Attributes:
        xy: normalised coordinates of the entries, (E, 2).
        cam, track: local camera and track indices, (E,).
        is_outlier: labels, (E,) bool, or None.
        num_cameras, num_tracks: local counts (every camera and track has an entry).
        cameras: the block's cameras in the source scene, (k,).
    """

    xy: np.ndarray
    cam: np.ndarray
    track: np.ndarray
    is_outlier: np.ndarray | None
    num_cameras: int
    num_tracks: int
    cameras: np.ndarray


@dataclass
class TrainResult:
    """The outcome of `train`.

    Attributes:
        model: the trained module, with the best checkpoint's weights loaded.
        best_step: the step count of the best checkpoint (0: the initial weights).
        best_score: its validation score (accuracy for RESfM, `capped_reprojection` for ESFM).
        history: one dict per validation: step, val_accuracy (RESfM), val_reprojection,
            train_loss (mean since the last validation), lr.
        losses: the training loss of every step, (steps,).
        seconds: wall time.
        best_reprojection_state: RESfM only: the weights (a state dict) of the validated
            checkpoint with the lowest validation reprojection error, ESFM's rule (a variant of
            the official accuracy rule; `load_state_dict` it into a copy of `model`).
        best_reprojection_step: its step.
    """

    model: RESfMNet
    best_step: int
    best_score: float
    history: list[dict[str, float]] = field(default_factory=list)
    losses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    seconds: float = 0.0
    best_reprojection_state: dict | None = None
    best_reprojection_step: int | None = None


def init_model(seed: int, **kwargs) -> RESfMNet:
    """A `RESfMNet(**kwargs)` whose initial weights depend only on `seed` (the global torch RNG
    is forked and restored, so nothing else is disturbed)."""
    seed = check_int("seed", seed, 0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return RESfMNet(**kwargs)


def camera_block(rng: np.random.Generator, num_cameras: int, cfg: TrainConfig) -> np.ndarray:
    """A contiguous block of camera indices (official camera-subset sampling).

    Its size is a uniform fraction of `num_cameras` in `cfg.block_fraction` (in
    `cfg.small_block_fraction` below `cfg.small_scene` cameras), rounded, clipped to
    [`min_block`, `max_block`] and to the scene; its start is uniform.

    # DEVIATION: blocks do not wrap around the end of the camera order (the notes do not say).

    Shapes:
        -> (k,) int64, consecutive
    """
    m = check_int("num_cameras", num_cameras, 1)
    lo, hi = cfg.small_block_fraction if m < cfg.small_scene else cfg.block_fraction
    k = round(rng.uniform(lo, hi) * m)
    k = min(max(k, cfg.min_block), cfg.max_block, m)
    start = int(rng.integers(0, m - k + 1))
    return np.arange(start, start + k, dtype=np.int64)


def _batch(scene: Scene, cameras: np.ndarray, min_track_views: int) -> Batch | None:
    """The sub-scene of `cameras`, tracks with >= min_track_views views in it; None if empty."""
    inside = np.zeros(scene.num_cameras, bool)
    inside[cameras] = True
    keep = inside[scene.cam]
    views = np.bincount(scene.track[keep], minlength=scene.num_tracks)
    keep &= views[scene.track] >= min_track_views
    if not keep.any():
        return None
    cams, cam = np.unique(scene.cam[keep], return_inverse=True)
    tracks, track = np.unique(scene.track[keep], return_inverse=True)
    y = None if scene.is_outlier is None else scene.is_outlier[keep]
    return Batch(
        xy=scene.normalized_uv()[keep], cam=cam, track=track, is_outlier=y,
        num_cameras=len(cams), num_tracks=len(tracks), cameras=cams,
    )  # fmt: skip


def sample_block(
    rng: np.random.Generator, scene: Scene, cfg: TrainConfig, *, tries: int = 10
) -> Batch | None:
    """A training sample from `scene`: a camera block and its tracks with > 2 views in it.

    Blocks with no such track are redrawn up to `tries` times; None if all fail.
    """
    for _ in range(check_int("tries", tries, 1)):
        b = _batch(scene, camera_block(rng, scene.num_cameras, cfg), cfg.min_track_views)
        if b is not None:
            return b
    return None


def _full(scene: Scene) -> Batch:
    b = _batch(scene, np.arange(scene.num_cameras), 1)
    if b is None:
        raise ValueError("a validation scene has no entries")
    return b


def batch_loss(model: RESfMNet, b: Batch, cfg: TrainConfig) -> torch.Tensor:
    """The training loss of one sample: `resfm_loss` with `cfg`'s weights for RESfM, the plain
    reprojection loss for ESFM (a scalar tensor with gradient)."""
    dtype = next(model.parameters()).dtype
    xy = torch.as_tensor(b.xy, dtype=dtype)
    cam, track = torch.as_tensor(b.cam), torch.as_tensor(b.track)
    out = model(xy, cam, track, b.num_cameras, b.num_tracks)
    if model.outlier_head is not None:
        if b.is_outlier is None:
            raise ValueError("RESfM training needs outlier labels: a scene has is_outlier=None")
        loss, _ = resfm_loss(
            out, xy, cam, track, torch.as_tensor(b.is_outlier),
            w_reprojection=cfg.w_reprojection, w_classification=cfg.w_classification,
            hinge=cfg.hinge, normalize_grad=cfg.normalize_grad,
        )  # fmt: skip
        return loss
    return cfg.w_reprojection * reprojection_loss(
        out.R, out.t, out.X, xy, cam, track, hinge=cfg.hinge, normalize_grad=cfg.normalize_grad
    )


def capped_reprojection(
    R: torch.Tensor,
    t: torch.Tensor,
    X: torch.Tensor,
    xy: torch.Tensor,
    cam: torch.Tensor,
    track: torch.Tensor,
    *,
    cap: float = 1.0,
    hinge: float = 1e-3,
) -> float:
    """The validation error of a reconstruction: the mean over entries of the reprojection
    error in normalised coordinates, capped at `cap`, with `cap` for an entry whose point is
    not in front of its camera (depth <= `hinge`).

    # DEVIATION: validation does not use the training loss itself, where the hinge (hinge -
    # depth) replaces the error behind a camera: a degenerate network that puts every point
    # just behind its cameras then scores about 0.04, better than a trained one (measured:
    # ESFM*'s best checkpoint was the initial weights on one tuning seed). The official
    # validation metric could not be read.

    Shapes:
        R: (m, 3, 3), t: (m, 3), X: (n, 3), xy: (E, 2), cam, track: (E,) -> float
    """
    with torch.no_grad():
        p = torch.einsum("eij,ej->ei", R[cam], X[track]) + t[cam]
        depth = p[:, 2]
        front = depth > hinge
        safe = torch.where(front, depth, torch.ones_like(depth))
        err = torch.linalg.vector_norm(p[:, :2] / safe[:, None] - xy, dim=1).clamp(max=cap)
        err = torch.where(front, err, torch.full_like(err, cap))
    return float(err.mean()) if len(err) else 0.0


def evaluate(model: RESfMNet, scenes: Sequence[Scene], threshold: float = 0.6) -> dict[str, float]:
    """Validation metrics over whole scenes (no gradient).

    Returns:
        `reprojection`: mean over scenes of `capped_reprojection`; with an outlier head and
        labels,
        `accuracy`: the fraction of all entries (pooled) whose label w > threshold gets right.
    """
    threshold = check_float("threshold", threshold, 0, 1)
    if not scenes:
        raise ValueError("scenes is empty: evaluate needs at least one scene")
    was = model.training
    model.eval()
    rep, right, total = [], 0, 0
    dtype = next(model.parameters()).dtype
    with torch.no_grad():
        for s in scenes:
            b = _full(s)
            xy = torch.as_tensor(b.xy, dtype=dtype)
            cam, track = torch.as_tensor(b.cam), torch.as_tensor(b.track)
            out = model(xy, cam, track, b.num_cameras, b.num_tracks)
            rep.append(capped_reprojection(out.R, out.t, out.X, xy, cam, track))
            if out.outlier_logit is not None and b.is_outlier is not None:
                pred = torch.sigmoid(out.outlier_logit).double().numpy() > threshold
                right += int(np.sum(pred == b.is_outlier))
                total += len(pred)
    model.train(was)
    res = {"reprojection": float(np.mean(rep))}
    if total:
        res["accuracy"] = right / total
    return res


def train(
    model: RESfMNet,
    train_scenes: Sequence[Scene],
    val_scenes: Sequence[Scene],
    cfg: TrainConfig,
    rng: np.random.Generator,
) -> TrainResult:
    """Train `model` in place and load its best checkpoint.

    The best checkpoint is the validated one with the highest validation outlier accuracy
    (RESfM, official; ties go to the lower validation reprojection error) or the lowest
    validation reprojection error (ESFM; it has no classifier); remaining ties keep the earlier
    one. The initial weights are validated too (step 0).

    Args:
        model: a `RESfMNet` (with or without the outlier head).
        train_scenes: scenes with outlier labels (RESfM) sampled uniformly with replacement.
        val_scenes: held-out scenes, evaluated whole.
        cfg: `TrainConfig`.
        rng: the only randomness (scene and block draws).
    """
    if not train_scenes:
        raise ValueError("train_scenes is empty: training needs at least one scene")
    if not val_scenes:
        raise ValueError("val_scenes is empty: best-checkpoint selection needs held-out scenes")
    t0 = time.perf_counter()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=cfg.lr)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=cfg.milestones(), gamma=cfg.gamma)
    resfm = model.outlier_head is not None

    # DEVIATION: ties in validation accuracy go to the lower validation reprojection error (the
    # official tie rule could not be read); at small budgets the head flags nothing for many
    # validations, so the accuracy sits at 1 - outlier rate and a first-wins rule would keep
    # the initial weights.
    def score(metrics: dict[str, float]) -> tuple[float, ...]:  # higher is better
        if resfm:
            return (metrics["accuracy"], -metrics["reprojection"])
        return (-metrics["reprojection"],)

    model.train()
    history: list[dict[str, float]] = []
    metrics = evaluate(model, val_scenes, cfg.threshold)
    if resfm and "accuracy" not in metrics:
        raise ValueError("RESfM validation needs outlier labels: a val scene has is_outlier=None")
    best = (score(metrics), 0, copy.deepcopy(model.state_dict()))
    best_rep = (metrics["reprojection"], 0, best[2])
    history.append({"step": 0, **_prefix(metrics), "lr": cfg.lr})
    losses = np.empty(cfg.steps)
    since = 0
    for step in range(1, cfg.steps + 1):
        batch = []
        for i in rng.integers(0, len(train_scenes), cfg.batch_size):
            b = sample_block(rng, train_scenes[int(i)], cfg)
            if b is not None:
                batch.append(b)
        if not batch:
            raise ValueError("no camera block with a track of > 2 views in this step's scenes")
        # DEVIATION: the batch loss is the mean of the per-scene losses (scenes have different
        # sizes; the official reduction over a batch could not be read)
        loss = torch.stack([batch_loss(model, b, cfg) for b in batch]).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses[step - 1] = float(loss.detach())
        if step % cfg.validate_every == 0 or step == cfg.steps:
            metrics = evaluate(model, val_scenes, cfg.threshold)
            history.append({
                "step": step, **_prefix(metrics),
                "train_loss": float(np.mean(losses[since:step])),
                "lr": opt.param_groups[0]["lr"],
            })  # fmt: skip
            since = step
            if score(metrics) > best[0]:
                best = (score(metrics), step, copy.deepcopy(model.state_dict()))
            if resfm and metrics["reprojection"] < best_rep[0]:
                best_rep = (metrics["reprojection"], step, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    best_score = best[0][0] if resfm else -best[0][0]
    return TrainResult(
        model=model, best_step=best[1], best_score=best_score, history=history,
        losses=losses, seconds=time.perf_counter() - t0,
        best_reprojection_state=best_rep[2] if resfm else None,
        best_reprojection_step=best_rep[1] if resfm else None,
    )  # fmt: skip


def _prefix(metrics: dict[str, float]) -> dict[str, float]:
    return {f"val_{k}": v for k, v in metrics.items()}
