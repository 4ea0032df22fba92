"""`flashmask.speed`: wall time and peak memory of FlashMask (the fused numba CPU kernel; the
gather backend timed beside it) against dense-mask `scaled_dot_product_attention` over sequence
lengths and four masks (causal-document, shared question, sliding window, global + sliding
window), FlexAttention (compiled) at the claim point (at every point in the full preset), and
FlashMask alone at a length where the dense mask no longer fits the memory cap. Every call is
made once untimed first, so numba's and Flex's compilation stay outside the timings."""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np

from iclr25.core.bench import interleaved_medians, peak_bytes
from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.flashmask import plots
from iclr25.papers.flashmask.baselines import (
    dense_mask_attention,
    flex_attention,
    flex_sweep,
    to_flex_block_mask,
)
from iclr25.papers.flashmask.data import BENCH_KINDS, MASK_KINDS, make_mask, random_qkv
from iclr25.papers.flashmask.method import flashmask_attention, tile_stats

MB = 2.0**20  # bytes per MiB

Positive = Annotated[int, Range(1, None)]


# DEVIATION: the paper measures kernel TFLOP/s on an A100 (bf16, D 64/128, 8K-128K) and
# end-to-end LLM training; we time the float32 forward on one CPU thread (D 64, 4 heads, N up to
# 16K) against dense-mask SDPA and compiled FlexAttention on CPU. The GPU comparison is prepared
# in benchmarks/gpu_check_flashmask.py but was not run (no accelerator for this task).
# DEVIATION: document, question and answer lengths are random per seed (Dirichlet(2) shares of
# N), not fixed; the global + sliding-window mask is bidirectional with window/2 keys on each
# side and 128 global tokens (the paper's figure gives no sizes).
@configclass
class SpeedConfig:
    """CPU forward timing and memory of FlashMask against dense-mask attention and Flex."""

    ns: Annotated[tuple[int, ...], Range(16, None)] = (1024, 2048, 4096, 8192, 16384)
    """Sequence lengths of the sweep (every mask kind)."""
    kinds: tuple[str, ...] = BENCH_KINDS
    """Mask kinds of the sweep."""
    heads: Positive = 4
    """Attention heads H (batch 1, the mask broadcast over heads)."""
    dim: Positive = 64
    """Head dimension D."""
    docs: Positive = 8
    """Documents of the causal-document mask (and samples/blocks of the others)."""
    window: Annotated[int, Range(0, None)] = 512
    """Sliding window (keys before the query); global + sliding uses window/2 on each side."""
    num_global: Annotated[int, Range(0, None)] = 128
    """Global tokens of the global + sliding-window mask."""
    block: Positive = 128
    """Tile size of FlashMask (query and key) and FlexAttention's block size."""
    backend: Literal["numba", "gather"] = "numba"
    """FlashMask's CPU backend whose times the claims judge (`flashmask/*`)."""
    compare_backends: bool = True
    """Also time the other CPU backend at every point (`gather/*` or `numba/*`)."""
    flex_sweep: bool = False
    """Time compiled FlexAttention at every sweep point, not only at the claim point."""
    reps: Positive = 3
    """Timed rounds per point (the median is reported)."""
    claim_n: Positive = 8192
    """Length of the speed claims (causal-document mask, with FlexAttention)."""
    flex_compiled: bool = True
    """Time FlexAttention compiled (first call compiles, untimed) at the claim point; False
    times eager Flex, which builds the full score matrix (smoke only)."""
    cap_mb: Annotated[float, Range(0, None, low_open=True)] = 128.0
    """Memory cap: the dense mask (N^2 bytes) is not built when it exceeds this."""
    cap_n: Positive = 16384
    """Length at which FlashMask's peak memory is checked against the cap."""
    slope_min_n: Positive = 2048
    """Smallest N used to fit time against active tiles (below it fixed costs dominate)."""

    def __post_init__(self) -> None:
        check(len(self.ns) >= 1, "ns", self.ns, "at least one length")
        check(
            len(self.kinds) >= 1 and set(self.kinds) <= set(MASK_KINDS),
            "kinds",
            self.kinds,
            f"a non-empty subset of {MASK_KINDS}",
        )
        check(
            self.cap_n**2 / MB > self.cap_mb,
            "cap_n",
            self.cap_n,
            f"a length whose dense mask (cap_n^2 bytes) exceeds cap_mb={self.cap_mb}",
        )


PRESETS = {
    # smoke: the gather backend (numba's first compilation alone takes seconds)
    "smoke": SpeedConfig(
        backend="gather",
        compare_backends=False,
        ns=(128,),
        reps=1,
        claim_n=256,
        flex_compiled=False,
        cap_mb=0.125,
        cap_n=512,
        slope_min_n=128,
    ),
    # quick: the gather backend is not timed (its 16K cap point alone took ~17 s of the budget)
    "quick": SpeedConfig(ns=(1024, 2048), reps=3, slope_min_n=1024, compare_backends=False),
    "full": SpeedConfig(flex_sweep=True),
}

CLAIMS = (
    Claim(
        id="faster_than_dense",
        statement="At N = 8K with a causal-document mask (8 documents), FlashMask's forward is at "
        "least 5x faster than dense-mask scaled_dot_product_attention on CPU.",
        metric="speedup_at_claim",
        treatment="flashmask_vs_dense",
        control=5.0,
        direction="higher",
        paper_value="end-to-end 1.65x-3.22x over FlashAttention with a dense mask (A100, LLM "
        "training); kernel speedup grows with sparsity",
        expect={
            "quick": (
                ("reproduced", "inconclusive"),
                "Either verdict, by machine load. Measured with the numba backend on an AMD "
                "EPYC with AVX-512 (torch's CPU capability AVX512), same point and masks as "
                "full seeds 0-2: 7.8x (seeds one at a time, load 1.3), 7.5x and 7.7x (two at a "
                "time), each interval above 5 (e.g. [5.6, 9.8]); the older gather backend "
                "gave 4.5-4.8x here. A loaded machine widens the interval.",
            ),
            "full": (
                "reproduced",
                "measured (5 seeds one at a time on an otherwise idle AMD EPYC with AVX-512, "
                "one thread, numba backend): 8.0x (7.6x to 8.2x per seed; 95% t interval of "
                "the difference [2.68, 3.32]). About 11% of the tiles are active, so an ideal "
                "tile-skipping kernel would be ~9x faster; the rest is the per-tile softmax and "
                "mask work and the tiled copies of q, k, v. The gather backend, timed beside it, "
                "gave 4.8x (4.3x to 5.3x; 4.14x in its earlier full run on another machine).",
            ),
        },
    ),
    Claim(
        id="no_slower_than_flex",
        statement="At the same point FlashMask is no slower than compiled FlexAttention "
        "(time ratio below 1).",
        metric="time_ratio_at_claim",
        treatment="flashmask_vs_flex",
        control=1.0,
        direction="lower",
        paper_value="+12.1% to +60.7% kernel TFLOP/s over FlexAttention (A100, 8K-128K)",
        expect={
            "quick": (
                ("reproduced", "inconclusive"),
                "Either verdict, by machine load. Measured with the numba backend (BLAS tile "
                "products) on an AMD EPYC with AVX-512 (torch's CPU capability AVX512): time "
                "ratio 0.82, 0.87 and 0.84 in three quick runs (one or two seeds at a time, "
                "load 1-1.7; intervals up to [0.69, 0.98]). The older gather backend was "
                "faster than Flex on AVX2 machines (0.76) but slower on this one (1.30-1.50), "
                "so a CPU without AVX-512 is not measured for the numba backend.",
            ),
            "quick@avx512-amd-26": (
                ("contradicted", "inconclusive"),
                "On an AMD EPYC of family 26 (Zen 5; the plain expectation was measured on an "
                "earlier EPYC with the same AVX-512 capability) the numba kernel is slower than "
                "compiled Flex at quick: time ratio 1.13-1.19 in five quick runs (two alone on "
                "an idle machine, three inside make test; every interval above 1, e.g. [1.09, "
                "1.18] and [1.12, 1.23]). Inconclusive too where machine load widens the "
                "interval. Not investigated which of the two kernels the newer core favours.",
            ),
            "full": (
                ("reproduced", "inconclusive"),
                "Either verdict, by machine load: measured (5 seeds one at a time on an "
                "otherwise idle AMD EPYC with AVX-512, one thread, numba backend) 0.871x "
                "compiled Flex's time (0.862x to 0.888x per seed; 95% t interval of the "
                "difference [-0.141, -0.117]); both skip the same tiles and call vectorised tile "
                "products. The gather backend, timed beside it, took 1.44x Flex's time (1.05x in "
                "its earlier full run on another machine). The paper's +12-61% is its CUDA "
                "kernel against Flex's Triton kernel on an A100, which this task could not "
                "measure.",
            ),
        },
    ),
    Claim(
        id="time_tracks_active_tiles",
        statement="FlashMask's time grows in proportion to the number of active tiles: slope 1 "
        "(within ±0.25) of log time against log active tiles over every measured mask and N "
        "(N >= 2K at full, >= 1K at quick).",
        metric="time_vs_active_tiles_slope",
        treatment="flashmask",
        control=1.0,
        kind="equivalent",
        margin=0.25,
        paper_value="latency linear in 1 - ρ, the block sparsity (synthetic-sparsity study)",
        expect={
            "quick": (
                ("inconclusive", "reproduced"),
                "Either verdict, by timing noise. At quick the fit also uses N = 1K, where "
                "fixed costs weigh more. Numba backend, AVX-512 machine: slopes 0.89, 0.94, "
                "0.91 with the seeds run one at a time (reproduced), 0.65, 0.73, 0.90 and "
                "0.66, 0.68, 0.94 two at a time (inconclusive: with 3 seeds the 95% t "
                "interval, t = 4.30, spans about ±0.35 and crosses the ±0.25 margin).",
            ),
            "full": (
                ("reproduced", "inconclusive"),
                "Either verdict, by timing noise: slope 0.95 (5 seeds one at a time on an "
                "otherwise idle AMD EPYC with AVX-512, numba backend; 0.92 to 0.97 per seed; "
                "95% t interval of the difference [-0.073, -0.027], inside the ±0.25 margin): time "
                "follows the active tiles closely, slightly sublinearly, because fixed costs "
                "(classification, the tiled copies) weigh more at small N. Compiled Flex's "
                "slope is about the same (0.94-1.00), dense SDPA's 1.1-1.3 (it computes all "
                "N^2 scores whatever the mask).",
            ),
        },
    ),
    Claim(
        id="fits_memory_cap",
        statement="At N = 16K, where the dense boolean mask alone (256 MiB) exceeds the 128 MiB "
        "cap, FlashMask's peak working memory stays below the cap.",
        metric="peak_mb_at_cap",
        treatment="flashmask",
        control=128.0,
        direction="lower",
        paper_value="dense-mask FA runs out of memory at long lengths; FlashMask reaches 128K "
        "tokens",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
)

METRICS = (
    Metric("flashmask/active_frac_*", "none", "fraction of (query tile, key tile) pairs computed"),
    Metric("*/mask_mb_*", "lower", "MiB of the mask: 16N bytes for FlashMask, N^2 dense"),
    Metric("*/ms_*", "lower", "median forward milliseconds at one (mask, N)", volatile=True),
    Metric(
        "*/peak_mb_*",
        "lower",
        "peak MiB of torch CPU memory allocated during one forward (output included; the "
        "numba backend's per-task scratch tiles, about 5 tiles per thread, are numba's "
        "allocations and not counted)",
    ),
    Metric("flashmask/peak_mb_at_cap", "lower", "FlashMask's peak MiB at the cap length"),
    Metric("dense/mask_mb_at_cap", "none", "MiB the dense mask would need at the cap length"),
    Metric(
        "flashmask_vs_dense/speedup_*",
        "higher",
        "dense-mask SDPA time over FlashMask time",
        volatile=True,
    ),
    Metric(
        "flashmask_vs_flex/time_ratio_*",
        "lower",
        "FlashMask time over compiled FlexAttention time",
        volatile=True,
    ),
    Metric(
        "*/time_vs_active_tiles_slope",
        "none",
        "slope of log time against log active tiles (1 = proportional); `flashmask` is the "
        "configured backend, `gather`/`numba` the other one",
        volatile=True,
    ),
    Metric(
        "*/time_vs_active_tiles_r",
        "higher",
        "correlation of log time with log active tiles",
        volatile=True,
    ),
)


TIMED = ("flashmask", "gather", "numba", "dense", "flex")  # every timed method's metric prefix


def _other(backend: str) -> str:
    return "gather" if backend == "numba" else "numba"


def _point(cfg, ctx, kind, n, with_flex=False):
    mask = make_mask(
        kind,
        n,
        ctx.rngs.child(f"mask/{kind}/{n}").np,
        docs=cfg.docs,
        window=cfg.window,
        num_global=cfg.num_global,
    )
    q, k, v = random_qkv(1, cfg.heads, n, cfg.dim, ctx.rngs.child(f"qkv/{n}").torch())
    tag = f"{kind}_n{n}"
    stats = tile_stats(mask, cfg.block, cfg.block)
    out = {
        f"flashmask/active_frac_{tag}": stats["active"],
        f"flashmask/mask_mb_{tag}": mask.nbytes / MB,
        f"dense/mask_mb_{tag}": n * n / MB,
    }

    def fm(backend):
        return lambda: flashmask_attention(
            q, k, v, mask, block_m=cfg.block, block_n=cfg.block, backend=backend
        )

    fns = {"flashmask": fm(cfg.backend)}
    if cfg.compare_backends:
        fns[_other(cfg.backend)] = fm(_other(cfg.backend))
    dense_fits = n * n / MB <= cfg.cap_mb
    if dense_fits:
        allowed = mask.to_dense()
        fns["dense"] = lambda: dense_mask_attention(q, k, v, allowed)
    if with_flex or cfg.flex_sweep:
        bm = to_flex_block_mask(mask, cfg.block)
        fns["flex"] = lambda: flex_attention(q, k, v, bm, compiled=cfg.flex_compiled)
    # the untimed first round compiles numba's kernels and Flex's for this shape
    ms = {k: 1e3 * t for k, t in interleaved_medians(fns, cfg.reps).items()}
    for name, t in ms.items():
        out[f"{name}/ms_{tag}"] = t
    out[f"flashmask/peak_mb_{tag}"] = peak_bytes(fns["flashmask"]) / MB
    if dense_fits:
        out[f"dense/peak_mb_{tag}"] = peak_bytes(fns["dense"]) / MB
        out[f"flashmask_vs_dense/speedup_{tag}"] = ms["dense"] / ms["flashmask"]
    if "flex" in ms:
        out[f"flashmask_vs_flex/time_ratio_{tag}"] = ms["flashmask"] / ms["flex"]
    return out


def run(cfg: SpeedConfig, ctx: RunContext) -> dict[str, float]:
    """Time and memory over the sweep, the claim point with Flex, and the memory-cap point."""
    with flex_sweep():  # one Flex compilation per (mask, N), never eager Flex
        return _run(cfg, ctx)


def _run(cfg: SpeedConfig, ctx: RunContext) -> dict[str, float]:
    metrics: dict[str, float] = {}
    points = [(kind, n) for n in cfg.ns for kind in cfg.kinds]
    for kind, n in ctx.progress(points, desc="sweep"):
        metrics.update(_point(cfg, ctx, kind, n))
    if ("causal_document", cfg.claim_n) not in points or not cfg.flex_sweep:
        metrics.update(_point(cfg, ctx, "causal_document", cfg.claim_n, with_flex=True))
    if cfg.cap_n not in cfg.ns or "causal_document" not in cfg.kinds:
        metrics.update(_point(cfg, ctx, "causal_document", cfg.cap_n))
    tag = f"causal_document_n{cfg.cap_n}"
    metrics["flashmask/peak_mb_at_cap"] = metrics[f"flashmask/peak_mb_{tag}"]
    metrics["dense/mask_mb_at_cap"] = metrics[f"dense/mask_mb_{tag}"]
    tag = f"causal_document_n{cfg.claim_n}"
    if f"flashmask_vs_dense/speedup_{tag}" in metrics:
        metrics["flashmask_vs_dense/speedup_at_claim"] = metrics[
            f"flashmask_vs_dense/speedup_{tag}"
        ]
    if f"flashmask_vs_flex/time_ratio_{tag}" in metrics:
        metrics["flashmask_vs_flex/time_ratio_at_claim"] = metrics[
            f"flashmask_vs_flex/time_ratio_{tag}"
        ]
    # time against active tiles: slope of log time on log active tiles over every point
    # measured at N >= slope_min_n, per timed method
    measured = {*points, ("causal_document", cfg.claim_n), ("causal_document", cfg.cap_n)}
    for method in TIMED:
        xs, ys = [], []
        for kind, n in sorted(measured):
            key = f"{method}/ms_{kind}_n{n}"
            if n >= cfg.slope_min_n and key in metrics:
                frac = metrics[f"flashmask/active_frac_{kind}_n{n}"]
                xs.append(math.log(frac * math.ceil(n / cfg.block) ** 2))
                ys.append(math.log(metrics[key]))
        if len(set(xs)) >= 2:
            slope, _ = np.polyfit(xs, ys, 1)
            metrics[f"{method}/time_vs_active_tiles_slope"] = float(slope)
            metrics[f"{method}/time_vs_active_tiles_r"] = float(np.corrcoef(xs, ys)[0, 1])
    return metrics


EXPERIMENT = Experiment(
    name="flashmask.speed",
    summary="CPU forward time and peak memory of FlashMask vs dense-mask SDPA over N in "
    "1K-16K for four masks; vs compiled FlexAttention at N=8K (causal document); FlashMask "
    "at a length where the dense mask exceeds a 128 MiB cap.",
    config=SpeedConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    figures=plots.speed_figures,
)
