"""Environment steps per second (vectorised batch against the single-game PettingZoo env, on
Guessing Numbers and Small Hanabi) and training updates per second of every method on Guessing
Numbers.

Rows: `what`, `env`, `method`, `games` (stepped together / per update), `rate` (per second),
`reference_rate` and `ratio` (the speed-up over the reference).

The issue's performance targets: environment steps per second of the vectorised batch version
(its reference is the plain PettingZoo version stepping the same number of games one by one),
and training steps per second. Both are timed interleaved (one repetition of each in turn),
with a fixed torch thread count; the median over repetitions is reported.

    iclr25 bench icp                  # or: python benchmarks/bench_icp.py
    iclr25 bench icp --batches 64,256,1024 --reps 7 --threads 1
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.core.seeding import torch_seed
from iclr25.papers.icp import (
    GuessingNumbersBatch,
    GuessingNumbersEnv,
    GuessingNumbersSpec,
    HanabiBatch,
    HanabiEnv,
    HanabiSpec,
    HanabiTeam,
    ICPAgent,
    InformationMap,
    TrainSettings,
    fit,
)
from iclr25.papers.icp.env import RevealingGoalsSpec
from iclr25.papers.icp.experiments.hanabi_small import TRAINING as HANABI_TRAINING
from iclr25.papers.icp.experiments.revealing_goals import TRAINING as GOALS_TRAINING
from iclr25.papers.icp.goals_agents import GOALS
from iclr25.papers.icp.hanabi_agents import HANABI, fit_hanabi

OUT = Path(__file__).resolve().parent / "results" / "icp.json"


def _legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.where(mask, rng.random(mask.shape), -1.0).argmax(-1)


ENVS = {  # name: (batch env class, single-game PettingZoo env)
    "guessing_numbers": (GuessingNumbersBatch, lambda: GuessingNumbersEnv(GuessingNumbersSpec())),
    "hanabi_small": (HanabiBatch, HanabiEnv),
}


def batch_episodes(env, rng: np.random.Generator) -> int:
    """Play one batch of games with random legal actions; returns the game steps taken (steps
    of games still running)."""
    _, mask = env.reset(rng)
    done, steps = np.zeros(env.num_envs, bool), 0
    while not done.all():
        steps += int((~done).sum())
        _, mask, _, done = env.step(_legal(mask, rng))
        done = np.broadcast_to(done, (env.num_envs,))  # Guessing Numbers: one bool for all
    return steps


def single_episodes(env, games: int, rng: np.random.Generator) -> int:
    """The same number of games, one PettingZoo env stepped game by game."""
    steps = 0
    for _ in range(games):
        obs, _ = env.reset(seed=int(rng.integers(1 << 31)))
        while env.agents:
            acts = {a: int(_legal(o["action_mask"].astype(bool), rng)) for a, o in obs.items()}
            obs, *_ = env.step(acts)
            steps += 1
    return steps


TEAM_GAMES = {  # name: (spec, game of fit_hanabi, the full preset's training group)
    "hanabi_small": (HanabiSpec(), HANABI, HANABI_TRAINING),
    "revealing_goals": (RevealingGoalsSpec(2, 2, 4, 4), GOALS, GOALS_TRAINING),
}


def team_training_rows(args: argparse.Namespace) -> list[dict]:
    """Environment steps of training per second on Small Hanabi and Revealing Goals: each
    method's `fit_hanabi` at the full preset's batch and hyperparameters, `--team-steps` steps
    a repetition (ICP-DM: stage 2, with a frozen stage-1 network as its table)."""
    rows = []
    for name, (spec, game, train) in TEAM_GAMES.items():
        teams = {}
        for mode in ("vdn", "explicit", "icp_rm", "icp_dm"):
            with torch_seed(0):
                net = game.network(spec, mode, train.hidden)
                table = game.network(spec, "explicit", train.hidden).requires_grad_(False)
            phi = InformationMap(game.channels(spec)[:4]) if mode.startswith("icp") else None
            teams[mode] = HanabiTeam(spec, mode, net, phi, table if mode == "icp_dm" else None)

        used: dict[str, int] = {}  # steps of the last run (a batch of games may overshoot)

        def call(mode, team, game=game, train=train, used=used):
            settings = train.settings("icp_dm" if mode == "explicit" else mode)
            if args.smoke:
                settings = dataclasses.replace(settings, batch=4)

            def run(r):
                rng, gen = np.random.default_rng(r), torch.Generator().manual_seed(r)
                used[mode] = fit_hanabi(team, settings, rng, gen, steps=args.team_steps, game=game)

            return run

        calls = {m: call(m, t) for m, t in teams.items()}
        per_step = {
            m: t / used[m]
            for m, t in interleaved_medians(calls, args.reps, 1, lambda r: (r,)).items()
        }
        ref = per_step["vdn"]
        for m, t in per_step.items():
            rows.append(
                {
                    "what": "train_env_steps_per_s",
                    "env": name,
                    "method": {"explicit": "icp_dm_stage1", "icp_dm": "icp_dm_stage2"}.get(m, m),
                    "games": 4 if args.smoke else train.batch,
                    "rate": round(1 / t, 1),
                    "reference_rate": round(1 / ref, 1),
                    "ratio": round(ref / t, 3),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_icp", description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", default="64,256,1024", help="games stepped together")
    p.add_argument("--reps", type=int, default=7, help="timed repetitions (median)")
    p.add_argument("--updates", type=int, default=20, help="training updates per repetition")
    p.add_argument("--train-batch", type=int, default=32)
    p.add_argument(
        "--team-steps",
        type=int,
        default=20000,
        help="environment steps per repetition on Small Hanabi and Revealing Goals",
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    if args.smoke:
        args.batches, args.reps, args.updates, args.team_steps = "16", 1, 2, 200
    torch.set_num_threads(args.threads)
    load_before = load_average()
    spec = GuessingNumbersSpec()
    rows = []
    batches = [int(x) for x in args.batches.split(",")]
    for (name, (batch_cls, single_cls)), B in itertools.product(ENVS.items(), batches):
        times: dict[str, list[float]] = {"batch": [], "pettingzoo": []}
        batch_env, single_env = batch_cls(B), single_cls()
        for r in range(-1, args.reps):  # interleaved; r = -1: untimed warm-up
            rng = np.random.default_rng(r + 1)
            t0 = time.perf_counter()
            n_batch = batch_episodes(batch_env, rng)
            t1 = time.perf_counter()
            n_single = single_episodes(single_env, B, rng)
            t2 = time.perf_counter()
            if r >= 0:
                times["batch"].append((t1 - t0) / n_batch)
                times["pettingzoo"].append((t2 - t1) / n_single)
        per_step = {k: statistics.median(v) for k, v in times.items()}
        rows.append(
            {
                "what": "env_steps_per_s",
                "env": name,
                "method": "batch",
                "games": B,
                "rate": round(1 / per_step["batch"], 1),
                "reference_rate": round(1 / per_step["pettingzoo"], 1),
                "ratio": round(per_step["pettingzoo"] / per_step["batch"], 2),
            }
        )
    settings = TrainSettings(episodes=args.updates * args.train_batch, batch=args.train_batch)
    agents = {}
    N, K = spec.num_agents, spec.num_values
    table = np.broadcast_to(np.arange(K), (N, N, K))  # identity per-receiver messages
    for mode in ("vdn", "explicit", "icp_rm", "icp_dm"):
        with torch_seed(0):
            net = ICPAgent.network(spec, mode)
        phi = InformationMap(spec.scouting_actions) if mode.startswith("icp") else None
        agents[mode] = ICPAgent(spec, mode, net, phi, table if mode == "icp_dm" else None)
    agents["vdn_off"] = agents["vdn"]

    def train(m, agent):  # round r uses seed r for every method; fit mutates the agent
        def call(r):
            rng, gen = np.random.default_rng(r), torch.Generator().manual_seed(r)
            fit(agent, settings, rng, gen, replay=5000 if m == "vdn_off" else 0)

        return call

    calls = {m: train(m, agent) for m, agent in agents.items()}
    per_update = {
        m: t / args.updates
        for m, t in interleaved_medians(calls, args.reps, 1, lambda r: (r,)).items()
    }
    ref = per_update["vdn"]
    for m, t in per_update.items():
        rows.append(
            {
                "what": "train_updates_per_s",
                "env": "guessing_numbers",
                "method": {"vdn": "vdn_on", "explicit": "dial"}.get(m, m),
                "games": args.train_batch,
                "rate": round(1 / t, 2),
                "reference_rate": round(1 / ref, 2),
                "ratio": round(ref / t, 3),
            }
        )
    rows += team_training_rows(args)
    return bench_result(
        "icp_env_and_training_speed",
        "env steps: the PettingZoo GuessingNumbersEnv stepping the same games one by one "
        "(ratio = speed-up of the batch version); training: VDN on-policy (ratio = its time per "
        "update over the method's; on Small Hanabi and Revealing Goals the rate is environment "
        "steps of training per second)",
        vars(args),
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
