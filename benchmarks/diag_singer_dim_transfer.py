"""Diagnostic of SINGER's zero-shot dimension transfer on HJB (`singer.hjb`, d = 5 -> 8).

Trains one SINGER drift at the full preset's sizes (seed by seed) and reports, at d = 5 and
d = 8 on fresh test sets: its relative squared L2 error, the frozen (θ_T = θ_0) and least-squares
oracle errors, and how the drift's d(wt_k)/dt (the amplitude of each Gaussian bump) compares with
the oracle's, as a least-squares slope through the origin. For a bump, the heat part of the HJB
operator gives d(wt_k)/dt = -ε Σ_i a_ki² wt_k, a SUM over the d input coordinates.

Variants: `mean` (our drift: mean aggregation, undirected graph), `sum-dir` (the official
configuration: sum aggregation over a directed graph), `mean@8` (trained at d = 8 instead, the
in-distribution reference at d = 8).

    python benchmarks/diag_singer_dim_transfer.py --variants mean,sum-dir,mean@8 --seeds 0,1,2

About 15-25 s per (variant, seed) on one idle core. Not a benchmark (no `--smoke`, nothing
written); docs/papers/singer.md quotes its output.
"""

from __future__ import annotations

import argparse

import torch

from iclr25.core.context import RunContext
from iclr25.core.seeding import torch_seed
from iclr25.papers.singer import training as T
from iclr25.papers.singer.baselines import ProjectedDynamics
from iclr25.papers.singer.experiments.hjb import PRESETS
from iclr25.papers.singer.method import SINGER, solve


class SumSINGER(SINGER):
    """SINGER with sum (the official aggr='add') instead of mean aggregation."""

    def _bind(self, subnet):
        super()._bind(subnet)
        n = self.graph.num_nodes
        ones = torch.ones(len(self.graph.src))
        self._mean_adj = torch.zeros(n, n).index_put_(
            (self.graph.dst, self.graph.src), ones, accumulate=True
        )


def _slope(y: torch.Tensor, x: torch.Tensor) -> float:
    return float((x * y).sum() / (x * x).sum())


def diagnose(variant: str, seed: int) -> list[dict]:
    cfg = PRESETS["full"]
    ctx = RunContext(seed)
    name, _, at = variant.partition("@")
    train_dim = int(at) if at else cfg.dim
    problem = T._problem(cfg, train_dim, cfg.width)
    d = cfg.drift
    cls = SumSINGER if name.startswith("sum") else SINGER
    with torch_seed(ctx.rngs.child("init/singer").int_seed(31)):
        model = cls(
            problem[0],
            d.hidden,
            d.layers,
            d.message_depth,
            d.noise,
            d.add_theta,
            directed=name.endswith("-dir"),
        )
    T.train(model, cfg, problem, ctx.rngs.child("train").torch())
    rows = []
    for dim in (cfg.dim, cfg.transfer_dim):
        subnet, pde, _, sample_x = T._problem(cfg, dim, cfg.width)
        test = T.make_test_set(cfg, subnet, sample_x, ctx.rngs.child(f"diag/test{dim}").torch())
        oracle = ProjectedDynamics(
            subnet, pde, sample_x(cfg.oracle.points, ctx.rngs.child(f"diag/or{dim}").torch())
        )
        drift = model.transfer(subnet)
        with torch.no_grad():
            wt = subnet.split(drift(test.theta0))["wt"].flatten()
            wt_oracle = subnet.split(oracle(test.theta0))["wt"].flatten()
        th = subnet.split(test.theta0)
        heat_rate = (-(th["a"] ** 2).sum(-1) * th["wt"]).flatten()
        rows.append(
            {
                "variant": variant,
                "seed": seed,
                "d": dim,
                "singer": T._error(
                    subnet, solve(drift, test.theta0, cfg.horizon, cfg.solver_steps), test
                ),
                "frozen": T._error(subnet, test.theta0, test),
                "oracle": T._error(
                    subnet, solve(oracle, test.theta0, cfg.horizon, cfg.oracle.steps), test
                ),
                "wt_slope_vs_oracle": _slope(wt, wt_oracle),
                "oracle_wt_slope_vs_heat": _slope(wt_oracle, heat_rate),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(prog="diag_singer_dim_transfer", description=__doc__.split("\n")[0])
    p.add_argument("--variants", default="mean", help="comma-separated: mean, sum-dir, mean@8")
    p.add_argument("--seeds", default="0", help="comma-separated seeds")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for variant in args.variants.split(","):
        for seed in map(int, args.seeds.split(",")):
            for row in diagnose(variant, seed):
                rows.append(row)
                print(
                    "  ".join(
                        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()
                    ),
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()
