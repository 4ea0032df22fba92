"""Why DHTM's cells_per_column 40 vs 20 (and 12) give identical tuning scores.

Runs the tuning-scale deterministic stream (phases 200/200/200) for DHTM at the tuned point with
several cells_per_column and records, per step, the prediction, whether the posterior is one-hot,
how many cells each column ever uses, and, at every least-used burst, whether the picked cell
was an unused clone and whether it was clone 0 of its column (the fixed episode-start cell).
"""

import argparse
import dataclasses

import numpy as np

from iclr25.core.context import RunContext
from iclr25.papers.dhtm.training import build_model, episode_stream, tuned
from iclr25.papers.dhtm.tuning import TUNING_CONFIG


def run(cfg, seed, c):
    cfg = dataclasses.replace(cfg, dhtm=dataclasses.replace(cfg.dhtm, cells_per_column=c))
    ctx = RunContext(seed=seed)
    _, stream = episode_stream(cfg, ctx)
    model = build_model("dhtm", cfg, ctx.rngs.child("models").int_seed())
    log = {"burst": 0, "pick_unused": 0, "pick_start_cell": 0, "pick_used": 0, "multi_alpha": 0}
    orig = model._posterior

    def post(obs):
        alpha, burst = orig(obs)
        if (alpha > 0).sum() > 1 and not burst.any():
            log["multi_alpha"] += 1
        if burst.any():
            log["burst"] += 1
            st = model.segments_
            used = np.bincount(
                st.cell[: model.n_used_][st.alive[: model.n_used_]], minlength=model.n_hidden_cells
            ).reshape(-1, c)[obs]
            log["_used"] = used
        return alpha, burst

    model._posterior = post
    preds = []
    for _, ep in stream:
        model.reset()
        for t, o in enumerate(ep):
            if t > 0:
                preds.append(model.predict_next())
            before = model._prev_sample
            log.pop("_used", None)
            model.partial_fit(int(o), 0)
            if "_used" in log and before is not None:
                cell = int(model._prev_sample[0]) % c
                used = log["_used"]
                if used[cell] == 0:
                    log["pick_unused"] += 1
                else:
                    log["pick_used"] += 1
                if cell == 0:
                    log["pick_start_cell"] += 1
    st = model.segments_
    cells = np.unique(st.cell[: model.n_used_][st.alive[: model.n_used_]])
    per_col = np.bincount(cells // c, minlength=cfg_n(model))
    return np.array(preds), log, per_col, model


def cfg_n(model):
    return model.n_obs_states


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    ap.add_argument("--cells", type=int, nargs="+", default=[40, 20, 12])
    args = ap.parse_args()
    cfg = tuned(TUNING_CONFIG)
    print("DHTM config:", cfg.dhtm)
    for seed in args.seeds:
        ref = None
        for c in args.cells:
            preds, log, per_col, model = run(cfg, seed, c)
            log.pop("_used", None)
            same = (
                ""
                if ref is None
                else (
                    f"identical predictions to c={args.cells[0]}: {np.array_equal(preds, ref)}; "
                    f"max |diff| {np.abs(preds - ref).max():.3g}"
                )
            )
            if ref is None:
                ref = preds
            print(
                f"seed {seed} c={c:3d}: cells with segments per column {per_col.tolist()} "
                f"(max {per_col.max()}), segments {model.n_segments}, {log}; {same}"
            )
