"""Baselines of the Guessing Numbers comparison, in the same shape as the ICP trainers.

- VDN on-policy and off-policy: recurrent Q-learners with Q_tot = Σ_i Q_i and *no* channel;
  the scouting actions stay in their action space (a reviewer asked for exactly this), so any
  implicit convention must be found by reinforcement alone.
- DIAL with an explicit channel, the "cheating" upper bound: besides its action, the active
  agent sends every receiver a free discrete message (straight-through Gumbel-Softmax) and the
  receivers' TD errors train it. It is also ICP-DM's stage 1.
"""

from __future__ import annotations

import numpy as np
import torch

from iclr25.papers.icp.env import GuessingNumbersSpec
from iclr25.papers.icp.method import ICPAgent, TrainSettings, fit

REPLAY_EPISODES = 5000
"""Replay capacity (episodes) of VDN-off-policy."""


def train_vdn(
    spec: GuessingNumbersSpec,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    on_policy: bool,
    hidden: int = 64,
    replay: int = REPLAY_EPISODES,
    log=None,
) -> ICPAgent:
    """VDN with a GRU Q-network; on-policy trains on each fresh batch, off-policy on replay."""
    agent = ICPAgent(spec, "vdn", ICPAgent.network(spec, "vdn", hidden))
    fit(agent, settings, rng, generator, replay=0 if on_policy else replay, log=log)
    return agent


def train_dial(
    spec: GuessingNumbersSpec,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    hidden: int = 64,
    log=None,
) -> ICPAgent:
    """DIAL with an explicit per-receiver channel (the upper bound that cheats)."""
    agent = ICPAgent(spec, "explicit", ICPAgent.network(spec, "explicit", hidden))
    fit(agent, settings, rng, generator, log=log)
    return agent
