"""Equal-size learning-rate grids for every unlearning method, scored on tuning seeds.

Every method gets the same grid (`GRID`, 3 learning rates, the same unlearning budget). A grid
point's score is the calibrated forget-set ES (`comparison.compare_calibrated`, τ = 0.9) at the
tuning scale (`TUNING_SETUP`, the Llama-style model), averaged over `TUNING_SEEDS`, which are
disjoint from the claim seeds 0-9; the lowest score is chosen (ties: the smaller learning rate).
`TUNED_LRS` holds the choice, `TUNING_TABLE` the committed scores; a test checks that the
choice is the table's argmin. Run `python -m iclr25.papers.unlearn_eval.tuning` to regenerate
the table (it prints it).
"""

from __future__ import annotations

import numpy as np

from iclr25.papers.unlearn_eval.method import METHODS
from iclr25.papers.unlearn_eval.training import SetupConfig

GRID: dict[str, tuple[float, ...]] = {m: (3e-4, 1e-3, 3e-3) for m in METHODS}
"""Learning rates tried per method (the same three for all)."""
TUNING_SEEDS = (100, 101)
"""Seeds of the tuning runs (claims use 0-9)."""
CLAIM_SEEDS = range(10)
TUNING_SETUP = SetupConfig(n_authors=30, n_facts=5, n_perturbed=1, width=48, layers=2, steps=400)
"""The tuning scale (the quick preset's corpus and model)."""
TUNING_ARCH = "llama"
TUNING_STEPS = 24
"""The unlearning budget of the tuning runs (the presets' default)."""

# Scores (calibrated forget ES, mean over TUNING_SEEDS) printed by `evaluate_grid` (run of
# commit a612ceb, seeds 100 and 101) and pasted here; None would mark a point not yet run.
# DEVIATION: the optimum sits on an edge of the grid for five methods (GA and NPO at the lowest
# learning rate, KL, PO and RMU at the highest); the grids still have to be widened (equal sizes).
TUNING_TABLE: dict[str, dict[float, float | None]] = {
    "ga": {3e-4: 0.2269, 1e-3: 0.3553, 3e-3: 0.4144},
    "gd": {3e-4: 0.1925, 1e-3: 0.0522, 3e-3: 0.1449},
    "kl": {3e-4: 0.2058, 1e-3: 0.2403, 3e-3: 0.0664},
    "po": {3e-4: 0.5787, 1e-3: 0.4436, 3e-3: 0.266},
    "npo": {3e-4: 0.2808, 1e-3: 0.3812, 3e-3: 0.4176},
    "rmu": {3e-4: 0.5994, 1e-3: 0.1015, 3e-3: 0.0022},
}

TUNED_LRS: dict[str, float] = {
    "ga": 3e-4,
    "gd": 1e-3,
    "kl": 3e-3,
    "po": 3e-3,
    "npo": 3e-4,
    "rmu": 3e-3,
}
"""The chosen learning rate per method (`choose(TUNING_TABLE)`; a test checks it)."""


def evaluate_grid(seeds: tuple[int, ...] = TUNING_SEEDS) -> dict[str, dict[float, float]]:
    """Score every grid point on `seeds`: method -> lr -> mean calibrated forget ES."""
    from iclr25.papers.unlearn_eval.comparison import CompareSpec, compare_calibrated
    from iclr25.papers.unlearn_eval.training import make_setup

    if not seeds or set(seeds) & set(CLAIM_SEEDS):
        raise ValueError(
            f"seeds={seeds!r} is not allowed: tuning seeds must be given and disjoint from the "
            f"claim seeds {CLAIM_SEEDS.start}-{CLAIM_SEEDS.stop - 1}"
        )
    scores: dict[str, dict[float, list[float]]] = {m: {lr: [] for lr in GRID[m]} for m in METHODS}
    for seed in seeds:
        setup = make_setup(TUNING_SETUP, TUNING_ARCH, seed)
        spec = CompareSpec(steps=TUNING_STEPS, seed=seed)
        for k in range(len(GRID[METHODS[0]])):
            lrs = [GRID[m][k] for m in METHODS]
            _, _, res = compare_calibrated(
                setup.model, setup.tokenizer, setup.split, METHODS, lrs, spec
            )
            for r in res:
                scores[r.method][r.lr].append(r.es_forget)
    return {m: {lr: float(np.mean(v)) for lr, v in d.items()} for m, d in scores.items()}


def choose(table: dict[str, dict[float, float | None]]) -> dict[str, float]:
    """The lowest-scoring learning rate per method (ties: the smaller one)."""
    out = {}
    for m, d in table.items():
        done = {lr: s for lr, s in d.items() if s is not None}
        if done:
            out[m] = min(sorted(done), key=lambda lr: done[lr])
    return out


if __name__ == "__main__":  # pragma: no cover - a maintenance script
    import torch

    torch.set_num_threads(1)
    table = evaluate_grid()
    print({m: {lr: round(s, 4) for lr, s in d.items()} for m, d in table.items()})
    print(choose(table))
