"""The tuning choice rule and the committed tuning record."""

import json
from pathlib import Path

from iclr25.papers.contrastive_po.training import METHODS
from iclr25.papers.contrastive_po.tune import ALPHAS, LRS, TUNE_SEEDS, TUNED, TUNED_ALPHA, choose

ROOT = Path(__file__).resolve().parents[3]


def _rows(best: dict[str, float], best_alpha: float) -> list[dict]:
    rows = []
    for m in METHODS:
        for lr in LRS:
            for s in TUNE_SEEDS:
                row = {"method": m, "lr": lr, "seed": s, "objective": 1.0 if lr == best[m] else 0.5}
                if m == "ce":
                    row["paint"] = {
                        str(a): {"objective": 0.9 if a == best_alpha else 0.1} for a in ALPHAS
                    }
                rows.append(row)
    return rows


def test_choose_takes_each_methods_best_mean_objective():
    best = {m: LRS[i % len(LRS)] for i, m in enumerate(METHODS)}
    chosen, alpha = choose(_rows(best, ALPHAS[1]))
    assert chosen == best and alpha == ALPHAS[1]


def test_committed_tuning_record_matches_the_constants():
    rec = json.loads((ROOT / "benchmarks/results/contrastive_po_tuning.json").read_text())
    assert rec["chosen_lr"] == TUNED and rec["chosen_alpha"] == TUNED_ALPHA
    assert rec["grid"]["lr"] == list(LRS) and rec["grid"]["seeds"] == list(TUNE_SEEDS)
    # every method got the same grid on the same seeds (equal budgets)
    for m in METHODS:
        pts = {(r["lr"], r["seed"]) for r in rec["rows"] if r["method"] == m}
        assert pts == {(lr, s) for lr in LRS for s in TUNE_SEEDS}
    assert choose(rec["rows"]) == (TUNED, TUNED_ALPHA)
    # the claim seeds 0-9 are disjoint from the tuning seeds
    assert not set(TUNE_SEEDS) & set(range(10))
