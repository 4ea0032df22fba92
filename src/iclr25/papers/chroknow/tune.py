"""The training grid of `chroknow.elicitation`, run on bench seeds disjoint from the claim seeds.

The claim runs draw their bench seeds from the run seeds 0-9 (`ctx.rngs.child("bench")`, 31-bit
integers); this grid uses bench seed 100 (and the same for the model). Both formats get the same
grid (learning rate x 3 at the preset's epochs and batch size, the budget of every arm), and
each format's choice is the grid point with the most Known items, ties broken by the lower
final training loss. The check of a grid point uses 2 exemplar sets per item and year (the
quick preset 3) to save time. Run it with

    PYTHONPATH=src python -m iclr25.papers.chroknow.tune

which prints one line per grid point (the shares, the loss and the wall time with the load
average). The measured grid and the choice are in `GRID_RESULT` below.
"""

from __future__ import annotations

import os
import time

import numpy as np

from iclr25.papers.chroknow.data import make_bench
from iclr25.papers.chroknow.method import knowledge_check, summarize
from iclr25.papers.chroknow.training import (
    FORMATS,
    build_tokenizer,
    probe_examples,
    question_texts,
    train_probe_lm,
)

TUNE_SEED = 100
"""Bench and model seed of the grid (the claim seeds are 0-9)."""
LRS = (1.5e-3, 3e-3, 6e-3)
"""The grid: peak learning rates, the same for both formats."""

GRID_RESULT = """NOT FINISHED (first run 2026-12-02, nice 19 beside other sessions' nice-0 jobs,
load average 8.2, so the times are starved, not a measure of cost):

structured lr 1.5e-3: known 0.562, partial_known 0.25, cut_off 0.125, unknown 0.062,
    loss 0.174 (train 546 s, check 301 s)
structured lr 3e-3, prose (all three): not run yet. No choice made: the presets use lr 3e-3,
    picked from the exploratory runs on this seed listed in the package docstring.
"""


def grid_point(
    fmt: str,
    lr: float,
    *,
    n_items: int = 8,
    epochs: int = 30,
    batch_size: int = 8,
    max_reps: int = 4,
    n_sets: int = 2,
    seed: int = TUNE_SEED,
) -> dict[str, float]:
    """Train one model of `fmt` at `lr` on bench `seed` and run the knowledge check on the
    General items (quick-preset sizes); returns the shares, the final loss and the time."""
    t0 = time.perf_counter()
    bench = make_bench(
        seed=seed, n_general=n_items, n_legal=1, n_fewshot=4, years=(2018, 2023), cutoff=2021
    )
    ex = probe_examples(bench, fmt, np.random.default_rng(seed), max_reps=max_reps)
    tok = build_tokenizer([e.context + e.target for e in ex], question_texts(bench))
    losses: list[float] = []
    lm = train_probe_lm(
        ex,
        tok,
        seed=seed,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        log=lambda e, v: losses.append(v),
    )
    t1 = time.perf_counter()
    res = []
    for state in ("dynamic", "static"):
        res += knowledge_check(
            lm,
            bench.split("General", state),
            bench.pool("General"),
            domain="General",
            n_sets=n_sets,
            max_new_tokens=8,
            seed=seed,
        )
    out = {
        k: v for k, v in summarize(res).items() if "_" not in k or k in ("partial_known", "cut_off")
    }
    return out | {
        "loss": losses[-1],
        "train_s": t1 - t0,
        "check_s": time.perf_counter() - t1,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    """Run the grid and print one line per point and each format's choice."""
    import torch

    torch.set_num_threads(1)
    for fmt in FORMATS:
        rows = []
        for lr in LRS:
            r = grid_point(fmt, lr)
            rows.append((lr, r))
            print(fmt, lr, {k: round(v, 3) for k, v in r.items()}, flush=True)
        best = max(rows, key=lambda t: (t[1]["known"], -t[1]["loss"]))
        print("choice", fmt, best[0], flush=True)


if __name__ == "__main__":
    main()
