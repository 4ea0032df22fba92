"""Experiments of the DHTM paper.

- `dhtm.sequences`: aliased sequences whose tail depends on the symbol four steps back, with a
  switch of the generating process (tails rotated, probabilities permuted) after phase A and a
  switch back to A after phase B. Every model learns online, one episode at a time, with its
  memory reset at episode start. We measure surprise relative to the exact oracle, recovery
  time and area under the surprise curve after each switch, and the error of the successor
  features against the exact ones. The baselines (and DHTM) use the points of the equal-budget
  tuning grid (`TUNED`, see `iclr25.papers.dhtm.tuning`).
- `dhtm.sequences_stochastic`: the same with the stochastic generator (noisy emissions).
- `dhtm.gridworld`: the successor-feature agent in a partially observed gridworld whose layout
  changes mid-run.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iclr25.core.claims import Claim
from iclr25.core.config import check
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.dhtm import plots
from iclr25.papers.dhtm.baselines import CloneHMM, LSTMPredictor, MarkovCounts, RWKVPredictor
from iclr25.papers.dhtm.data import END, N_STATES, make_phases
from iclr25.papers.dhtm.method import DHTM

SEQ_METHODS = ("dhtm", "lstm", "rwkv", "cscg", "markov")


@dataclass(frozen=True)
class SequenceConfig:
    """Online next-symbol prediction on non-stationary aliased sequences (synthetic)."""

    phase_episodes: tuple[int, ...] = (500, 500, 500)
    """Episodes per phase; phases alternate A, B, A, ... (the switch is after the first, the
    switch back after the second)."""
    # DEVIATION: the stochastic generator variant is ours (the notes only ask for
    # deterministic vs stochastic sequences): noisy emissions, each symbol replaced with
    # probability `noise` by a uniform one; the oracle stays exact.
    generator: Literal["deterministic", "stochastic"] = "deterministic"
    """Sequence generator: deterministic (each sequence's symbols fixed) or stochastic (each
    symbol replaced by a uniformly drawn one with probability `noise`)."""
    noise: float = 0.1
    """Replacement probability of the stochastic generator (unused when deterministic)."""
    methods: tuple[str, ...] = SEQ_METHODS
    """Models to run (dhtm, lstm, rwkv, cscg, markov)."""
    window: int = 20
    """Episodes in the trailing window of the surprise curve."""
    recovery_tol: float = 0.1
    """Recovery: the windowed surprise excess over the oracle falls to this (nats)."""
    smoothing: float = 1e-3
    """Every prediction (and the oracle's) is mixed with this much of the uniform
    distribution before taking -log, so that a zero prediction costs a finite surprise."""
    gamma: float = 0.8
    """Discount of the successor features."""
    sf_horizon: int = 10
    """Rollout horizon of the successor features."""
    sf_eval_episodes: int = 50
    """Successor-feature error is measured on the last this many episodes of each phase."""
    dhtm_cells_per_column: int = 40
    """DHTM: cells per column (paper's online config: 40)."""
    # DEVIATION: DHTM uses one hidden variable and two variables per factor (the batch config's
    # factor size) instead of the online config's r = 3 and 4 variables per factor: with our
    # reading of factor creation every copy then conditions on all three sampled copies, which
    # multiplies the contexts to learn (the benchmark times the online config too).
    dhtm_copies: int = 1
    """DHTM: hidden variables per observation variable (paper's online config: 3)."""
    dhtm_vars_per_factor: int = 2
    """DHTM: variables per factor (previous hidden state and action)."""
    dhtm_lr_f: float = 0.1
    """DHTM: learning rate of segment values (paper: 0.1)."""
    rnn_hidden: int = 100
    """LSTM and RWKV width (paper: 100)."""
    lstm_lr: float = 0.002
    """Adam learning rate of the LSTM (paper: 0.002)."""
    rwkv_lr: float = 0.002
    """Adam learning rate of RWKV (paper: 0.002)."""
    rnn_buffer: int = 1000
    """Episodes in the LSTM/RWKV replay buffer (paper: 1000 trajectories)."""
    rnn_train_every: int = 10
    """Episodes between buffer training rounds (paper: 10)."""
    rnn_batches: int = 50
    """Random batches per training round (paper: 50)."""
    rnn_batch_size: int = 50
    """Episodes per batch (paper: 50)."""
    lstm_online_steps: int = 1
    """LSTM: Adam steps on each finished episode."""
    rwkv_online_steps: int = 1
    """RWKV: Adam steps on each finished episode."""
    cscg_clones: int = 10
    """CSCG clones per symbol (paper: 10)."""
    cscg_buffer: int = 200
    """Episodes in CSCG's sliding EM buffer."""
    cscg_refit_every: int = 50
    """Episodes between CSCG refits."""
    cscg_em_iters: int = 10
    """Baum-Welch iterations per refit (warm-started)."""
    markov_forgetting: float = 0.01
    """Per-step forgetting of the first-order counts."""

    def __post_init__(self) -> None:
        check(
            len(self.phase_episodes) >= 2 and min(self.phase_episodes) >= 1,
            "phase_episodes",
            self.phase_episodes,
            "at least two phases of >= 1 episode",
        )
        check(
            len(self.methods) >= 1 and set(self.methods) <= set(SEQ_METHODS),
            "methods",
            self.methods,
            f"a non-empty subset of {SEQ_METHODS}",
        )
        check(self.window >= 1, "window", self.window, ">= 1")
        check(
            self.window <= min(self.phase_episodes),
            "window",
            self.window,
            "<= the shortest phase",
        )
        check(self.recovery_tol > 0, "recovery_tol", self.recovery_tol, "> 0")
        check(0 < self.smoothing < 1, "smoothing", self.smoothing, "in (0, 1)")
        check(0 < self.gamma < 1, "gamma", self.gamma, "in (0, 1)")
        check(self.sf_horizon >= 1, "sf_horizon", self.sf_horizon, ">= 1")
        check(
            1 <= self.sf_eval_episodes <= min(self.phase_episodes),
            "sf_eval_episodes",
            self.sf_eval_episodes,
            "in [1, the shortest phase]",
        )
        for name in (
            "dhtm_cells_per_column",
            "dhtm_copies",
            "dhtm_vars_per_factor",
            "rnn_hidden",
            "rnn_buffer",
            "rnn_train_every",
            "rnn_batch_size",
            "cscg_clones",
            "cscg_buffer",
            "cscg_refit_every",
            "cscg_em_iters",
        ):
            check(getattr(self, name) >= 1, name, getattr(self, name), ">= 1")
        check(self.rnn_batches >= 0, "rnn_batches", self.rnn_batches, ">= 0")
        for name in ("lstm_online_steps", "rwkv_online_steps"):
            check(getattr(self, name) >= 0, name, getattr(self, name), ">= 0")
        for name in ("lstm_lr", "rwkv_lr"):
            check(getattr(self, name) > 0, name, getattr(self, name), "> 0")
        check(0 < self.dhtm_lr_f < 1, "dhtm_lr_f", self.dhtm_lr_f, "in (0, 1)")
        check(0 <= self.noise < 1, "noise", self.noise, "in [0, 1)")
        check(
            self.generator in ("deterministic", "stochastic"),
            "generator",
            self.generator,
            "'deterministic' or 'stochastic'",
        )
        check(
            0 <= self.markov_forgetting < 1,
            "markov_forgetting",
            self.markov_forgetting,
            "in [0, 1)",
        )


def build_model(name: str, cfg: SequenceConfig, seed: int):
    """A fresh model `name` for the sequence task."""
    if name == "dhtm":
        return DHTM(
            N_STATES,
            1,
            cells_per_column=cfg.dhtm_cells_per_column,
            n_copies=cfg.dhtm_copies,
            n_vars_per_factor=cfg.dhtm_vars_per_factor,
            lr_f=cfg.dhtm_lr_f,
            random_state=seed,
        )
    if name in ("lstm", "rwkv"):
        cls = LSTMPredictor if name == "lstm" else RWKVPredictor
        return cls(
            N_STATES,
            hidden=cfg.rnn_hidden,
            lr=getattr(cfg, f"{name}_lr"),
            buffer_episodes=cfg.rnn_buffer,
            train_every=cfg.rnn_train_every,
            n_batches=cfg.rnn_batches,
            batch_size=cfg.rnn_batch_size,
            online_steps=getattr(cfg, f"{name}_online_steps"),
            end_state=END,
            random_state=seed,
        )
    if name == "cscg":
        return CloneHMM(
            N_STATES,
            clones=cfg.cscg_clones,
            buffer_episodes=cfg.cscg_buffer,
            refit_every=cfg.cscg_refit_every,
            em_iters=cfg.cscg_em_iters,
            end_state=END,
            random_state=seed,
        )
    return MarkovCounts(N_STATES, forgetting=cfg.markov_forgetting, end_state=END)


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


def recovery_time(excess: np.ndarray, window: int, tol: float) -> float:
    """Episodes after a switch until the trailing-window excess surprise (a full window, all
    after the switch) is <= tol; the phase length if never (censored)."""
    w = windowed(excess, window)[window - 1 :]
    hit = np.flatnonzero(w <= tol)
    return float(hit[0] + window) if hit.size else float(len(excess))


def episode_stream(cfg: SequenceConfig, ctx: RunContext):
    """The processes of the phases (A, B, A, ...) and the stream of (phase index, episode)."""
    noise = cfg.noise if cfg.generator == "stochastic" else 0.0
    phase_a, phase_b = make_phases(ctx.rngs.child("process").np, noise)
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
    model_seed = ctx.rngs.child("models").int_seed()
    for name in ctx.progress(cfg.methods, desc="models"):
        model = build_model(name, cfg, model_seed)
        excess = np.zeros(len(stream))
        sf_err: list[list[float]] = [[] for _ in cfg.phase_episodes]
        t0 = time.perf_counter()
        steps = 0
        for i, ((k, episode), (pred, sf_true)) in enumerate(zip(stream, oracle)):
            model.reset()
            total = 0.0
            for t, o in enumerate(episode):
                if t > 0:
                    p = _smooth(model.predict_next(), cfg.smoothing)
                    q = _smooth(pred[t - 1], cfg.smoothing)
                    total += np.log(q[o]) - np.log(p[o])
                model.partial_fit(int(o), 0)
                steps += 1
                if i >= sf_from[k]:
                    sf = model.successor_features(cfg.gamma, cfg.sf_horizon)
                    sf_err[k].append(float(np.abs(sf - sf_true[t]).sum()))
            excess[i] = total / (len(episode) - 1)
        elapsed = time.perf_counter() - t0
        curve = windowed(excess, cfg.window)
        for i in range(0, len(stream), 5):
            ctx.log(i, **{f"{name}/excess_surprise": curve[i]})
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
# segment learning rate 0.2 (paper: 0.1), LSTM and RWKV 5 online Adam steps per finished
# episode on top of the paper's replay schedule, CSCG refit every 25 episodes. The grid is
# small (4 points per model) and scored at a reduced scale (200 episodes per phase, 10 replay
# batches per round, 2 tuning seeds); Markov counts and the gridworld agents are not tuned.
TUNED: dict[str, object] = {
    "dhtm_cells_per_column": 40,
    "dhtm_lr_f": 0.2,
    "lstm_lr": 0.002,
    "lstm_online_steps": 5,
    "rwkv_lr": 0.002,
    "rwkv_online_steps": 5,
    "cscg_clones": 10,
    "cscg_refit_every": 25,
}

SEQ_PRESETS = {
    "smoke": SequenceConfig(
        phase_episodes=(20, 20, 20),
        window=10,
        sf_eval_episodes=5,
        rnn_hidden=16,
        rnn_batches=2,
        rnn_batch_size=8,
        cscg_refit_every=10,
        cscg_em_iters=3,
    ),
    "quick": SequenceConfig(
        phase_episodes=(100, 100, 100), sf_eval_episodes=30, rnn_batches=10, **TUNED
    ),
    "full": SequenceConfig(**TUNED),
}

# The stochastic generator variant (noisy emissions), a separate experiment so that its results
# get their own table.
# DEVIATION: the stochastic experiment's full preset has 300 episodes per phase (the
# deterministic one 500) to stay within the laptop budget, and it reuses the points tuned on
# the deterministic task.
STOCH_PRESETS = {
    "smoke": dataclasses.replace(SEQ_PRESETS["smoke"], generator="stochastic"),
    "quick": dataclasses.replace(SEQ_PRESETS["quick"], generator="stochastic"),
    "full": dataclasses.replace(
        SEQ_PRESETS["full"], generator="stochastic", phase_episodes=(300, 300, 300)
    ),
}

_RECOVERY = "episodes after the switch until the 20-episode windowed surprise is within 0.1 nats "
_AREA = "summed per-episode surprise in excess of the oracle over phase B (nats × episodes) "
_SF = "mean L1 error of the successor features (γ = 0.8, horizon 10) against the exact ones "
_PAPER_ADAPT = (
    "Figures (gridworld and AnimalAI): after the change DHTM's steps to goal return to the "
    "pre-change level sooner than CSCG's, LSTM's and RWKV's (no table)"
)


def _vs_baselines(bases, rows) -> tuple[Claim, ...]:
    """One "DHTM lower than base" claim per base and row (id, metric, statement with {B} for
    the base's name, paper value), grouped by base."""
    return tuple(
        Claim(
            id=f"{cid}_vs_{base}",
            statement=statement.replace("{B}", base.upper()),
            metric=metric,
            treatment="dhtm",
            control=base,
            direction="lower",
            paper_value=paper,
        )
        for base in bases
        for cid, metric, statement, paper in rows
    )


SEQ_CLAIMS = _vs_baselines(
    ("lstm", "rwkv", "cscg"),
    (
        (
            "recovery",
            "recovery_episodes",
            "After the switch DHTM recovers faster than {B}: " + _RECOVERY + "of the oracle, "
            "lower for DHTM.",
            _PAPER_ADAPT,
        ),
        (
            "area",
            "post_switch_area",
            "DHTM's area under the post-switch surprise curve is below {B}'s: "
            + _AREA
            + "lower for DHTM.",
            _PAPER_ADAPT,
        ),
        (
            "recovery_back",
            "recovery_episodes_back",
            "After the switch back to A DHTM recovers faster than {B}: "
            + _RECOVERY.replace("the switch", "the switch back")
            + "of the oracle, lower for DHTM.",
            _PAPER_ADAPT,
        ),
        (
            "area_back",
            "post_switch_area_back",
            "DHTM's area under the surprise curve after the switch back is below {B}'s: "
            + _AREA.replace("phase B", "the second phase A")
            + "lower for DHTM.",
            _PAPER_ADAPT,
        ),
        (
            "sf_error",
            "sf_error",
            "After adaptation DHTM's successor features are at least as accurate as {B}'s: "
            + _SF
            + "over the last episodes of phase B, lower for DHTM.",
            "SFs are formed by DHTM's rollouts; no SF-error number is reported",
        ),
    ),
)

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
)

# ---------------------------------------------------------------- gridworld

GRID_METHODS = ("dhtm", "ec", "cscg", "lstm")


@dataclass(frozen=True)
class GridConfig:
    """The successor-feature agent in a partially observed 5 x 5 gridworld whose layout
    changes from "free" to "blocked" (a wall row with one gap) mid-run."""

    # DEVIATION: 200 episodes with the change at 60 (paper: 1000, change at 300), SF horizon 15
    # (paper: up to 50), CSCG refit every 10 episodes (paper: every 500 steps), LSTM 10 replay
    # batches every 10 episodes (paper: 50): laptop budget. Recovery is judged against an
    # absolute level (twice the shortest blocked path), not each agent's own pre-change level,
    # so that an agent that never learned cannot "recover" at once.
    episodes: int = 200
    """Episodes in total (paper: 1000)."""
    change_episode: int = 60
    """The layout switches to "blocked" at the start of this episode."""
    methods: tuple[str, ...] = GRID_METHODS
    """Agents to run: the SF agent with a DHTM, CSCG or LSTM memory, and episodic control."""
    size: int = 5
    """Side of the grid."""
    n_colours: int = 4
    """Colours of the free cells (random per seed, aliased); the goal has its own."""
    max_steps: int = 50
    """Episode truncation (paper: 50)."""
    window: int = 10
    """Episodes in the trailing window of the steps-to-goal curve."""
    recovery_factor: float = 2.0
    """Recovered when the windowed steps to goal fall to this multiple of the shortest path of
    the blocked layout."""
    gamma: float = 0.8
    """SF discount (paper: 0.8)."""
    horizon: int = 15
    """SF rollout horizon (paper: up to 50)."""
    beta: float = 25.0
    """Softmax inverse temperature over normalised Q (paper: 25)."""
    reward_lr: float = 0.1
    """Learning rate of the reward vector (paper: 0.1)."""
    dhtm_cells_per_column: int = 20
    """DHTM cells per column."""
    # DEVIATION: the gridworld DHTM uses the notes' uniform bursting; the sequence experiment
    # uses our least-used rule (see `DHTM`). Chosen on pilot runs of each task (seeds 0-1).
    dhtm_burst: Literal["least_used", "uniform"] = "uniform"
    """DHTM's rule when no cell of the observed column is predicted (see `DHTM`). Uniform
    bursting (the notes' rule) merges histories that end in the same colour, which the agent
    needs to generalise across paths; our least-used rule learns a tree of histories here."""
    cscg_clones: int = 10
    """CSCG clones per colour (paper: 10)."""
    cscg_refit_every: int = 10
    """Episodes between CSCG refits (paper: every 500 steps)."""
    cscg_buffer: int = 100
    """Episodes in CSCG's EM buffer."""
    cscg_em_iters: int = 10
    """Baum-Welch iterations per refit."""
    lstm_hidden: int = 100
    """LSTM width (paper: 100)."""
    lstm_lr: float = 0.002
    """LSTM Adam learning rate (paper: 0.002)."""
    lstm_batches: int = 10
    """Random batches every 10 episodes (paper: 50)."""
    ec_epsilon: float = 0.1
    """Exploration rate of episodic control."""

    def __post_init__(self) -> None:
        check(self.episodes >= 2, "episodes", self.episodes, ">= 2")
        check(
            self.window <= self.change_episode < self.episodes,
            "change_episode",
            self.change_episode,
            "in [window, episodes)",
        )
        check(
            len(self.methods) >= 1 and set(self.methods) <= set(GRID_METHODS),
            "methods",
            self.methods,
            f"a non-empty subset of {GRID_METHODS}",
        )
        check(self.size >= 3, "size", self.size, ">= 3")
        check(self.n_colours >= 1, "n_colours", self.n_colours, ">= 1")
        for name in (
            "max_steps",
            "window",
            "horizon",
            "dhtm_cells_per_column",
            "cscg_clones",
            "cscg_refit_every",
            "cscg_buffer",
            "cscg_em_iters",
            "lstm_hidden",
        ):
            check(getattr(self, name) >= 1, name, getattr(self, name), ">= 1")
        check(self.lstm_batches >= 0, "lstm_batches", self.lstm_batches, ">= 0")
        check(self.recovery_factor >= 1, "recovery_factor", self.recovery_factor, ">= 1")
        check(0 < self.gamma < 1, "gamma", self.gamma, "in (0, 1)")
        check(self.beta > 0, "beta", self.beta, "> 0")
        check(0 < self.reward_lr <= 1, "reward_lr", self.reward_lr, "in (0, 1]")
        check(self.lstm_lr > 0, "lstm_lr", self.lstm_lr, "> 0")
        check(0 <= self.ec_epsilon <= 1, "ec_epsilon", self.ec_epsilon, "in [0, 1]")


def build_agent(name: str, cfg: GridConfig, seed: int):
    """A fresh agent `name` for the gridworld."""
    from iclr25.papers.dhtm.agent import EpisodicControl, SFAgent

    n_obs, n_act = cfg.n_colours + 1, 4
    if name == "ec":
        return EpisodicControl(n_act, epsilon=cfg.ec_epsilon, random_state=seed)
    if name == "dhtm":
        memory = DHTM(
            n_obs,
            n_act,
            cells_per_column=cfg.dhtm_cells_per_column,
            n_copies=1,
            n_vars_per_factor=2,
            burst=cfg.dhtm_burst,
            random_state=seed,
        )
    elif name == "cscg":
        memory = CloneHMM(
            n_obs,
            n_act,
            clones=cfg.cscg_clones,
            buffer_episodes=cfg.cscg_buffer,
            refit_every=cfg.cscg_refit_every,
            em_iters=cfg.cscg_em_iters,
            random_state=seed,
        )
    else:
        memory = LSTMPredictor(
            n_obs,
            n_act,
            hidden=cfg.lstm_hidden,
            lr=cfg.lstm_lr,
            n_batches=cfg.lstm_batches,
            random_state=seed,
        )
    return SFAgent(
        memory,
        n_obs,
        n_act,
        gamma=cfg.gamma,
        horizon=cfg.horizon,
        beta=cfg.beta,
        reward_lr=cfg.reward_lr,
        random_state=seed + 1,
    )


def run_episode(env, agent) -> int:
    """One episode; returns the number of steps taken."""
    agent.reset()
    obs, _ = env.reset()
    action = agent.step(obs)
    steps = 0
    while True:
        obs, reward, terminated, truncated, _ = env.step(action)
        steps += 1
        if terminated or truncated:
            agent.end(obs, reward)
            return steps
        action = agent.step(obs, reward)


def run_gridworld(cfg: GridConfig, ctx: RunContext) -> dict[str, float]:
    """Every agent in its own copy of the same (seeded) gridworld; steps to goal per episode."""
    from iclr25.papers.dhtm.env import GridWorldPOMDP

    colour_seed = ctx.rngs.child("colours").int_seed()
    agent_seed = ctx.rngs.child("agents").int_seed()
    metrics: dict[str, float] = {}
    for name in ctx.progress(cfg.methods, desc="agents"):
        env = GridWorldPOMDP(
            cfg.size, cfg.n_colours, "free", cfg.max_steps, colour_seed=colour_seed
        )
        agent = build_agent(name, cfg, agent_seed)
        steps = np.zeros(cfg.episodes)
        t0 = time.perf_counter()
        for i in range(cfg.episodes):
            if i == cfg.change_episode:
                env.set_layout("blocked")
                target = cfg.recovery_factor * env.shortest_path()
            steps[i] = run_episode(env, agent)
        elapsed = time.perf_counter() - t0
        curve = windowed(steps, cfg.window)
        for i in range(cfg.episodes):
            ctx.log(i, **{f"{name}/steps_to_goal": curve[i]})
        post = steps[cfg.change_episode :]
        w = windowed(post, cfg.window)[cfg.window - 1 :]
        hit = np.flatnonzero(w <= target)
        metrics[f"{name}/pre_change_steps"] = float(
            steps[cfg.change_episode - cfg.window : cfg.change_episode].mean()
        )
        metrics[f"{name}/recovery_episodes"] = float(hit[0] + cfg.window if hit.size else len(post))
        metrics[f"{name}/post_change_steps"] = float(post.mean())
        metrics[f"{name}/final_steps"] = float(steps[-cfg.window :].mean())
        metrics[f"{name}/episodes_per_s"] = cfg.episodes / elapsed
    return metrics


GRID_PRESETS = {
    "smoke": GridConfig(
        episodes=6,
        change_episode=3,
        window=2,
        max_steps=15,
        horizon=4,
        dhtm_cells_per_column=4,
        cscg_clones=2,
        cscg_refit_every=2,
        cscg_em_iters=2,
        lstm_hidden=8,
        lstm_batches=1,
    ),
    "quick": GridConfig(episodes=40, change_episode=20, window=5, lstm_batches=5),
    "full": GridConfig(),
}

_GRID_RECOVERY = (
    "episodes after the layout change until the windowed steps to goal fall to twice the "
    "shortest path of the blocked layout"
)


GRID_CLAIMS = _vs_baselines(
    ("cscg", "lstm"),
    (
        (
            "grid_recovery",
            "recovery_episodes",
            "In the gridworld DHTM's steps to goal recover sooner than {B}'s after the layout "
            "change: " + _GRID_RECOVERY + ", lower.",
            _PAPER_ADAPT,
        ),
        (
            "grid_post_change",
            "post_change_steps",
            "DHTM needs fewer steps to goal than {B} on average after the change.",
            _PAPER_ADAPT,
        ),
    ),
)

GRID_METRICS = (
    Metric("*/pre_change_steps", "lower", "mean steps to goal over the window before the change"),
    Metric("*/recovery_episodes", "lower", _GRID_RECOVERY + " (run length if never)"),
    Metric("*/post_change_steps", "lower", "mean steps to goal over the episodes after the change"),
    Metric("*/final_steps", "lower", "mean steps to goal over the last window"),
    Metric("*/episodes_per_s", "higher", "episodes per second of wall clock", volatile=True),
)

EXPERIMENTS = (
    Experiment(
        name="dhtm.sequences",
        summary="Online prediction of aliased sequences (8 symbols, context 4 back) with a "
        "switch of the process: DHTM against LSTM, RWKV, CSCG and Markov counts, surprise "
        "relative to the exact oracle, recovery after the switch, successor-feature error.",
        config=SequenceConfig,
        presets=SEQ_PRESETS,
        run=run_sequences,
        claims=SEQ_CLAIMS,
        metrics=SEQ_METRICS,
        seeds={"smoke": 1, "quick": 3, "full": 5},
        figures=plots.sequence_figures,
    ),
    Experiment(
        name="dhtm.sequences_stochastic",
        summary="The sequence task with the stochastic generator (each symbol replaced by a "
        "uniform one with probability 0.1; exact oracle): the same models, metrics and claims.",
        config=SequenceConfig,
        presets=STOCH_PRESETS,
        run=run_sequences,
        claims=SEQ_CLAIMS,
        metrics=SEQ_METRICS,
        seeds={"smoke": 1, "quick": 3, "full": 5},
        figures=functools.partial(plots.sequence_figures, name="dhtm.sequences_stochastic"),
    ),
    Experiment(
        name="dhtm.gridworld",
        summary="Successor-feature agent in a partially observed 5x5 gridworld (the agent sees "
        "its cell's colour) whose layout changes mid-run: DHTM, CSCG and LSTM memories, and "
        "episodic control; steps to goal per episode.",
        config=GridConfig,
        presets=GRID_PRESETS,
        run=run_gridworld,
        claims=GRID_CLAIMS,
        metrics=GRID_METRICS,
        seeds={"smoke": 1, "quick": 3, "full": 5},
        figures=plots.grid_figures,
    ),
)
