"""`robust_sfm.outliers`: the headline comparison on synthetic scenes with labelled outliers.
Train RESfM and ESFM* on the same contaminated scenes, then reconstruct test scenes of three
regimes (no outliers; 40 % of all kinds around a box; a forward path with 45 % near-miss and
merge outliers) with every network row, the oracle mask, COLMAP and GLOMAP, and score each
against the ground truth before and after the robust BA."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.robust_sfm.method import RESfMNet
from iclr25.papers.robust_sfm.protocol import (
    METHODS,
    REGIMES,
    ROW_METRICS,
    SMOKE_SETUP,
    NetworkSetup,
    SceneSpec,
    accumulate,
    medians,
    regime_scene,
    run_methods,
    train_network,
)
from iclr25.papers.robust_sfm.training import TrainResult, init_model
from iclr25.papers.robust_sfm.tune import TUNED


@configclass
class OutliersConfig(NetworkSetup):
    """Training and test of RESfM and ESFM*, and the comparison on test scenes.

    One RESfM and one ESFM* are trained per layout the regimes use ("ring" for clean and
    mixed, "forward" for hard), on scenes of that layout only. Both networks of a layout get
    the same training scenes, steps, batch and initial backbone; each its own learning rate
    (`lr_resfm`, `lr_esfm`, tuned on seeds disjoint from the claim seeds).
    """

    lr_resfm: Annotated[float, Range(0, None, low_open=True)] = TUNED["resfm"]
    """RESfM's learning rate (`tune.TUNED`)."""
    lr_esfm: Annotated[float, Range(0, None, low_open=True)] = TUNED["esfm"]
    """ESFM*'s learning rate (`tune.TUNED`)."""
    regimes: tuple[str, ...] = tuple(REGIMES)
    """Test regimes (`protocol.REGIMES`)."""
    num_test: Annotated[int, Range(1, None)] = 3
    """Test scenes per regime."""
    methods: tuple[str, ...] = METHODS
    """Rows to run (`protocol.METHODS`)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for r in self.regimes:
            check(r in REGIMES, "regimes", self.regimes, f"regimes of {tuple(REGIMES)}")
        check(len(self.regimes) > 0, "regimes", self.regimes, "non-empty")
        for m in self.methods:
            check(m in METHODS, "methods", self.methods, f"methods of {METHODS}")

    def layouts(self) -> tuple[str, ...]:
        """The layouts the regimes test on, in order (one network pair each)."""
        return tuple(dict.fromkeys(REGIMES[r]["layout"] for r in self.regimes))


def train_networks(cfg: OutliersConfig, layout: str, ctx: RunContext) -> dict[str, TrainResult]:
    """RESfM and ESFM* trained on the same scenes of `layout` from the same initial backbone
    (`protocol.train_network`): {"resfm": ..., "esfm": ...}."""
    lrs = {"resfm": cfg.lr_resfm, "esfm": cfg.lr_esfm}
    return {name: train_network(cfg, layout, name, lr, ctx.rngs) for name, lr in lrs.items()}


def _networks(results: dict[str, TrainResult], features: int) -> dict[str, RESfMNet]:
    nets = {name: r.model for name, r in results.items()}
    rep = init_model(0, features=features, outlier_head=True)
    rep.load_state_dict(results["resfm"].best_reprojection_state)
    nets["resfm_rep"] = rep
    return nets


def run(cfg: OutliersConfig, ctx: RunContext) -> dict[str, float]:
    """Train the networks of each layout, then run every method on every test scene and
    aggregate: per regime, the median over its scenes of each scene's metric (NaNs left out)."""
    metrics: dict[str, float] = {}
    nets: dict[str, dict[str, RESfMNet]] = {}
    for layout in cfg.layouts():
        results = train_networks(cfg, layout, ctx)
        for name, res in results.items():
            metrics[f"{name}/{layout}/train_seconds"] = res.seconds
            metrics[f"{name}/{layout}/best_step"] = float(res.best_step)
        metrics[f"resfm/{layout}/val_accuracy"] = results["resfm"].best_score
        metrics[f"resfm_rep/{layout}/best_step"] = float(results["resfm"].best_reprojection_step)
        nets[layout] = _networks(results, cfg.features)
    settings = cfg.settings()
    per_scene: dict[tuple[str, str], dict[str, list[float]]] = {}
    for regime in ctx.progress(cfg.regimes, desc="regimes"):
        rng = np.random.default_rng(ctx.rngs.child(f"test_{regime}").int_seed())
        for _ in range(cfg.num_test):
            scene = regime_scene(rng, regime, cfg.scene)
            rows = run_methods(scene, nets[REGIMES[regime]["layout"]], cfg.methods, settings)
            for m, row in rows.items():
                accumulate(per_scene.setdefault((m, regime), {}), row)
    for (m, regime), acc in per_scene.items():
        metrics |= medians(acc, f"{m}/{regime}")
    return metrics


PRESETS = {
    "smoke": OutliersConfig(
        **SMOKE_SETUP,
        num_test=1,
    ),
    "quick": OutliersConfig(
        num_train=12,
        num_val=2,
        scene=SceneSpec(num_cameras=12, num_points=150, forward_points=300),
        steps=300,
        regimes=("clean", "mixed"),
        num_test=2,
        finetune_epochs=100,
    ),
    "full": OutliersConfig(),
}

PAPER = (
    "RESfM is the best deep method on MegaDepth and 1DSfM and on par with COLMAP, GLOMAP and "
    "Theia; ESFM and ESFM* show large rotation errors on several scenes with outliers"
)
PAPER_CLEAN = "ESFM was designed for (almost) outlier-free tracks, where RESfM adds nothing"
PAPER_TIME = "RESfM's pipeline is faster than COLMAP on the paper's large collections"
_QUICK = (
    "300 training steps on 12 scenes make no reconstructor: on 12-camera test scenes the "
    "network rows are at 80-180 degrees before BA on 3 seeds (but one clean scene that BA "
    "rescues), and RESfM's head, at its official checkpoint, flags nothing (F1 0)"
)
_NO_HARD = "the quick preset has no hard regime (it trains no forward-path networks)"
_QUICK_TIME = (
    "RESfM's whole pipeline takes about 0.78 s per 12-camera scene against COLMAP's 0.36 s; "
    "wall time on a shared machine may leave the interval across 0"
)
_BASIN = (
    "ESFM*'s trained ring network lands 150-180 degrees off on 4 seeds of 6 (1.5 and 0.7 on "
    "the others) and fine-tuning and BA do not leave that basin, while RESfM's official "
    "checkpoint on the ring is step 0 or 100 (the head flags nothing, F1 0), a nearly "
    "untrained backbone from which fine-tuning and BA reach 0.09-0.23 degrees on clean scenes. "
    "At this budget multi-scene training learns only a coarse prior (validation reprojection "
    "flat at about 80 px from step 2,000-3,000, also with 10x the scenes or 4x the steps), "
    "which on a ring is a worse start for fine-tuning than untrained weights (the page's "
    "reading)"
)
_FULL: dict[str, tuple[object, str]] = {
    "resfm_equivalent_esfm_clean": (
        "contradicted",
        "RESfM ends at 0.09-0.23 degrees on every seed, ESFM* + BA at 177-180 on 4 seeds of 6; "
        + _BASIN,
    ),
    "resfm_below_esfm_before_ba_mixed": (
        "inconclusive",
        "RESfM is lower on 4 seeds of 6 (12-125 degrees against ESFM*'s 1.5-178); " + _BASIN,
    ),
    "resfm_below_esfm_ba_mixed": (
        "inconclusive",
        "RESfM is lower on 4 seeds of 6 (6.8-135 degrees against 0.1-178); " + _BASIN,
    ),
    "resfm_below_esfm_before_ba_hard": (
        "reproduced",
        "on the forward path RESfM's network is at 9.5-30 degrees before BA on every seed, "
        "ESFM*'s at 56-151; RESfM's forward head is trained (F1 0.54-0.58, merge recall 0.75-"
        "0.81, near-miss 0.17-0.25)",
    ),
    "resfm_below_esfm_ba_hard": (
        "inconclusive",
        "RESfM is lower on 5 seeds of 6 (9.5-25 degrees against 34-161), but on one seed its "
        "filtering leaves fewer than half the cameras (180)",
    ),
    "resfm_on_par_colmap_mixed": (
        "inconclusive",
        "COLMAP is at 0.09-0.11 degrees on every seed, RESfM at 6.8-135: far outside the 0.1 "
        "margin on every seed, but the seeds spread so widely that the interval crosses it",
    ),
    "resfm_on_par_glomap_mixed": (
        "inconclusive",
        "GLOMAP is at 0.11-43 degrees, RESfM at 6.8-135: the interval crosses the margin",
    ),
    "resfm_faster_than_colmap_mixed": (
        ("contradicted", "inconclusive"),
        "RESfM's pipeline takes 5.0-5.7 s per 20-camera scene (300 fine-tuning steps, two BAs) "
        "against COLMAP's 1.1 s on the same tracks",
    ),
}
EXPECT: dict[str, dict[str, object]] = {
    "resfm_equivalent_esfm_clean": {"quick": ("inconclusive", _QUICK)},
    "resfm_below_esfm_before_ba_mixed": {"quick": ("inconclusive", _QUICK)},
    "resfm_below_esfm_ba_mixed": {"quick": ("inconclusive", _QUICK)},
    "resfm_below_esfm_before_ba_hard": {"quick": ("inconclusive", _NO_HARD)},
    "resfm_below_esfm_ba_hard": {"quick": ("inconclusive", _NO_HARD)},
    "resfm_on_par_colmap_mixed": {
        "quick": (
            "inconclusive",
            _QUICK + "; COLMAP itself fails on 12-camera scenes with 40 % outliers on 2 seeds "
            "of 3 (90 and 180 degrees)",
        )
    },
    "resfm_on_par_glomap_mixed": {
        "quick": (
            "contradicted",
            _QUICK + "; GLOMAP ends at 17-34 degrees against RESfM's 88-106 on every seed",
        )
    },
    "resfm_faster_than_colmap_mixed": {"quick": (("contradicted", "inconclusive"), _QUICK_TIME)},
}
"""The expected verdict of every claim per preset (written after running each preset)."""
for _k, _v in EXPECT.items():
    _v["full"] = _FULL[_k]


def _claim(id: str, statement: str, metric: str, control: str, **kw) -> Claim:
    return Claim(
        id=id, statement=statement, metric=metric, treatment="resfm", control=control,
        expect=EXPECT.get(id, {}), **kw,
    )  # fmt: skip


CLAIMS = (
    _claim(
        "resfm_equivalent_esfm_clean",
        "Without outliers the full RESfM and ESFM* + BA reach the same median rotation error "
        "(within 0.05 degrees).",
        "clean/rot_after",
        "esfm",
        kind="equivalent",
        margin=0.05,
        paper_value=PAPER_CLEAN,
    ),
    _claim(
        "resfm_below_esfm_before_ba_mixed",
        "At 40 % outliers RESfM's network reconstruction (fine-tuned, before BA) has a lower "
        "median rotation error than ESFM*'s.",
        "mixed/rot_before",
        "esfm",
        paper_value=PAPER,
    ),
    _claim(
        "resfm_below_esfm_ba_mixed",
        "At 40 % outliers the full RESfM has a lower median rotation error than ESFM* + BA.",
        "mixed/rot_after",
        "esfm",
        paper_value=PAPER,
    ),
    _claim(
        "resfm_below_esfm_before_ba_hard",
        "In the hard regime (forward path, 45 % near-miss and merge outliers) RESfM's network "
        "reconstruction before BA has a lower median rotation error than ESFM*'s.",
        "hard/rot_before",
        "esfm",
        paper_value=PAPER,
    ),
    _claim(
        "resfm_below_esfm_ba_hard",
        "In the hard regime the full RESfM has a lower median rotation error than ESFM* + BA.",
        "hard/rot_after",
        "esfm",
        paper_value=PAPER,
    ),
    _claim(
        "resfm_on_par_colmap_mixed",
        "At 40 % outliers the full RESfM's median rotation error is within 0.1 degrees of "
        "COLMAP's (incremental mapping on the same tracks).",
        "mixed/rot_after",
        "colmap",
        kind="equivalent",
        margin=0.1,
        paper_value=PAPER,
    ),
    _claim(
        "resfm_on_par_glomap_mixed",
        "At 40 % outliers the full RESfM's median rotation error is within 0.1 degrees of "
        "GLOMAP's (global mapping on the same tracks).",
        "mixed/rot_after",
        "glomap",
        kind="equivalent",
        margin=0.1,
        paper_value=PAPER,
    ),
    _claim(
        "resfm_faster_than_colmap_mixed",
        "At 40 % outliers the whole RESfM pipeline (prediction, fine-tuning, both BAs) takes "
        "less wall time per scene than COLMAP's (database, verification, mapping).",
        "mixed/seconds",
        "colmap",
        paper_value=PAPER_TIME,
    ),
)

METRICS = (
    *ROW_METRICS,
    Metric(
        "*/val_accuracy",
        "higher",
        "RESfM's validation outlier accuracy at its best "
        "checkpoint (1 - outlier rate when it flags nothing)",
    ),
    Metric("*/train_seconds", "lower", "training wall time", volatile=True),
    Metric(
        "*/seconds", "lower", "wall time per scene of the whole pipeline or mapper", volatile=True
    ),
)

EXPERIMENT = Experiment(
    name="robust_sfm.outliers",
    summary="RESfM against ESFM*, the oracle mask, COLMAP and GLOMAP on synthetic scenes with "
    "labelled outliers (none; 40 % of three kinds; a forward path with 45 % hard outliers), "
    "median rotation error before and after the robust BA.",
    config=OutliersConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 6},
    extras=("sfm",),
)
