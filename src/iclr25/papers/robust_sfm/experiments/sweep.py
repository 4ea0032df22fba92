"""`robust_sfm.sweep`: error against the outlier rate per outlier kind, and the ablations of
the outlier threshold (0.5 / 0.6 / 0.7) and of the loss's gradient normalisation.

One RESfM, one ESFM* and one RESfM trained without the gradient normalisation are trained on
forward-path scenes (the layout where RESfM's outlier head learns within the budget: on the
ring its best checkpoint by the official rule is an untrained head, `robust_sfm.outliers`).
The curve: test scenes with outliers of one kind at each rate, RESfM and ESFM* (both fine-tuned
per scene) scored before and after the robust BA. The ablations: on the hard regime's scenes
(45 % near-miss and merge outliers), RESfM at each threshold and the RESfM trained without the
normalisation at the official threshold.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.plotting import figure_path, pyplot, save
from iclr25.papers.robust_sfm.data import OUTLIER_TYPES
from iclr25.papers.robust_sfm.protocol import (
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
from iclr25.papers.robust_sfm.tune import TUNED

LAYOUT = "forward"
"""The layout of the training and of every test scene (the hard regime's)."""

CURVE_KEYS = (
    "rot_before", "rot_after", "trans_after", "cameras_after", "f1", "precision", "recall",
)  # fmt: skip
"""The metrics of the curve's rows (the ablation rows keep every metric of `run_methods`)."""


@configclass
class SweepConfig(NetworkSetup):
    """The rate curve and the ablations on one layout's networks (see the module)."""

    lr_resfm: Annotated[float, Range(0, None, low_open=True)] = TUNED["resfm"]
    """RESfM's learning rate (`tune.TUNED`)."""
    lr_esfm: Annotated[float, Range(0, None, low_open=True)] = TUNED["esfm"]
    """ESFM*'s learning rate (`tune.TUNED`)."""
    lr_resfm_nonorm: Annotated[float, Range(0, None, low_open=True)] = TUNED["resfm_nonorm"]
    """The learning rate of RESfM without the gradient normalisation (`tune.TUNED`, tuned on
    its own equal grid)."""
    rates: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4)
    """Outlier rates of the curve (notes §4: test levels 0/10/20/30/40 %)."""
    kinds: tuple[str, ...] = OUTLIER_TYPES
    """Outlier kinds of the curve; each scene has outliers of one kind only."""
    num_curve: Annotated[int, Range(1, None)] = 2
    """Test scenes per point of the curve (kind and rate)."""
    thresholds: tuple[float, ...] = (0.5, 0.6, 0.7)
    """Outlier thresholds of the ablation (official 0.6, which the other rows use)."""
    num_hard: Annotated[int, Range(1, None)] = 3
    """Hard-regime test scenes of the ablations."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for r in self.rates:
            check(0 <= r <= 0.9, "rates", self.rates, "rates in [0, 0.9]")
        for k in self.kinds:
            check(k in OUTLIER_TYPES, "kinds", self.kinds, f"kinds of {OUTLIER_TYPES}")
        for t in self.thresholds:
            check(0 < t < 1, "thresholds", self.thresholds, "thresholds in (0, 1)")
        check(0.6 in self.thresholds, "thresholds", self.thresholds, "containing 0.6")

    def layouts(self) -> tuple[str, ...]:
        """The one layout (the tuning's interface)."""
        return (LAYOUT,)


def curve_points(cfg: SweepConfig) -> list[tuple[str, str, float]]:
    """The curve's points `(name, kind, rate)`: "r0" once (no outliers: the kind does not
    matter), then `<kind>_r<percent>` per kind and positive rate."""
    points = [("r0", OUTLIER_TYPES[0], 0.0)] if 0.0 in cfg.rates else []
    for kind in cfg.kinds:
        points += [(f"{kind}_r{round(100 * r)}", kind, r) for r in cfg.rates if r > 0]
    return points


def run(cfg: SweepConfig, ctx: RunContext) -> dict[str, float]:
    """Train the three networks, run the curve and the ablations; per point and row, the
    median over its scenes of each scene's metric (NaNs left out)."""
    metrics: dict[str, float] = {}
    nets = {}
    for name in ("resfm", "esfm", "resfm_nonorm"):
        res = train_network(cfg, LAYOUT, name, getattr(cfg, f"lr_{name}"), ctx.rngs)
        nets[name] = res.model
        metrics[f"{name}/train/seconds"] = res.seconds
        metrics[f"{name}/train/best_step"] = float(res.best_step)
    settings = cfg.settings()
    for point, kind, rate in ctx.progress(curve_points(cfg), desc="curve"):
        rng = np.random.default_rng(ctx.rngs.child(f"curve_{point}").int_seed())
        mix = tuple(float(k == kind) for k in OUTLIER_TYPES)
        acc: dict[str, dict[str, list[float]]] = {}
        for _ in range(cfg.num_curve):
            scene = cfg.scene.make(rng, LAYOUT, outlier_rate=rate, outlier_mix=mix)
            for m, row in run_methods(scene, nets, ("resfm", "esfm"), settings).items():
                accumulate(acc.setdefault(m, {}), row)
        for m, a in acc.items():
            metrics |= medians(a, f"{m}/{point}", CURVE_KEYS)
        if rate > 0:  # RESfM's F1 by kind first (the kinds' comparison)
            metrics[f"{kind}/r{round(100 * rate)}/f1"] = metrics[f"resfm/{point}/f1"]
    rows = {f"resfm_t{round(100 * t)}": ("resfm", t) for t in cfg.thresholds if t != 0.6}
    rows |= {"resfm": ("resfm", 0.6), "resfm_nonorm": ("resfm_nonorm", 0.6)}
    rng = np.random.default_rng(ctx.rngs.child("hard").int_seed())
    acc = {}
    for _ in ctx.progress(range(cfg.num_hard), desc="ablations"):
        scene = regime_scene(rng, "hard", cfg.scene)
        for row_name, (net, t) in rows.items():
            s = dataclasses.replace(settings, threshold=t)
            row = run_methods(scene, {"resfm": nets[net]}, ("resfm",), s)["resfm"]
            accumulate(acc.setdefault(row_name, {}), row)
    for m, a in acc.items():
        metrics |= medians(a, f"{m}/hard")
    return metrics


def curve_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """The curve: median rotation error (over seeds; band: min to max) against the outlier
    rate, one column per kind, before BA (top) and after the pipeline (bottom)."""
    if not results:
        return []
    plt = pyplot()
    rates = sorted(results[0].config["rates"])
    kinds = results[0].config["kinds"]
    fig, axes = plt.subplots(2, len(kinds), figsize=(3.2 * len(kinds), 5.6), squeeze=False)
    for col, kind in enumerate(kinds):
        points = [f"{kind}_r{round(100 * r)}" if r > 0 else "r0" for r in rates]
        for row, when in enumerate(("before", "after")):
            ax = axes[row][col]
            for c, (m, label) in enumerate((("resfm", "RESfM"), ("esfm", "ESFM*"))):
                vals = np.array([
                    [r.metrics.get(f"{m}/{p}/rot_{when}", np.nan) for p in points]
                    for r in results
                ], dtype=float)  # fmt: skip
                pct = [100 * r for r in rates]
                ax.plot(pct, np.nanmedian(vals, axis=0), "-o", color=f"C{c}", label=label)
                ax.fill_between(pct, np.nanmin(vals, 0), np.nanmax(vals, 0), color=f"C{c}",
                                alpha=0.15)  # fmt: skip
            ax.set_title(f"{kind.replace('_', '-')}, {when} BA", fontsize=9)
            ax.set_xlabel("outlier rate (%)")
            ax.set_ylim(0, 185)
            if col == 0:
                ax.set_ylabel("rotation error (deg)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, figure_path(out_dir, "robust_sfm.sweep", "curve"))]


PRESETS = {
    "smoke": SweepConfig(
        **SMOKE_SETUP,
        rates=(0.4,),
        num_curve=1,
        num_hard=1,
    ),
    "quick": SweepConfig(
        num_train=12,
        num_val=2,
        scene=SceneSpec(num_cameras=12, num_points=150, forward_points=300),
        steps=300,
        finetune_epochs=100,
        rates=(0.0, 0.4),
        num_curve=1,
        num_hard=1,
    ),
    "full": SweepConfig(),
}

PAPER_CURVE = (
    "not in the paper (its data are real tracks); notes §4: at 30-40 % outliers ESFM's "
    "rotation error rises to tens of degrees while RESfM stays within a few degrees before BA"
)
PAPER_KINDS = "not in the paper; notes §4: F1 high for uniform outliers, lower for near-miss"
PAPER_NORM = (
    "not ablated in the paper; the official loss normalises the gradient per point (notes §2: "
    "a backward hook that is easy to miss)"
)
PAPER_THRESHOLD = "not ablated in the paper; the official threshold is 0.6"
_QUICK = (
    "300 training steps on 12 scenes make no reconstructor: RESfM's official checkpoint is the "
    "initial weights on 2 seeds of 3 and its head flags nothing (F1 0 at every point), and "
    "every network row is 30-180 degrees off before BA"
)
_QUICK_T50 = (
    _QUICK + "; at threshold 0.5 the untrained head (P(outlier) about 0.5 everywhere) deletes "
    "so many entries that nothing is reconstructed (180 on every seed), while at 0.6 RESfM is "
    "at 70-161: the interval of 3 seeds still crosses 0"
)
EXPECT: dict[str, dict[str, object]] = {
    "resfm_below_esfm_before_ba_uniform": {
        "quick": ("inconclusive", _QUICK),
        "full": (
            "inconclusive",
            "RESfM is lower on 4 seeds of 6 (12-37 degrees against ESFM*'s 14-66): its head "
            "finds uniform outliers (F1 0.74-0.76), yet the interval of 6 seeds crosses 0",
        ),
    },
    "resfm_below_esfm_before_ba_near_miss": {
        "quick": ("inconclusive", _QUICK),
        "full": (
            "inconclusive",
            "ESFM* is lower on 5 seeds of 6 (5-27 degrees against RESfM's 12-87): the head "
            "finds few near-miss outliers (F1 0.32-0.41) and a near-miss outlier is within 30 "
            "px, so left in it costs ESFM* little, while the inliers the head deletes cut "
            "forward tracks of 3-4 views",
        ),
    },
    "resfm_below_esfm_before_ba_merge": {
        "quick": ("inconclusive", _QUICK),
        "full": "reproduced",
    },
    "f1_uniform_above_near_miss": {"quick": ("inconclusive", _QUICK), "full": "reproduced"},
    "normalisation_helps_hard": {
        "quick": (
            "inconclusive",
            _QUICK + "; on the 2 seeds where both RESfMs keep the initial weights they are the "
            "same network",
        ),
        "full": (
            "inconclusive",
            "with the normalisation RESfM is lower on 4 seeds of 6 (18-34 degrees against "
            "14-79); on one of them the network trained without it keeps its initial weights "
            "(the official accuracy rule, head F1 0)",
        ),
    },
    "threshold_06_below_05_hard": {
        "quick": ("inconclusive", _QUICK_T50),
        "full": (
            "inconclusive",
            "0.6 is lower on 4 seeds of 6 but the medians are equal (26.5 and 26.4 degrees): "
            "0.5 flags more (recall 0.53-0.58 against 0.48-0.52) at a lower precision",
        ),
    },
    "threshold_06_below_07_hard": {
        "quick": ("inconclusive", _QUICK),
        "full": (
            "inconclusive",
            "0.7 is lower on 5 seeds of 6 (14-32 degrees against 0.6's 18-34), by 0.9-4.5 "
            "degrees: the interval of 6 seeds still crosses 0",
        ),
    },
}
"""The expected verdict of every claim per preset (written after running each preset)."""


def _claim(id: str, statement: str, metric: str, control: str, paper: str, **kw) -> Claim:
    return Claim(
        id=id, statement=statement, metric=metric, treatment=kw.pop("treatment", "resfm"),
        control=control, paper_value=paper, expect=EXPECT.get(id, {}), **kw,
    )  # fmt: skip


CLAIMS = (
    *(
        _claim(
            f"resfm_below_esfm_before_ba_{kind}",
            f"With 40 % {kind.replace('_', '-')} outliers on the forward path, RESfM's network "
            "reconstruction (fine-tuned, before BA) has a lower median rotation error than "
            "ESFM*'s.",
            f"{kind}_r40/rot_before",
            "esfm",
            PAPER_CURVE,
        )
        for kind in OUTLIER_TYPES
    ),
    _claim(
        "f1_uniform_above_near_miss",
        "At 40 % outliers of one kind, RESfM's outlier F1 is higher on uniform outliers than on "
        "near-miss mismatches.",
        "r40/f1",
        "near_miss",
        PAPER_KINDS,
        treatment="uniform",
        direction="higher",
    ),
    _claim(
        "normalisation_helps_hard",
        "In the hard regime, RESfM trained with the gradient normalisation reconstructs (before "
        "BA) with a lower median rotation error than RESfM trained without it.",
        "hard/rot_before",
        "resfm_nonorm",
        PAPER_NORM,
    ),
    *(
        _claim(
            f"threshold_06_below_0{t}_hard",
            f"In the hard regime, RESfM at the official threshold 0.6 reconstructs (before BA) "
            f"with a lower median rotation error than at 0.{t}.",
            "hard/rot_before",
            f"resfm_t{t}0",
            PAPER_THRESHOLD,
        )
        for t in (5, 7)
    ),
)

METRICS = (
    *ROW_METRICS,
    Metric("*/train/seconds", "lower", "training wall time", volatile=True),
    Metric("*/seconds", "lower", "wall time per scene of the whole pipeline", volatile=True),
)

EXPERIMENT = Experiment(
    name="robust_sfm.sweep",
    summary="RESfM and ESFM* on forward-path scenes with 0-40 % outliers of one kind (uniform, "
    "near-miss, merge), and RESfM's ablations on the hard regime: outlier threshold 0.5 / 0.6 "
    "/ 0.7, training with and without the gradient normalisation.",
    config=SweepConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 6},
    extras=("sfm",),
    figures=curve_figures,
)
