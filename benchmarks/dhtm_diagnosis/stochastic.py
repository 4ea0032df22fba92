"""DHTM's surprise per episode against the oracle's on stochastic transitions, per bursting
variant (diagnosis of issue 19; small scale, tuning seeds).

Variants (all at the tuned point of `TUNED`, 40 cells, one hidden variable; --lr-f and --cells
override):
- least_used: the tuned rule (learn on a least-used clone, send only it forward)
- uniform: the official rule (uniform posterior over the column, learn on a sample of it)
- winner_union: HTM's rule (learn on a least-used clone, send the whole column forward)
- least_used_prefix: least_used before f0a26e7/5464d60 (clone 0, the episode-start cell, and
  clones with only outgoing segments could be picked)
"""

import argparse
import dataclasses
import time

import numpy as np

from iclr25.core.context import RunContext
from iclr25.papers.dhtm.method import DHTM
from iclr25.papers.dhtm.training import (
    SEQ_PRESETS,
    _smooth,
    _step_kinds,
    build_model,
    episode_stream,
    recovery_time,
)


class Variant(DHTM):
    """DHTM with switchable bursting details (diagnosis only)."""

    union = False
    old_count = False

    def _clone_use(self, obs):
        if not self.old_count:  # as DHTM: outgoing segments count, never the start cell
            return super()._clone_use(obs)
        st, n = self.segments_, self.n_used_
        used = np.bincount(st.cell[:n][st.alive[:n]], minlength=self.n_cells).astype(float)
        return used[: self.n_hidden_cells].reshape(
            self.n_copies, self.n_obs_states, self.cells_per_column
        )[:, obs]

    def _burst_message(self, alpha, burst, local):
        if not self.union:  # union: keep the uniform column as the message
            super()._burst_message(alpha, burst, local)


VARIANTS = {  # burst, union message, pre-fix clone count
    "least_used": ("least_used", False, False),
    "least_used_prefix": ("least_used", False, True),
    "uniform": ("uniform", False, False),
    "winner_union": ("least_used", True, False),
}


def run(cfg, seed, variant):
    burst, union, start = VARIANTS[variant]
    ctx = RunContext(seed=seed)
    processes, stream = episode_stream(cfg, ctx)
    base = build_model("dhtm", cfg, ctx.rngs.child("models").int_seed())
    m = Variant(
        base.n_obs_states,
        1,
        cells_per_column=cfg.dhtm.cells_per_column,
        n_copies=cfg.dhtm.copies,
        n_vars_per_factor=cfg.dhtm.vars_per_factor,
        lr_f=cfg.dhtm.lr_f,
        burst=burst,
        random_state=ctx.rngs.child("models").int_seed(),
    )
    m.union, m.old_count = union, start
    n = len(stream)
    ex, raw, orc = np.zeros(n), np.zeros(n), np.zeros(n)
    bounds = np.cumsum((0, *cfg.phase_episodes))
    ks, kn = np.zeros(3), np.zeros(3)
    for i, (k, ep) in enumerate(stream):
        pred, _ = processes[k].oracle(ep, cfg.gamma, 1)
        kinds = _step_kinds(ep, pred)
        m.reset()
        for t, o in enumerate(ep):
            if t > 0:
                p = _smooth(m.predict_next(), cfg.smoothing)[o]
                q = _smooth(pred[t - 1], cfg.smoothing)[o]
                raw[i] -= np.log(p)
                orc[i] -= np.log(q)
                if (bounds[0] + bounds[1]) // 2 <= i < bounds[1]:
                    ks[kinds[t - 1]] += np.log(q) - np.log(p)
                    kn[kinds[t - 1]] += 1
            m.partial_fit(int(o), 0)
        raw[i] /= len(ep) - 1
        orc[i] /= len(ep) - 1
    ex = raw - orc
    out = {
        "pre": ex[bounds[1] - cfg.window : bounds[1]].mean(),
        "rec": recovery_time(ex[bounds[1] : bounds[2]], cfg.window, cfg.recovery_tol),
        "area": ex[bounds[1] : bounds[2]].sum(),
        "rec_back": recovery_time(ex[bounds[2] : bounds[3]], cfg.window, cfg.recovery_tol),
        "area_back": ex[bounds[2] : bounds[3]].sum(),
        "unexp": ks[0] / max(kn[0], 1),
        "after": ks[1] / max(kn[1], 1),
        "clean": ks[2] / max(kn[2], 1),
        "segs": m.n_segments,
        "n_unexp": kn[0],
        "n_after": kn[1],
        "n_clean": kn[2],
    }
    return out, raw, orc


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS))
    ap.add_argument("--generator", default="stochastic_transitions")
    ap.add_argument("--save", default="")
    ap.add_argument("--lr-f", type=float, default=None)
    ap.add_argument("--cells", type=int, default=None)
    args = ap.parse_args()
    cfg = dataclasses.replace(
        SEQ_PRESETS["quick"], generator=args.generator, phase_episodes=(args.episodes,) * 3
    )
    if args.cells is not None:
        cfg = dataclasses.replace(
            cfg, dhtm=dataclasses.replace(cfg.dhtm, cells_per_column=args.cells)
        )
    if args.lr_f is not None:
        cfg = dataclasses.replace(cfg, dhtm=dataclasses.replace(cfg.dhtm, lr_f=args.lr_f))
    print(cfg.dhtm, cfg.generator, cfg.phase_episodes, flush=True)
    curves = {}
    for v in args.variants:
        rows = []
        for s in args.seeds:
            t0 = time.process_time()
            out, raw, orc = run(cfg, s, v)
            rows.append(out)
            curves[f"{v}/{s}"] = (raw, orc)
            print(
                f"{v:20s} seed {s}: "
                + ", ".join(f"{k} {x:.3g}" for k, x in out.items())
                + f" ({time.process_time() - t0:.1f} s cpu)",
                flush=True,
            )
        mean = {k: np.mean([r[k] for r in rows]) for k in rows[0]}
        print(f"{v:20s} MEAN   : " + ", ".join(f"{k} {x:.3g}" for k, x in mean.items()), flush=True)
    if args.save:
        np.savez(args.save, **{k: np.stack(v) for k, v in curves.items()})
