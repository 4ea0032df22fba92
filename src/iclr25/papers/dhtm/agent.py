"""The paper's successor-feature agent (BioHIMA) around any memory, and episodic control.

`SFAgent` (notes §2): the memory is reset at episode start (Algorithm 1); after each
observation the agent computes SF(a) for every action by rolling the memory's prediction step
forward (first step with a, then a uniform action), Q(a) = <SF(a), r>, and samples from a
softmax with inverse temperature β over Q / |Σ_a Q(a)|. The reward vector r over observation
states learns r[o] += lr (R - r[o]) for the observation o reached with reward R.

`EpisodicControl`: a table keyed by the episode's observation-action history so far, holding
the best discounted return seen after each action; greedy over known values with unknown
actions valued 0, ε-greedy otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_float, check_int
from iclr25.papers.dhtm.method import SequenceModel, check_rollout


@dataclass(frozen=True)
class GoalStop:
    """The paper's early stop of the agent's DHTM rollouts: a rollout stops when the
    prediction's KL to uniform falls below `min_kl`, or when the predicted probability of the
    best-rewarded observation (once a reward is positive) exceeds `goal_prob`. A memory that
    takes it must accept `min_kl`, `stop_obs` and `stop_prob` in `successor_features_actions`
    (DHTM does)."""

    min_kl: float = 0.1
    """Stop when the prediction's KL to uniform is below this (paper: 0.1)."""
    goal_prob: float = 0.05
    """Stop when the predicted probability of the goal exceeds this (paper: 0.05)."""

    def __post_init__(self) -> None:
        check_float("min_kl", self.min_kl, 0)
        check_float("goal_prob", self.goal_prob, 0, 1)

    # DEVIATION: the goal for the early stop of DHTM rollouts is the observation with the
    # highest learned reward (once positive); the agent is not told which colour is the goal.
    def rollout_kwargs(self, rewards: np.ndarray) -> dict[str, object]:
        """Keyword arguments of `successor_features_actions` for the current reward vector."""
        goal = int(np.argmax(rewards)) if rewards.max() > 0 else None
        return {"min_kl": self.min_kl, "stop_obs": goal, "stop_prob": self.goal_prob}


class SFAgent:
    """Successor-feature agent over any `SequenceModel` memory (DHTM, CloneHMM,
    RecurrentPredictor): `reset`, `observe`, `act` and `successor_features_actions`.

    Args:
        memory: the world model.
        n_obs_states, n_actions: sizes.
        gamma: SF discount (paper: 0.8).
        horizon: rollout length (paper: up to 50).
        beta: softmax inverse temperature over normalised Q (paper: 25).
        reward_lr: learning rate of the reward vector (paper: 0.1).
        stop: early stop of the rollouts (`GoalStop()`, the paper's rule for DHTM), or None
            for rollouts over the whole horizon (any memory).
        random_state: seed or Generator for action sampling.
    """

    def __init__(
        self,
        memory: SequenceModel,
        n_obs_states: int,
        n_actions: int,
        *,
        gamma: float = 0.8,
        horizon: int = 50,
        beta: float = 25.0,
        reward_lr: float = 0.1,
        stop: GoalStop | None = None,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        self.memory = memory
        self.n_obs_states = check_int("n_obs_states", n_obs_states, 1)
        self.n_actions = check_int("n_actions", n_actions, 1)
        self.gamma, self.horizon = check_rollout(gamma, horizon)
        self.beta = check_float("beta", beta, 0, low_open=True)
        self.reward_lr = check_float("reward_lr", reward_lr, 0, 1, low_open=True)
        self.stop = stop
        self.rng = np.random.default_rng(random_state)
        self.rewards_ = np.zeros(n_obs_states)

    def reset(self) -> None:
        self.memory.reset()

    def q_values(self) -> np.ndarray:
        """Q(a) = <SF(a), r> for every action, shape (A,)."""
        kwargs = {} if self.stop is None else self.stop.rollout_kwargs(self.rewards_)
        sf = self.memory.successor_features_actions(self.gamma, self.horizon, **kwargs)
        return sf @ self.rewards_

    def step(self, observation: int, reward: float | None = None) -> int:
        """Observe (learning the memory), update the reward vector, choose and record an
        action."""
        self.memory.observe(observation)
        if reward is not None:
            self.rewards_[observation] += self.reward_lr * (reward - self.rewards_[observation])
        q = self.q_values()
        norm = abs(q.sum())
        z = self.beta * (q / norm if norm > 0 else q)
        p = np.exp(z - z.max())
        action = int(self.rng.choice(self.n_actions, p=p / p.sum()))
        self.memory.act(action)
        return action

    def end(self, observation: int, reward: float) -> None:
        """The terminal observation: learn from it, no action."""
        self.memory.observe(observation)
        self.rewards_[observation] += self.reward_lr * (reward - self.rewards_[observation])


def run_episode(env, agent) -> int:
    """One episode of `agent` (`reset`, `step`, `end`) in a Gymnasium `env`; returns the number
    of steps taken."""
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


# DEVIATION: the paper's episodic-control baseline is not specified in the notes; ours keys a
# table by the whole observation-action history of the episode (the start is fixed, so in a
# deterministic layout a key is a position reached by a given path), max-return values.
class EpisodicControl:
    """Tabular episodic control keyed by the episode's history (observations and actions).

    Q(key, a) is the best discounted return ever seen after taking a at that history; the agent
    is greedy over Q with unknown actions valued `unknown_value`, and acts at random with
    probability `epsilon`.
    """

    def __init__(
        self,
        n_actions: int,
        *,
        gamma: float = 0.99,
        epsilon: float = 0.1,
        unknown_value: float = 0.0,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        self.n_actions = n_actions
        self.gamma, self.epsilon, self.unknown_value = gamma, epsilon, unknown_value
        self.rng = np.random.default_rng(random_state)
        self.table_: dict[tuple, np.ndarray] = {}
        self.reset()

    def reset(self) -> None:
        self._history: tuple = ()
        self._trace: list[tuple[tuple, int, float]] = []

    def step(self, observation: int, reward: float | None = None) -> int:
        if reward is not None and self._trace:
            key, a, _ = self._trace[-1]
            self._trace[-1] = (key, a, reward)
        self._history = (*self._history, observation)
        q = self.table_.get(self._history)
        values = np.full(self.n_actions, self.unknown_value) if q is None else q.copy()
        values[np.isnan(values)] = self.unknown_value
        if self.rng.random() < self.epsilon:
            action = int(self.rng.integers(self.n_actions))
        else:
            best = np.flatnonzero(values == values.max())
            action = int(self.rng.choice(best))
        self._trace.append((self._history, action, 0.0))
        self._history = (*self._history, ("a", action))
        return action

    def end(self, observation: int, reward: float) -> None:
        """Close the episode: write the discounted returns into the table."""
        if self._trace:
            key, a, _ = self._trace[-1]
            self._trace[-1] = (key, a, reward)
        ret = 0.0
        for key, a, r in reversed(self._trace):
            ret = r + self.gamma * ret
            q = self.table_.setdefault(key, np.full(self.n_actions, np.nan))
            q[a] = ret if np.isnan(q[a]) else max(q[a], ret)
