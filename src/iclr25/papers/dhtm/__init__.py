"""Learning Successor Features with Distributed Hebbian Temporal Memory (ICLR 2025).

Public API (a scikit-learn-style online estimator):

    >>> from iclr25.papers.dhtm import DHTM
    >>> model = DHTM(n_obs_states=9, n_actions=1, cells_per_column=10, n_copies=1,
    ...              n_vars_per_factor=2, random_state=0)
    >>> for episode in episodes:
    ...     model.reset()
    ...     for o in episode:
    ...         model.partial_fit(o, action=0)     # learn online, one step
    ...         p_next = model.predict_next()      # p(o_{t+1} | history, action)
    ...         sf = model.successor_features(gamma=0.8, horizon=10)

Also: `SFAgent` (the paper's successor-feature agent over any memory; `GoalStop` is the
paper's early stop of DHTM's rollouts), the baselines in the same API shape (the
`SequenceModel` protocol: `LSTMPredictor` and `RWKVPredictor`, which are `RecurrentPredictor`s
over an `LSTMCore` or `RWKVCore`, `CloneHMM`, `MarkovCounts`), and `EpisodicControl`; the
gridworld is `iclr25.papers.dhtm.env.GridWorldPOMDP` (extra `rl`).

Docs, claims and results: docs/papers/dhtm.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.dhtm.agent import EpisodicControl, GoalStop, SFAgent
from iclr25.papers.dhtm.baselines import (
    CloneHMM,
    LSTMCore,
    LSTMPredictor,
    MarkovCounts,
    RecurrentCore,
    RecurrentPredictor,
    RWKVCell,
    RWKVCore,
    RWKVPredictor,
)
from iclr25.papers.dhtm.method import DHTM, SegmentStore, SequenceModel, segment_log_likelihood

PAPER = PaperInfo(
    slug="dhtm",
    title="Learning Successor Features with Distributed Hebbian Temporal Memory",
    authors="Evgenii Dzhivelikian, Petr Kuderov, Aleksandr I. Panov",
    venue="ICLR 2025",
    url="https://openreview.net/forum?id=wYJII5BRYU",
    code="https://github.com/Cognitive-AI-Systems/him-agent (branch iclr25; AGPLv3, not copied)",
    summary="An online temporal memory built from a factor graph with sparse transition factors "
    "whose entries are dendritic segments, learned by local Hebbian rules from sampled cells; its "
    "rolled-out predictions give successor features. On non-stationary partially observable "
    "tasks it re-adapts faster than LSTM, RWKV and CSCG.",
)

__all__ = [
    "DHTM",
    "PAPER",
    "CloneHMM",
    "EpisodicControl",
    "GoalStop",
    "LSTMCore",
    "LSTMPredictor",
    "MarkovCounts",
    "RWKVCell",
    "RWKVCore",
    "RWKVPredictor",
    "RecurrentCore",
    "RecurrentPredictor",
    "SFAgent",
    "SegmentStore",
    "SequenceModel",
    "segment_log_likelihood",
]
