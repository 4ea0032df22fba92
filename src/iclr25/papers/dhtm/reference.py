"""Slow, obviously-correct references for the tests: one Python loop per segment.

They read a `DHTM`'s segments as a list of dicts and redo inference and one learning step
literally from the rules in the method's docstring.
"""

from __future__ import annotations

import math

import numpy as np


def segments(model) -> list[dict]:
    """The live segments of `model` as dicts (slot, cell, factor, rec, log_f, s, a)."""
    st = model.segments_
    out = []
    for i in range(model.n_used_):
        if st.alive[i]:
            out.append(
                dict(
                    slot=i,
                    cell=int(st.cell[i]),
                    factor=int(st.factor[i]),
                    rec=[int(c) for c in st.rec[i]],
                    log_f=float(st.log_f[i]),
                    s=[float(x) for x in st.s[i]],
                    a=float(st.a[i]),
                )
            )
    return out


def excitation(model, messages: np.ndarray) -> np.ndarray:
    """Per hidden cell: sum over its variable's factors of the max segment excitation."""
    per: dict[tuple[int, int], float] = {}
    for seg in segments(model):
        if not all(messages[c] >= model.theta for c in seg["rec"]):
            continue
        m = [messages[c] for c in seg["rec"]]
        s = seg["s"]
        sbar = sum(s) / len(s)
        ll = sum((1 - si) * math.log(mi) for mi, si in zip(m, s))
        if sbar > 0:
            ll += sbar * math.log(sum(mi * si for mi, si in zip(m, s)) / len(s))
        key = (seg["factor"], seg["cell"])
        per[key] = max(per.get(key, -math.inf), ll + seg["log_f"])
    out = np.full(model.n_hidden_cells, -math.inf)
    for cell in range(model.n_hidden_cells):
        var = cell // model.cells_per_var
        factors = [f for f, v in enumerate(model.factor_post_) if v == var]
        if factors:
            out[cell] = sum(per.get((f, cell), -math.inf) for f in factors)
    return out


def prior(model, messages: np.ndarray) -> np.ndarray:
    """Softmax of β·excitation per hidden variable over its finite cells; zeros if none."""
    exc = excitation(model, messages)
    out = np.zeros_like(exc)
    for j in range(model.n_copies):
        lo, hi = j * model.cells_per_var, (j + 1) * model.cells_per_var
        x = exc[lo:hi]
        fin = np.isfinite(x)
        if fin.any():
            centred = model.inverse_temperature * (x[fin] - x[fin].mean())
            e = np.exp(centred - centred.max())
            out[lo:hi][fin] = e / e.sum()
    return out


def learn_step(model, prev: list[int], prev_action: int, sample: list[int]) -> list[dict]:
    """The segments after one learning step (reinforce, punish, synapses, traces, deletion),
    without growth; returns the surviving segment dicts."""
    presyn = set(prev) | {model.n_hidden_cells + prev_action}
    out = []
    for seg in segments(model):
        active = all(c in presyn for c in seg["rec"])
        if active:
            f = math.exp(seg["log_f"])
            if seg["cell"] in sample:
                seg["log_f"] = math.log(f + model.lr_f * (1 - f))
            else:
                seg["log_f"] = seg["log_f"] + math.log(1 - model.lr_f)
        seg["s"] = [
            si + model.lr_s * ((1.0 if active else 0.0) - si) if c in presyn else si
            for c, si in zip(seg["rec"], seg["s"])
        ]
        seg["a"] = seg["a"] + model.lr_a * ((1.0 if active else 0.0) - seg["a"])
        if seg["log_f"] >= model.log_f_min:
            out.append(seg)
    return out


def wkv_explicit(k: np.ndarray, v: np.ndarray, decay: np.ndarray, bonus: np.ndarray) -> np.ndarray:
    """RWKV-4's WKV by its defining sum, per channel: at step t, with e_i = e^{-(t-1-i)w + k_i},
    (Σ_{i<t} e_i v_i + e^{u + k_t} v_t) / (Σ_{i<t} e_i + e^{u + k_t}),
    w = exp(decay), u = bonus. Shapes: k, v (T, d) -> (T, d)."""
    w = np.exp(decay)
    out = np.zeros_like(k)
    for t in range(k.shape[0]):
        num = np.exp(bonus + k[t]) * v[t]
        den = np.exp(bonus + k[t])
        for i in range(t):
            e = np.exp(-(t - 1 - i) * w + k[i])
            num = num + e * v[i]
            den = den + e
        out[t] = num / den
    return out


def hmm_predictive(trans: np.ndarray, init: np.ndarray, state_obs: np.ndarray, obs: list[int]):
    """p(o_{t+1} | o_{<=t}) of an HMM with deterministic emission, by summing over all hidden
    paths consistent with `obs` (exponential; tiny models only)."""
    import itertools

    n_obs = int(state_obs.max()) + 1
    states = [np.flatnonzero(state_obs == o) for o in obs]
    joint = np.zeros(n_obs)
    for path in itertools.product(*states):
        p = init[path[0]]
        for a, b in itertools.pairwise(path):
            p *= trans[a, b]
        for nxt in range(len(init)):
            joint[state_obs[nxt]] += p * trans[path[-1], nxt]
    return joint / joint.sum()


def hmm_em_step(
    trans: np.ndarray,
    init: np.ndarray,
    state_obs: np.ndarray,
    episodes: list[list[int]],
    actions: list[list[int]],
    pseudocount: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One Baum-Welch step of an HMM with deterministic emission and one transition matrix
    per action (`trans`: actions x states x states), with the expected counts summed over all
    hidden paths consistent with each episode (exponential; tiny models only)."""
    import itertools

    xi = np.zeros_like(trans)
    g0 = np.zeros_like(init)
    for obs, acts in zip(episodes, actions):
        paths, weights = [], []
        for path in itertools.product(*[np.flatnonzero(state_obs == o) for o in obs]):
            p = init[path[0]]
            for t, (a, b) in enumerate(itertools.pairwise(path)):
                p *= trans[acts[t], a, b]
            paths.append(path)
            weights.append(p)
        total = sum(weights)
        for path, p in zip(paths, weights):
            g0[path[0]] += p / total
            for t, (a, b) in enumerate(itertools.pairwise(path)):
                xi[acts[t], a, b] += p / total
    xi += pseudocount
    g0 += pseudocount
    return xi / xi.sum(2, keepdims=True), g0 / g0.sum()
