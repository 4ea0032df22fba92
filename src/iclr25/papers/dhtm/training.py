"""What the DHTM experiments share: the config groups of each method family, the sequence task
(its config, models, online training loop and metrics), and the claim builder.

- Config groups: `DHTMConfig`, `RNNConfig` (LSTM and RWKV), `CSCGConfig`, `MarkovConfig`; a
  config holds one group per method (`dhtm.lr_f=0.2`, `lstm.online_steps=5` on the command
  line). `build_memory` turns a group into a model.
- The sequence task (`dhtm.sequences`, `dhtm.sequences_stochastic`): aliased sequences whose
  tail depends on the symbol four steps back, with a switch of the generating process (tails
  rotated, probabilities permuted) after phase A and a switch back to A after phase B. Every
  model learns online, one episode at a time, with its memory reset at episode start
  (`run_sequences`). We measure surprise relative to the exact oracle, recovery time and area
  under the surprise curve after each switch, and the error of the successor features against
  the exact ones. The quick and full presets use the points of the equal-budget tuning grid
  (`TUNED`, see `iclr25.papers.dhtm.tuning`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import apply_overrides, check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Metric
from iclr25.papers.dhtm.baselines import CloneHMM, LSTMPredictor, MarkovCounts, RWKVPredictor
from iclr25.papers.dhtm.data import END, N_STATES, make_phases
from iclr25.papers.dhtm.method import DHTM

# ---------------------------------------------------------------- config groups


@configclass
class DHTMConfig:
    """DHTM's settings (the paper's online config has 40 cells, 3 copies, 4 variables)."""

    cells_per_column: Annotated[int, Range(1, None)] = 40
    """Cells per column (paper's online config: 40)."""
    # DEVIATION: DHTM uses one hidden variable and two variables per factor (the batch config's
    # factor size) instead of the online config's r = 3 and 4 variables per factor: with our
    # reading of factor creation every copy then conditions on all three sampled copies, which
    # multiplies the contexts to learn (the benchmark times the online config too).
    copies: Annotated[int, Range(1, None)] = 1
    """Hidden variables per observation variable (paper's online config: 3)."""
    vars_per_factor: Annotated[int, Range(1, None)] = 2
    """Variables per factor (previous hidden state and action)."""
    lr_f: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.1
    """Learning rate of segment values (paper: 0.1)."""
    burst: Literal["least_used", "uniform"] = "least_used"
    """Rule when no cell of the observed column is predicted (see `DHTM`): our least-used rule,
    or the notes' uniform bursting."""

    def __post_init__(self) -> None:
        check(
            self.burst in ("least_used", "uniform"),
            "burst",
            self.burst,
            "'least_used' or 'uniform'",
        )
        check(
            self.vars_per_factor <= self.copies + 1,
            "vars_per_factor",
            self.vars_per_factor,
            f"<= copies + 1 = {self.copies + 1}",
        )


@configclass
class RNNConfig:
    """A recurrent baseline (LSTM or RWKV) and its replay schedule (the paper's by default)."""

    hidden: Annotated[int, Range(1, None)] = 100
    """Width (paper: 100)."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 0.002
    """Adam learning rate (paper: 0.002)."""
    buffer: Annotated[int, Range(1, None)] = 1000
    """Episodes in the replay buffer (paper: 1000 trajectories)."""
    train_every: Annotated[int, Range(1, None)] = 10
    """Episodes between buffer training rounds (paper: 10)."""
    batches: Annotated[int, Range(0, None)] = 50
    """Random batches per training round (paper: 50)."""
    batch_size: Annotated[int, Range(1, None)] = 50
    """Episodes per batch (paper: 50)."""
    online_steps: Annotated[int, Range(0, None)] = 1
    """Adam steps on each finished episode."""


@configclass
class CSCGConfig:
    """The clone-structured HMM, refit by EM on a sliding buffer of episodes, each refit from a
    fresh random matrix (the official agent's `prev_matrix_as_init: false`), EM until an
    iteration gains less than `em_tol` nats of log-likelihood per step or `em_iters` iterations
    (official: no gain for 4 iterations in a row, at most 1000)."""

    clones: Annotated[int, Range(1, None)] = 10
    """Clones per symbol (paper: 10)."""
    buffer: Annotated[int, Range(1, None)] = 200
    """Episodes in the sliding EM buffer."""
    refit_every: Annotated[int, Range(1, None)] = 50
    """Episodes between refits."""
    em_iters: Annotated[int, Range(1, None)] = 200
    """Most Baum-Welch iterations per refit."""
    em_tol: Annotated[float, Range(0, None)] = 1e-4
    """Early stop: log-likelihood gain per step of one iteration (nats)."""


@configclass
class MarkovConfig:
    """First-order transition counts with forgetting."""

    forgetting: Annotated[float, Range(0, 1, high_open=True)] = 0.01
    """Per-step forgetting of the counts."""


def build_memory(
    name: str,
    group: DHTMConfig | RNNConfig | CSCGConfig | MarkovConfig,
    n_obs: int,
    n_actions: int,
    seed: int,
    end_state: int | None = None,
):
    """A fresh model `name` ("dhtm", "lstm", "rwkv", "cscg", "markov") from its config group."""
    if name == "dhtm":
        return DHTM(
            n_obs,
            n_actions,
            cells_per_column=group.cells_per_column,
            n_copies=group.copies,
            n_vars_per_factor=group.vars_per_factor,
            lr_f=group.lr_f,
            burst=group.burst,
            random_state=seed,
        )
    if name in ("lstm", "rwkv"):
        cls = LSTMPredictor if name == "lstm" else RWKVPredictor
        return cls(
            n_obs,
            n_actions,
            hidden=group.hidden,
            lr=group.lr,
            buffer_episodes=group.buffer,
            train_every=group.train_every,
            n_batches=group.batches,
            batch_size=group.batch_size,
            online_steps=group.online_steps,
            end_state=end_state,
            random_state=seed,
        )
    if name == "cscg":
        return CloneHMM(
            n_obs,
            n_actions,
            clones=group.clones,
            buffer_episodes=group.buffer,
            refit_every=group.refit_every,
            em_iters=group.em_iters,
            em_tol=group.em_tol,
            end_state=end_state,
            random_state=seed,
        )
    return MarkovCounts(n_obs, forgetting=group.forgetting, end_state=end_state)


# ---------------------------------------------------------------- the sequence task

SEQ_METHODS = ("dhtm", "lstm", "rwkv", "cscg", "markov")
GENERATORS = ("deterministic", "stochastic_transitions", "noisy_emissions")


@configclass
class SequenceConfig:
    """Online next-symbol prediction on non-stationary aliased sequences (synthetic)."""

    phase_episodes: Annotated[tuple[int, ...], Range(1, None)] = (500, 500, 500)
    """Episodes per phase; phases alternate A, B, A, ... (the switch is after the first, the
    switch back after the second)."""
    # DEVIATION: the notes ask for deterministic and stochastic sequences without saying how;
    # "stochastic transitions" (the notes: one-sample learning is noisy on stochastic
    # transitions) is a random redraw of the sequence before each symbol, a hidden Markov chain
    # that a clone-structured model represents exactly; "noisy emissions" (each symbol replaced
    # by a uniform one) is our harder variant, which no model with deterministic emissions
    # represents. The oracle is exact for all three.
    generator: Literal["deterministic", "stochastic_transitions", "noisy_emissions"] = (
        "deterministic"
    )
    """Sequence generator: deterministic (each sequence's symbols fixed), stochastic transitions
    (the sequence redrawn with probability `jump` before each of the symbols 2-5) or noisy
    emissions (each symbol replaced by a uniformly drawn one with probability `noise`)."""
    jump: Annotated[float, Range(0, 1, high_open=True)] = 0.1
    """Redraw probability of the stochastic-transition generator (unused otherwise)."""
    noise: Annotated[float, Range(0, 1, high_open=True)] = 0.1
    """Replacement probability of the noisy-emission generator (unused otherwise)."""
    methods: tuple[str, ...] = SEQ_METHODS
    """Models to run (dhtm, lstm, rwkv, cscg, markov)."""
    window: Annotated[int, Range(1, None)] = 20
    """Episodes in the trailing window of the surprise curve."""
    recovery_tol: Annotated[float, Range(0, None, low_open=True)] = 0.1
    """Recovery: the windowed surprise excess over the oracle falls to this (nats)."""
    smoothing: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 1e-3
    """Every prediction (and the oracle's) is mixed with this much of the uniform
    distribution before taking -log, so that a zero prediction costs a finite surprise."""
    gamma: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.8
    """Discount of the successor features."""
    sf_horizon: Annotated[int, Range(1, None)] = 10
    """Rollout horizon of the successor features."""
    sf_eval_episodes: Annotated[int, Range(1, None)] = 50
    """Successor-feature error is measured on the last this many episodes of each phase."""
    dhtm: DHTMConfig = DHTMConfig()
    """DHTM."""
    lstm: RNNConfig = RNNConfig()
    """The LSTM baseline."""
    rwkv: RNNConfig = RNNConfig()
    """The RWKV baseline."""
    cscg: CSCGConfig = CSCGConfig()
    """The CSCG baseline."""
    markov: MarkovConfig = MarkovConfig()
    """The first-order Markov baseline."""

    def __post_init__(self) -> None:
        check(
            len(self.phase_episodes) >= 2,
            "phase_episodes",
            self.phase_episodes,
            "at least two phases of >= 1 episode",
        )
        check(
            self.generator in GENERATORS,
            "generator",
            self.generator,
            f"one of {GENERATORS}",
        )
        check(
            len(self.methods) >= 1 and set(self.methods) <= set(SEQ_METHODS),
            "methods",
            self.methods,
            f"a non-empty subset of {SEQ_METHODS}",
        )
        check(
            self.window <= min(self.phase_episodes),
            "window",
            self.window,
            "<= the shortest phase",
        )
        check(
            self.sf_eval_episodes <= min(self.phase_episodes),
            "sf_eval_episodes",
            self.sf_eval_episodes,
            "in [1, the shortest phase]",
        )


def build_model(name: str, cfg: SequenceConfig, seed: int):
    """A fresh model `name` for the sequence task (one action, END ends every episode)."""
    return build_memory(name, getattr(cfg, name), N_STATES, 1, seed, end_state=END)


# DEVIATION: surprise is -log of the prediction mixed with `smoothing` of the uniform
# distribution (after normalising; a zero prediction counts as uniform), for every model and the
# oracle alike, so that DHTM's all-zero predictions have a finite cost. Episodes end with an END
# symbol that every model predicts; SFs cover the 9 symbols and stop at END (exact SFs are
# truncated there too). The first symbol of an episode (no context) is not scored.
def _smooth(p: np.ndarray, eps: float) -> np.ndarray:
    s = p.sum()
    q = p / s if s > 0 else np.full(p.shape, 1.0 / p.size)
    return (1 - eps) * q + eps / p.size


def windowed(x: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over at most `window` values (fewer at the start)."""
    c = np.concatenate([[0.0], np.cumsum(x)])
    i = np.arange(1, len(x) + 1)
    lo = np.maximum(0, i - window)
    return (c[i] - c[lo]) / (i - lo)


_KINDS = ("unexpected", "after_unexpected", "clean")
UNEXPECTED = 0.05
"""A step is *unexpected* when the oracle gives the observed symbol less than this (a redraw or a
replaced symbol that no likely sequence explains; under the deterministic generator no step
is, the oracle's smallest probability being 1/12)."""


def _step_kinds(episode: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Kind of each scored step t = 1..len-1 of an episode: 0 unexpected (the oracle gives
    o_t less than `UNEXPECTED`), 1 after an unexpected step of the same episode, 2 clean."""
    unexpected = pred[np.arange(len(episode) - 1), episode[1:]] < UNEXPECTED
    after = np.cumsum(unexpected) - unexpected > 0
    return np.where(unexpected, 0, np.where(after, 1, 2))


def recovery_time(excess: np.ndarray, window: int, tol: float) -> float:
    """Episodes after a switch until the trailing-window excess surprise (a full window, all
    after the switch) is <= tol; the phase length if never (censored)."""
    w = windowed(excess, window)[window - 1 :]
    hit = np.flatnonzero(w <= tol)
    return float(hit[0] + window) if hit.size else float(len(excess))


def episode_stream(cfg: SequenceConfig, ctx: RunContext):
    """The processes of the phases (A, B, A, ...) and the stream of (phase index, episode)."""
    noise = cfg.noise if cfg.generator == "noisy_emissions" else 0.0
    jump = cfg.jump if cfg.generator == "stochastic_transitions" else 0.0
    phase_a, phase_b = make_phases(ctx.rngs.child("process").np, noise, jump)
    processes = [phase_a if i % 2 == 0 else phase_b for i in range(len(cfg.phase_episodes))]
    erng = ctx.rngs.child("episodes").np
    stream = [
        (k, p.sample(erng))
        for k, (p, n) in enumerate(zip(processes, cfg.phase_episodes))
        for _ in range(n)
    ]
    return processes, stream


def run_sequences(cfg: SequenceConfig, ctx: RunContext) -> dict[str, float]:
    """Every model on the same episode stream; metrics per model."""
    processes, stream = episode_stream(cfg, ctx)
    oracle = [processes[k].oracle(e, cfg.gamma, cfg.sf_horizon) for k, e in stream]
    bounds = np.cumsum((0, *cfg.phase_episodes))
    sf_from = bounds[1:] - cfg.sf_eval_episodes  # SF error on the last episodes of each phase
    metrics: dict[str, float] = {}
    kinds_from = (bounds[0] + bounds[1]) // 2  # the step kinds are scored in phase A's 2nd half
    oracle_surprise = np.array(
        [
            -np.mean([np.log(_smooth(pred[t], cfg.smoothing)[o]) for t, o in enumerate(e[1:])])
            for (_, e), (pred, _) in zip(stream, oracle)
        ]
    )
    oracle_curve = windowed(oracle_surprise, cfg.window)
    for i in range(0, len(stream), 5):
        ctx.log(i, **{"oracle/surprise": oracle_curve[i]})
    model_seed = ctx.rngs.child("models").int_seed()
    for name in ctx.progress(cfg.methods, desc="models"):
        model = build_model(name, cfg, model_seed)
        excess = np.zeros(len(stream))
        surprise = np.zeros(len(stream))
        # excess surprise per step in the second half of phase A, by kind of step (see
        # `_step_kinds`): sums and counts for unexpected, after-unexpected and clean steps
        kind_sum, kind_n = np.zeros(3), np.zeros(3)
        sf_err: list[list[float]] = [[] for _ in cfg.phase_episodes]
        t0 = time.perf_counter()
        steps = 0
        for i, ((k, episode), (pred, sf_true)) in enumerate(zip(stream, oracle)):
            model.reset()
            total = raw = 0.0
            kinds = _step_kinds(episode, pred) if kinds_from <= i < bounds[1] else None
            for t, o in enumerate(episode):
                if t > 0:
                    p = _smooth(model.predict_next(), cfg.smoothing)
                    q = _smooth(pred[t - 1], cfg.smoothing)
                    total += np.log(q[o]) - np.log(p[o])
                    raw -= np.log(p[o])
                    if kinds is not None:
                        kind_sum[kinds[t - 1]] += np.log(q[o]) - np.log(p[o])
                        kind_n[kinds[t - 1]] += 1
                model.partial_fit(int(o), 0)
                steps += 1
                if i >= sf_from[k]:
                    sf = model.successor_features(cfg.gamma, cfg.sf_horizon)
                    sf_err[k].append(float(np.abs(sf - sf_true[t]).sum()))
            excess[i] = total / (len(episode) - 1)
            surprise[i] = raw / (len(episode) - 1)
        elapsed = time.perf_counter() - t0
        curve = windowed(excess, cfg.window)
        raw_curve = windowed(surprise, cfg.window)
        for i in range(0, len(stream), 5):
            ctx.log(i, **{f"{name}/excess_surprise": curve[i], f"{name}/surprise": raw_curve[i]})
        if cfg.generator != "deterministic":
            for kind, n, tot in zip(_KINDS, kind_n, kind_sum):
                metrics[f"{name}/excess_{kind}"] = float(tot / n) if n else float("nan")
        post = excess[bounds[1] : bounds[2]]
        metrics[f"{name}/pre_switch_surprise"] = float(
            excess[bounds[1] - cfg.window : bounds[1]].mean()
        )
        metrics[f"{name}/recovery_episodes"] = recovery_time(post, cfg.window, cfg.recovery_tol)
        metrics[f"{name}/post_switch_area"] = float(post.sum())
        metrics[f"{name}/sf_error_pre_switch"] = float(np.mean(sf_err[0]))
        metrics[f"{name}/sf_error"] = float(np.mean(sf_err[1]))
        if len(cfg.phase_episodes) >= 3:
            back = excess[bounds[2] : bounds[3]]
            metrics[f"{name}/recovery_episodes_back"] = recovery_time(
                back, cfg.window, cfg.recovery_tol
            )
            metrics[f"{name}/post_switch_area_back"] = float(back.sum())
        metrics[f"{name}/final_surprise"] = float(excess[-cfg.window :].mean())
        metrics[f"{name}/steps_per_s"] = steps / elapsed
        if name == "dhtm":
            metrics["dhtm/segments"] = float(model.n_segments)
    return metrics


# The grid point chosen for each model by `iclr25.papers.dhtm.tuning` on the tuning seeds
# (benchmarks/results/dhtm_tuning.json; a test checks that they agree), used by quick and full.
# DEVIATION: the quick and full presets use the tuned points, not the paper's settings: DHTM
# least-used bursting (ours; the official rule is uniform) and segment learning rate 0.15 (paper:
# 0.1); LSTM Adam learning rate 0.000125 with 40 online steps per finished episode, RWKV 0.00003125
# with 20 (paper: 0.002 and no online steps) on top of the paper's replay schedule; CSCG 20
# clones (paper: 10) refit after every episode. Grids of 24 points per model scored at a reduced
# scale (200 episodes per phase, 10 replay batches per round, 3 tuning seeds). Every learning
# rate and clone count chosen is interior; CSCG's refit after every episode is the shortest
# interval there is; the recurrent baselines' online steps sit on the axis' top (40 and 20),
# which is where the full preset's 30-minute budget ends; DHTM's lr is interior. Markov counts
# are not tuned.
TUNED: dict[str, object] = {
    "dhtm.burst": "least_used",
    "dhtm.lr_f": 0.15,
    "lstm.lr": 0.000125,
    "lstm.online_steps": 40,
    "rwkv.lr": 0.00003125,
    "rwkv.online_steps": 20,
    "cscg.clones": 20,
    "cscg.refit_every": 1,
}
"""Config overrides (dotted keys) of the chosen grid points."""


def with_rnn(cfg: SequenceConfig, **fields: object) -> SequenceConfig:
    """`cfg` with the same `RNNConfig` fields set for both recurrent baselines."""
    keys = {f"{m}.{k}": v for m in ("lstm", "rwkv") for k, v in fields.items()}
    return apply_overrides(cfg, keys)


def tuned(cfg: SequenceConfig) -> SequenceConfig:
    """`cfg` at the tuned grid points (`TUNED`)."""
    return apply_overrides(cfg, TUNED)


SEQ_PRESETS = {
    "smoke": with_rnn(
        SequenceConfig(
            phase_episodes=(12, 12, 12),
            window=6,
            sf_eval_episodes=2,
            cscg=CSCGConfig(refit_every=10, em_iters=3),
        ),
        hidden=16,
        batches=2,
        batch_size=8,
    ),
    # quick: 45 episodes per phase so that 3 seeds at the tuned points (the recurrent
    # baselines' online steps and CSCG's fresh-start EM after every episode) fit the 60-second
    # budget with a margin (60 episodes took 64-69 s wall, 50 took 57-60 s)
    "quick": tuned(
        with_rnn(SequenceConfig(phase_episodes=(45, 45, 45), sf_eval_episodes=30), batches=10)
    ),
    "full": tuned(SequenceConfig()),
}
"""The presets of `dhtm.sequences` (the stochastic variants derive theirs: `variant_presets`)."""
SEQ_SEEDS = {"smoke": 1, "quick": 3, "full": 10}
"""Seeds per preset of the three sequence experiments."""
SEQ_QUICK_SCALE = (
    f"at quick scale ({SEQ_SEEDS['quick']} seeds, {SEQ_PRESETS['quick'].phase_episodes[0]} "
    "episodes per phase) "
)
"""How the expected verdicts' reasons name the quick preset of the sequence experiments."""


# DEVIATION: the stochastic experiments' full presets have 300 episodes per phase (the
# deterministic one 500) to fit ten seeds in the laptop budget, and they reuse the points
# tuned on the deterministic task.
def variant_presets(generator: str) -> dict[str, SequenceConfig]:
    """The presets of a stochastic variant of `dhtm.sequences`: its presets with `generator`,
    and 300 episodes per phase at full."""
    return {
        "smoke": dataclasses.replace(SEQ_PRESETS["smoke"], generator=generator),
        "quick": dataclasses.replace(SEQ_PRESETS["quick"], generator=generator),
        "full": dataclasses.replace(
            SEQ_PRESETS["full"], generator=generator, phase_episodes=(300, 300, 300)
        ),
    }


_RECOVERY = "episodes after the switch until the 20-episode windowed surprise is within 0.1 nats "
_AREA = "summed per-episode surprise in excess of the oracle over phase B (nats × episodes) "
_SF = "mean L1 error of the successor features (γ = 0.8, horizon 10) against the exact ones "
PAPER_ADAPT = (
    "Figures (gridworld and AnimalAI): after the change DHTM's steps to goal return to the "
    "pre-change level sooner than CSCG's, LSTM's and RWKV's (no table)"
)


def vs_baselines(
    bases: Sequence[str],
    rows: Sequence[tuple[str, str, str, str]],
    expect: Mapping[str, Mapping[str, object]],
) -> tuple[Claim, ...]:
    """One "DHTM lower than base" claim per base and row (id, metric, statement with {B} for
    the base's name, paper value), grouped by base; `expect[claim id]` is the claim's `expect`
    (every claim must have one)."""
    missing = {f"{r[0]}_vs_{b}" for b in bases for r in rows} - set(expect)
    if missing:
        raise KeyError(f"claims without expected verdicts: {sorted(missing)}")
    return tuple(
        Claim(
            id=f"{cid}_vs_{base}",
            statement=statement.replace("{B}", base.upper()),
            metric=metric,
            treatment="dhtm",
            control=base,
            direction="lower",
            paper_value=paper,
            expect=dict(expect[f"{cid}_vs_{base}"]),
        )
        for base in bases
        for cid, metric, statement, paper in rows
    )


SEQ_CLAIM_ROWS = (
    (
        "recovery",
        "recovery_episodes",
        "After the switch DHTM recovers faster than {B}: " + _RECOVERY + "of the oracle, "
        "lower for DHTM.",
        PAPER_ADAPT,
    ),
    (
        "area",
        "post_switch_area",
        "DHTM's area under the post-switch surprise curve is below {B}'s: "
        + _AREA
        + "lower for DHTM.",
        PAPER_ADAPT,
    ),
    (
        "recovery_back",
        "recovery_episodes_back",
        "After the switch back to A DHTM recovers faster than {B}: "
        + _RECOVERY.replace("the switch", "the switch back")
        + "of the oracle, lower for DHTM.",
        PAPER_ADAPT,
    ),
    (
        "area_back",
        "post_switch_area_back",
        "DHTM's area under the surprise curve after the switch back is below {B}'s: "
        + _AREA.replace("phase B", "the second phase A")
        + "lower for DHTM.",
        PAPER_ADAPT,
    ),
    (
        "sf_error",
        "sf_error",
        "After adaptation DHTM's successor features are at least as accurate as {B}'s: "
        + _SF
        + "over the last episodes of phase B, lower for DHTM.",
        "SFs are formed by DHTM's rollouts; no SF-error number is reported",
    ),
)
"""The claims of both sequence experiments: (id, metric, statement, paper value) per row,
judged against each of LSTM, RWKV and CSCG."""

sequence_claims = functools.partial(vs_baselines, ("lstm", "rwkv", "cscg"), SEQ_CLAIM_ROWS)
"""`sequence_claims(expect)`: the sequence claims with their expected verdicts."""

SEQ_METRICS = (
    Metric(
        "*/pre_switch_surprise",
        "lower",
        "mean excess surprise over the oracle (nats/step) over the last window of phase A",
    ),
    Metric("*/recovery_episodes", "lower", _RECOVERY + "of the oracle (phase length if never)"),
    Metric("*/recovery_episodes_back", "lower", "the same after the switch back to A"),
    Metric("*/post_switch_area", "lower", _AREA),
    Metric("*/post_switch_area_back", "lower", "the same over the phase after the switch back"),
    Metric("*/sf_error", "lower", _SF + "over the last episodes of phase B"),
    Metric("*/sf_error_pre_switch", "lower", _SF + "over the last episodes of phase A"),
    Metric("*/final_surprise", "lower", "mean excess surprise over the last window of the run"),
    Metric(
        "*/steps_per_s",
        "higher",
        "observation steps per second of wall clock, including "
        "learning, prediction and SF rollouts",
        volatile=True,
    ),
    Metric("dhtm/segments", "none", "live DHTM segments at the end of the run"),
    Metric(
        "*/excess_unexpected",
        "lower",
        "stochastic generators only: mean excess surprise over the oracle (nats) at unexpected "
        "steps (the oracle gives the symbol < 0.05), second half of phase A",
    ),
    Metric(
        "*/excess_after_unexpected",
        "lower",
        "stochastic generators only: the same at the later steps of an episode with an "
        "unexpected step (does the model keep its context after the noise?)",
    ),
    Metric(
        "*/excess_clean",
        "lower",
        "stochastic generators only: the same at the steps of episodes before any unexpected step",
    ),
)
