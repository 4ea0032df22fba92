"""`dhtm.gridworld`: the successor-feature agent in a partially observed gridworld whose layout
changes mid-run, with DHTM, CSCG and LSTM as its memory, and episodic control."""

from __future__ import annotations

import time
from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.config import apply_overrides, check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.dhtm import plots
from iclr25.papers.dhtm.training import (
    PAPER_ADAPT,
    CSCGConfig,
    DHTMConfig,
    RNNConfig,
    build_memory,
    vs_baselines,
    windowed,
)

GRID_METHODS = ("dhtm", "ec", "cscg", "lstm")


@configclass
class ECConfig:
    """Episodic control."""

    epsilon: Annotated[float, Range(0, 1)] = 0.1
    """Exploration rate."""


@configclass
class GridConfig:
    """The successor-feature agent in a partially observed 5 x 5 gridworld whose layout
    changes from "free" to "blocked" (a wall across part of a row) mid-run."""

    # DEVIATION: 200 episodes with the change at 60 by default, the tuning scale (paper: 1000,
    # change at 300; the full preset: 450 and 135), LSTM 10 replay batches every 10 episodes
    # (paper: 50): laptop budget. Recovery is judged against an absolute level (twice the
    # shortest blocked path), not each agent's own pre-change level, so that an agent that never
    # learned cannot "recover" at once.
    episodes: Annotated[int, Range(2, None)] = 200
    """Episodes in total (paper: 1000)."""
    change_episode: int = 60
    """The layout switches to "blocked" at the start of this episode."""
    methods: tuple[str, ...] = GRID_METHODS
    """Agents to run: the SF agent with a DHTM, CSCG or LSTM memory, and episodic control."""
    size: Annotated[int, Range(4, None)] = 5
    """Side of the grid."""
    n_colours: Annotated[int, Range(1, None)] = 4
    """Colours of the free cells (random per seed, aliased); the goal has its own."""
    max_steps: Annotated[int, Range(1, None)] = 50
    """Episode truncation (paper: 50)."""
    window: Annotated[int, Range(1, None)] = 10
    """Episodes in the trailing window of the steps-to-goal curve."""
    recovery_factor: Annotated[float, Range(1, None)] = 2.0
    """Recovered when the windowed steps to goal fall to this multiple of the shortest path of
    the blocked layout."""
    gamma: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.8
    """SF discount (paper: 0.8)."""
    horizon: Annotated[int, Range(1, None)] = 50
    """SF rollout horizon (paper: up to 50)."""
    beta: Annotated[float, Range(0, None, low_open=True)] = 25.0
    """Softmax inverse temperature over normalised Q (paper: 25)."""
    reward_lr: Annotated[float, Range(0, 1, low_open=True)] = 0.1
    """Learning rate of the reward vector (paper: 0.1)."""
    collision_hint: bool = True
    """A collision is observed as a border or wall symbol (the official environment's rule);
    False: the cell's colour again (our earlier variant)."""
    dhtm: DHTMConfig = DHTMConfig(cells_per_column=40, copies=3, vars_per_factor=4, burst="uniform")
    """The DHTM memory: the paper's online config (40 cells per colour, 3 hidden variables per
    observation, 4 variables per factor) with the official uniform bursting. (The sequence
    experiments use 1 copy and 2 variables per factor, see `DHTMConfig`; here the one-copy
    memory never found the detour after the layout change.)"""
    cscg: CSCGConfig = CSCGConfig(buffer=100, refit_every=10)
    """The CSCG memory (10 clones per colour, refit every 10 episodes from a fresh random
    matrix; official: every 500 steps, on the whole history)."""
    lstm: RNNConfig = RNNConfig(batches=10)
    """The LSTM memory (width 100, lr 0.002, 10 random batches every 10 episodes; paper:
    50)."""
    ec: ECConfig = ECConfig()
    """Episodic control."""

    def __post_init__(self) -> None:
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


# DEVIATION: the full preset runs 450 episodes with the change at 135 (the paper: 1000 and 300,
# the same ratio): at SF horizon 50 a 650-episode seed 0 took about 640 s of CSCG and LSTM
# alone (CSCG's 40 clones refitting from a fresh start after every episode 407 s, the LSTM's 40
# online steps per episode 232 s, one job per core) and DHTM adds up to about 90 s on a seed
# where it is slow to find the detour; 5 seeds at 2 jobs take about 3 seed-lengths, so 450
# episodes (about 540 s per seed at most) keep them inside 30 minutes.
FULL_EPISODES, FULL_CHANGE = 450, 135

GRID_TUNED: dict[str, object] = {
    "dhtm.burst": "uniform",
    "dhtm.lr_f": 0.1,
    "cscg.clones": 40,
    "cscg.refit_every": 1,
    "lstm.lr": 0.002,
    "lstm.online_steps": 40,
    "ec.epsilon": 0.01,
}
"""Config overrides (dotted keys) of the gridworld agents' chosen grid points
(`iclr25.papers.dhtm.tuning.GRID_WORLD`, chosen on tuning seeds 100-102 at 200 episodes; a test
checks them against `benchmarks/results/dhtm_gridworld_tuning.json`), used by the quick and
full presets. CSCG's 40 clones and the LSTM's 40 online steps sit on the tops of their axes,
where the budget ends (see the page); refitting every episode is the shortest interval."""

PRESETS = {
    "smoke": GridConfig(
        episodes=6,
        change_episode=3,
        window=2,
        max_steps=15,
        horizon=4,
        dhtm=DHTMConfig(cells_per_column=4, copies=3, vars_per_factor=4, burst="uniform"),
        cscg=CSCGConfig(clones=2, buffer=100, refit_every=2, em_iters=2),
        lstm=RNNConfig(hidden=8, batches=1),
    ),
    # quick: 24 episodes, the change at 12; at horizon 50 with the LSTM's 40 online steps, 40
    # episodes (change at 20) took 101 s for 3 seeds at 2 jobs, over the 60-second budget
    "quick": apply_overrides(
        GridConfig(episodes=24, change_episode=12, window=5, lstm=RNNConfig(batches=5)), GRID_TUNED
    ),
    "full": apply_overrides(
        GridConfig(episodes=FULL_EPISODES, change_episode=FULL_CHANGE), GRID_TUNED
    ),
}

_GRID_RECOVERY = (
    "episodes after the layout change until the windowed steps to goal fall to twice the "
    "shortest path of the blocked layout"
)
_CENSORED_QUICK = (
    "inconclusive",
    "at quick scale (24 episodes, change at 12) no agent recovers within the 12 episodes after "
    "the change on any seed of 3: every recovery time is censored at 12",
)

CLAIMS = vs_baselines(
    ("cscg", "lstm"),
    (
        (
            "grid_recovery",
            "recovery_episodes",
            "In the gridworld DHTM's steps to goal recover sooner than {B}'s after the layout "
            "change: " + _GRID_RECOVERY + ", lower.",
            PAPER_ADAPT,
        ),
        (
            "grid_post_change",
            "post_change_steps",
            "DHTM needs fewer steps to goal than {B} on average after the change.",
            PAPER_ADAPT,
        ),
    ),
    {
        "grid_recovery_vs_cscg": {
            "quick": _CENSORED_QUICK,
            "full": (
                "inconclusive",
                "both agents find the detour on every seed: the DHTM agent recovers sooner than "
                "the fresh-start CSCG agent on 2 of 5 seeds (31 and 32 episodes after the "
                "change against 35 and 51) and later on 3 (50, 77 and 49 against 48, 30 and "
                "47; means 47.8 and 42.2); the 95% t interval of the difference includes 0",
            ),
        },
        "grid_post_change_vs_cscg": {
            "quick": (
                "reproduced",
                "in the 12 episodes after the change the DHTM agent needs fewer steps than the "
                "CSCG agent on every seed of 3 (38.1, 44.0 and 43.1 against 43.8, 46.8 and "
                "46.6), though neither has found the detour yet: both stay near the 50-step "
                "truncation",
            ),
            "full": (
                "inconclusive",
                "the DHTM agent needs fewer steps to goal after the change than the CSCG agent "
                "on 4 of 5 seeds (12.6-15.4 against 19.6-22.1) but not on the fifth, where it "
                "never settles on the detour (27.2 against 21.1: 18-32 steps per 10-episode "
                "window after its marginal recovery, and it loses the detour in its last 20 "
                "episodes, 44.5 over the last 10); with 5 seeds the 95% t interval of the "
                "difference includes 0",
            ),
        },
        "grid_recovery_vs_lstm": {
            "quick": _CENSORED_QUICK,
            "full": (
                "reproduced",
                "the LSTM agent recovers on 3 seeds of 5 (after 155, 160 and 204 episodes) and "
                "is censored at 315 on the others; the DHTM agent recovers on every seed (31-77 "
                "episodes)",
            ),
        },
        "grid_post_change_vs_lstm": {
            "quick": (
                "inconclusive",
                "in the 12 episodes after the change the DHTM agent needs fewer steps than the "
                "LSTM agent on every seed of 3 (38.1, 44.0 and 43.1 against 50.0, 50.0 and "
                "49.0), but with 3 seeds the 95% t interval of the difference includes 0",
            ),
            "full": (
                "reproduced",
                "the LSTM agent finds the detour late or never (34.3-45.2 steps per episode "
                "after the change, mean 39.5) while the DHTM agent needs fewer on every seed "
                "(12.6-27.2, mean 16.8)",
            ),
        },
    },
)

METRICS = (
    Metric("*/pre_change_steps", "lower", "mean steps to goal over the window before the change"),
    Metric("*/recovery_episodes", "lower", _GRID_RECOVERY + " (run length if never)"),
    Metric("*/post_change_steps", "lower", "mean steps to goal over the episodes after the change"),
    Metric("*/final_steps", "lower", "mean steps to goal over the last window"),
    Metric("*/episodes_per_s", "higher", "episodes per second of wall clock", volatile=True),
)


def build_agent(name: str, cfg: GridConfig, seed: int):
    """A fresh agent `name` for the gridworld."""
    from iclr25.papers.dhtm.agent import EpisodicControl, GoalStop, SFAgent

    n_obs, n_act = cfg.n_colours + (3 if cfg.collision_hint else 1), 4
    if name == "ec":
        return EpisodicControl(n_act, epsilon=cfg.ec.epsilon, random_state=seed)
    memory = build_memory(name, getattr(cfg, name), n_obs, n_act, seed)
    return SFAgent(
        memory,
        n_obs,
        n_act,
        gamma=cfg.gamma,
        horizon=cfg.horizon,
        beta=cfg.beta,
        reward_lr=cfg.reward_lr,
        # the paper's early stop of rollouts is DHTM's; CSCG and LSTM roll out the horizon
        stop=GoalStop() if name == "dhtm" else None,
        random_state=seed + 1,
    )


def run(cfg: GridConfig, ctx: RunContext) -> dict[str, float]:
    """Every agent in its own copy of the same (seeded) gridworld; steps to goal per episode."""
    from iclr25.papers.dhtm.agent import run_episode
    from iclr25.papers.dhtm.env import GridWorldPOMDP

    colour_seed = ctx.rngs.child("colours").int_seed()
    agent_seed = ctx.rngs.child("agents").int_seed()
    metrics: dict[str, float] = {}
    for name in ctx.progress(cfg.methods, desc="agents"):
        env = GridWorldPOMDP(
            cfg.size,
            cfg.n_colours,
            "free",
            cfg.max_steps,
            colour_seed=colour_seed,
            collision_hint=cfg.collision_hint,
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


EXPERIMENT = Experiment(
    name="dhtm.gridworld",
    summary="Successor-feature agent in a partially observed 5x5 gridworld (the agent sees "
    "its cell's colour) whose layout changes mid-run: DHTM, CSCG and LSTM memories, and "
    "episodic control; steps to goal per episode.",
    config=GridConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    figures=plots.grid_figures,
)
