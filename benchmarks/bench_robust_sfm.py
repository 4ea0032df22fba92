"""Time of RESfM's stages against the scene size, pycolmap's BA against the scipy reference on
the same scene, and the whole RESfM pipeline against COLMAP and GLOMAP on the same tracks.

Per scene size (cameras x points, ring layout, 40 % outliers of all kinds, 1 px noise): the
network's forward pass (P(outlier), cameras, points) and one training step at width 64; the
robust BA from the same perturbed start by pycolmap (Ceres) and by scipy; the whole pipeline
(`reconstruct` with 300 fine-tuning steps, an untrained network: the time does not depend on
the weights) against `run_colmap` and `run_glomap`. The calls take turns in every round
(interleaved), one thread each, and the median over rounds is reported.

    python benchmarks/bench_robust_sfm.py                     # 10x150, 20x300, 40x600
    python benchmarks/bench_robust_sfm.py --sizes 20x300 --reps 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.papers.robust_sfm import (
    PipelineSettings,
    TrainConfig,
    bundle_adjust,
    init_model,
    make_scene,
    reconstruct,
    run_colmap,
    run_glomap,
)
from iclr25.papers.robust_sfm.training import batch_loss, sample_block

OUT = Path(__file__).resolve().parent / "results" / "robust_sfm.json"


def _perturbed(scene, rng):
    """GT poses and points perturbed (0.05 rad, 0.2 units): the BA's common start."""
    from scipy.spatial.transform import Rotation

    noise = Rotation.from_rotvec(rng.normal(0, 0.05, (scene.num_cameras, 3))).as_matrix()
    R = noise @ scene.R
    t = scene.t + rng.normal(0, 0.2, scene.t.shape)
    X = scene.X + rng.normal(0, 0.2, scene.X.shape)
    return R, t, X


def _calls(scene, net, finetune_epochs: int):
    rng = np.random.default_rng(0)
    R0, t0, X0 = _perturbed(scene, rng)
    xy = torch.as_tensor(scene.normalized_uv(), dtype=torch.float32)
    cam, track = torch.as_tensor(scene.cam), torch.as_tensor(scene.track)
    cfg = TrainConfig(steps=1)
    block = sample_block(np.random.default_rng(1), scene, cfg)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    settings = PipelineSettings(finetune_epochs=finetune_epochs)

    def forward():
        with torch.no_grad():
            net(xy, cam, track, scene.num_cameras, scene.num_tracks)

    def train_step():
        opt.zero_grad()
        batch_loss(net, block, cfg).backward()
        opt.step()

    def ba(solver):
        return lambda: bundle_adjust(
            scene.Ks, R0, t0, X0, scene.cam, scene.track, scene.uv, solver=solver
        )

    return {
        "network_forward": forward,
        "training_step": train_step,
        "ba_pycolmap": ba("pycolmap"),
        "ba_scipy": ba("scipy"),
        "resfm_pipeline": lambda: reconstruct(net, scene, settings),
        "colmap": lambda: run_colmap(scene),
        "glomap": lambda: run_glomap(scene),
    }


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_robust_sfm", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10x150,20x300,40x600", help="cameras x points")
    p.add_argument("--reps", type=int, default=3, help="timed rounds per size")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--finetune", type=int, default=300, help="the pipeline's fine-tuning steps")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    load_before = load_average()
    if args.smoke:
        args.sizes, args.reps, args.warmup, args.finetune = "6x60", 1, 0, 2
    torch.set_num_threads(args.threads)
    rows = []
    for size in args.sizes.split(","):
        m, n = (int(x) for x in size.split("x"))
        scene = make_scene(
            np.random.default_rng(m * 1000 + n), num_cameras=m, num_points=n, outlier_rate=0.4
        )
        net = init_model(0, features=64)
        calls = _calls(scene, net, args.finetune)
        seconds = interleaved_medians(calls, args.reps, args.warmup)
        for name, s in seconds.items():
            rows.append(
                {
                    "cameras": scene.num_cameras,
                    "points": scene.num_tracks,
                    "entries": scene.num_entries,
                    "call": name,
                    "seconds": round(s, 4),
                    "vs_colmap": round(s / seconds["colmap"], 3),
                }
            )
    return bench_result(
        "robust_sfm_stages",
        "COLMAP incremental mapping (database, verification, mapping) on the same tracks",
        {
            "sizes": args.sizes,
            "reps": args.reps,
            "threads": args.threads,
            "finetune_epochs": args.finetune,
            "outlier_rate": 0.4,
            "features": 64,
        },
        rows=rows,
        out=args.out or None,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
