"""Orbit detection time and label generation time against instance size (ilp_orbit).

For each family and size, a few instances are generated; on each, interleaved: nauty on our
coloured graph (one value vertex per (constraint, value) pair), nauty on the textbook graph
with one middle vertex per nonzero (`reference.coloured_graph_per_edge`, same orbits), the whole
`detect_symmetry` (nauty, orbits, linked orbits and the column matrix with its pure column
swaps), and the HiGHS label (one thread, no cache, time limit 60 s;
`proven_optimal` counts the labels HiGHS proved optimal). Medians over instances.
Two ratios: per-edge graph / ours (speed-up of the encoding), and orbits / label (the share of
the cost of a labelled example that symmetry adds). The paper reports Bliss at 0.05 s (BPP, 420
variables: our bpp size 20), 0.06 s (BIP) and 6.1 s (SMSP, ~23k variables).

    iclr25 bench ilp_orbit                 # or: python benchmarks/bench_ilp_orbit.py
    iclr25 bench ilp_orbit --sizes 5,10,20 --instances 5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.papers.ilp_orbit.data import generate
from iclr25.papers.ilp_orbit.ilp import solve
from iclr25.papers.ilp_orbit.reference import coloured_graph_per_edge
from iclr25.papers.ilp_orbit.symmetry import automorphisms, detect_symmetry

OUT = Path(__file__).resolve().parent / "results" / "ilp_orbit.json"


def _sizes(family: str, n: int) -> dict[str, int]:
    return {"n_items": n} if family == "bpp" else {"n_orders": n, "n_slabs": max(3, n // 2)}


def _ms(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return 1000 * (time.perf_counter() - t), out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_ilp_orbit", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="5,10,20,30", help="items (bpp) / orders (slab)")
    p.add_argument("--families", default="bpp,slab")
    p.add_argument("--instances", type=int, default=3, help="instances per size (median)")
    p.add_argument("--time-limit", type=float, default=60.0, help="HiGHS seconds per label")
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    load_before = load_average()
    if args.smoke:
        args.sizes, args.instances = "4", 1
    torch.set_num_threads(args.threads)
    rows = []
    for family in args.families.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            ilps = generate(family, args.instances, np.random.default_rng(n), **_sizes(family, n))
            nauty, per_edge, orbits, labels, gaps, merged, optimal = [], [], [], [], [], [], []
            for ilp in ilps:
                nauty.append(_ms(lambda ilp=ilp: automorphisms(ilp))[0])
                per_edge.append(
                    _ms(lambda ilp=ilp: coloured_graph_per_edge(ilp).automorphisms())[0]
                )
                ms, sym = _ms(lambda ilp=ilp: detect_symmetry(ilp))
                orbits.append(ms)
                ms, sol = _ms(lambda ilp=ilp: solve(ilp, time_limit=args.time_limit))
                labels.append(ms)
                gaps.append(sol.gap)
                optimal.append(sol.proven_optimal)
                merged.append(sym.columns is not None)
            orbit_ms, label_ms = float(np.median(orbits)), float(np.median(labels))
            nauty_ms, per_edge_ms = float(np.median(nauty)), float(np.median(per_edge))
            rows.append(
                {
                    "family": family,
                    "size": n,
                    "variables": ilps[0].num_vars,
                    "constraints": ilps[0].num_cons,
                    "nonzeros": int(ilps[0].A.nnz),
                    "nauty_ms": round(nauty_ms, 2),
                    "nauty_per_edge_ms": round(per_edge_ms, 2),
                    "per_edge_over_ours": round(per_edge_ms / nauty_ms, 2),
                    "orbits_ms": round(orbit_ms, 2),
                    "label_ms": round(label_ms, 2),
                    "orbits_over_label": round(orbit_ms / label_ms, 3),
                    "max_gap": round(float(max(gaps)), 4),
                    "proven_optimal": f"{sum(optimal)}/{len(optimal)}",
                    "columns_found": float(np.mean(merged)),
                }
            )
    return bench_result(
        "ilp_orbit orbit detection and label time vs instance size",
        "nauty on the per-edge coloured graph (per_edge_over_ours) and the HiGHS label time "
        "(orbits_over_label), on the same instances",
        vars(args),
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
