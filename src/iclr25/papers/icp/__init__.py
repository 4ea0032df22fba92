"""Learning to Communicate Through Implicit Communication Channels (Wang, Chen, Zhang, Wang;
ICLR 2025): the Implicit Channel Protocol (ICP).

Public API:

    >>> import numpy as np, torch
    >>> from iclr25.papers.icp import GuessingNumbersEnv, GuessingNumbersSpec, TrainSettings
    >>> from iclr25.papers.icp import train_icp_dm, evaluate
    >>> env = GuessingNumbersEnv()                      # PettingZoo Parallel API
    >>> obs, infos = env.reset(seed=0)
    >>> spec = GuessingNumbersSpec()                    # N=3, K=4, S=4, T=2
    >>> agent = train_icp_dm(spec, TrainSettings(episodes=640), np.random.default_rng(0),
    ...                      torch.Generator().manual_seed(0))
    >>> evaluate(agent, 100, np.random.default_rng(1))["success"]  # doctest: +SKIP
    >>> from iclr25.papers.icp import HanabiEnv, HanabiSpec, train_hanabi
    >>> env = HanabiEnv()                               # hanabi_small_v0, PettingZoo Parallel

Docs, claims and results: docs/papers/icp.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.icp.baselines import train_dial, train_vdn
from iclr25.papers.icp.env import (
    GuessingNumbersBatch,
    GuessingNumbersEnv,
    GuessingNumbersSpec,
    RevealingGoalsBatch,
    RevealingGoalsEnv,
    RevealingGoalsSpec,
)
from iclr25.papers.icp.hanabi import HanabiBatch, HanabiEnv, HanabiSpec
from iclr25.papers.icp.hanabi_agents import (
    HanabiTeam,
    evaluate_hanabi,
    fit_hanabi,
    hanabi_rollout,
    train_hanabi,
)
from iclr25.papers.icp.method import (
    MODES,
    AgentNet,
    ICPAgent,
    InformationMap,
    Rollout,
    TrainSettings,
    evaluate,
    fit,
    hat_decode,
    hat_encode,
    lookup_table,
    rollout,
    st_gumbel_softmax,
    td_loss,
    train_icp_dm,
    train_icp_rm,
)

PAPER = PaperInfo(
    slug="icp",
    title="Learning to Communicate Through Implicit Communication Channels",
    authors="Han Wang, Binbin Chen, Tieying Zhang, Baoxiang Wang",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2411.01553",
    code="none found (code and environments only in the OpenReview supplementary material)",
    summary="Agents without a message channel communicate through scouting actions: a fixed "
    "injective map from messages to scouting actions (random, ICP-RM, or fixed after an "
    "explicit-channel stage, ICP-DM, with hat coding for per-receiver messages), trained DIAL-"
    "style with straight-through Gumbel-Softmax on top of recurrent VDN.",
)

__all__ = [
    "MODES",
    "PAPER",
    "AgentNet",
    "GuessingNumbersBatch",
    "GuessingNumbersEnv",
    "GuessingNumbersSpec",
    "HanabiBatch",
    "HanabiEnv",
    "HanabiSpec",
    "HanabiTeam",
    "ICPAgent",
    "InformationMap",
    "RevealingGoalsBatch",
    "RevealingGoalsEnv",
    "RevealingGoalsSpec",
    "Rollout",
    "TrainSettings",
    "evaluate",
    "evaluate_hanabi",
    "fit",
    "fit_hanabi",
    "hanabi_rollout",
    "hat_decode",
    "hat_encode",
    "lookup_table",
    "rollout",
    "st_gumbel_softmax",
    "td_loss",
    "train_dial",
    "train_hanabi",
    "train_icp_dm",
    "train_icp_rm",
    "train_vdn",
]
