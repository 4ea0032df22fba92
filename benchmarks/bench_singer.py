"""Training-step time of SINGER against NODE as the PDE dimension d and sub-network width w grow.

One step = the label-free residual loss through an RK4 solve (forward), its backward pass and
an Adam update, on the heat equation with the experiment's sizes (batch 8, 128 points, RK4
with 5 steps, SINGER node width 16, NODE 128 x 3). SINGER and NODE are timed interleaved on
the same batches (one step of each in turn) with a fixed torch thread count; the median over
repetitions is reported with the SINGER/NODE ratio. SINGER's cost grows with the number of
parameters P = d + dw + 2w (one graph node each); NODE's MLP grows only in its first and last
layers.

    iclr25 bench singer                    # or: python benchmarks/bench_singer.py
    iclr25 bench singer --dims 5,10,20 --widths 8,16,32 --reps 10 --threads 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.core.seeding import torch_seed
from iclr25.papers.singer import NODE, SINGER, Adam, Heat, HeatNet, residual_loss
from iclr25.papers.singer.data import initial_conditions, uniform_points

OUT = Path(__file__).resolve().parent / "results" / "singer.json"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_singer", description=__doc__.split("\n\n")[0])
    p.add_argument("--dims", default="5,10,20", help="values of d (at the reference width)")
    p.add_argument("--widths", default="8,16,32", help="values of w (at the reference d)")
    p.add_argument("--ref-dim", type=int, default=10)
    p.add_argument("--ref-width", type=int, default=16)
    p.add_argument("--reps", type=int, default=7, help="timed steps per model and size")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--points", type=int, default=128)
    p.add_argument("--solver-steps", type=int, default=5)
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    if args.smoke:
        args.dims, args.widths, args.ref_dim, args.ref_width = "2", "3", 2, 3
        args.reps, args.warmup, args.points, args.batch = 1, 0, 8, 2
    torch.set_num_threads(args.threads)
    load_before = load_average()
    sizes = [(int(d), args.ref_width) for d in args.dims.split(",")]
    sizes += [(args.ref_dim, int(w)) for w in args.widths.split(",")]
    rows = []
    for d, w in dict.fromkeys(sizes):
        subnet = HeatNet(d, w)
        with torch_seed(0):
            models = {"singer": SINGER(subnet, hidden=16, message_depth=1), "node": NODE(subnet)}
        opts = {k: Adam(list(m.parameters()), lr=1e-3) for k, m in models.items()}
        gen = torch.Generator().manual_seed(d * 1000 + w)

        def step(name, subnet=subnet, models=models, opts=opts, d=d):
            def call(theta0, x, rep):
                loss = residual_loss(
                    models[name], subnet, Heat(), theta0, x, 0.1, args.solver_steps, 2.0**d, rep
                )
                loss.backward()
                opts[name].step()

            return call

        def batch(rep, subnet=subnet, gen=gen, d=d):  # the same batch for both, outside the timing
            return (
                initial_conditions(subnet, args.batch, gen),
                uniform_points(args.points, d, gen),
                rep,
            )

        med = interleaved_medians({k: step(k) for k in models}, args.reps, args.warmup, batch)
        ms = {k: 1e3 * v for k, v in med.items()}
        rows.append(
            {
                "d": d,
                "w": w,
                "P": subnet.num_params,
                **{f"{k}_ms": round(v, 3) for k, v in ms.items()},
                "singer_over_node": round(ms["singer"] / ms["node"], 3),
            }
        )
    return bench_result(
        "singer_train_step_time",
        "node (MLP drift on flat θ, same residual loss and solver)",
        vars(args),
        rows,
        args.out,
        load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
