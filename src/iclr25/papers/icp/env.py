"""Guessing Numbers and Revealing Goals, re-designed after the paper's description (the authors'
specs are unpublished). Revealing Goals: see `RevealingGoalsSpec` (environment only so far; no
agents or experiment use it yet). The rest of this docstring is Guessing Numbers.

Two implementations of the same rules:

- `GuessingNumbersBatch`: numpy, vectorised over B games; what training uses.
- `GuessingNumbersEnv`: one game, written plainly, with the PettingZoo Parallel API (seeded
  `reset`, per-agent spaces, action masks in the observation, a versioned name). It passes
  PettingZoo's `parallel_api_test` and `parallel_seed_test`; tests check the two implementations
  agree step by step.

Rules (N agents, K values, S scouting actions, T signalling turns):

| item | value |
|---|---|
| secrets | x_i uniform in {0..K-1}, one per agent; agent i sees every x_j except its own |
| turns | t = 0..T-1 are signalling turns, agent t mod N is active; turn T is the guessing turn |
| actions | `0..K-1` guess that value, `K..K+S-1` scouting action s, `K+S` no-op (pass) |
| signalling turn | the active agent guesses early (once), passes, or takes a scouting |
| | action (broadcast to all, changes nothing else); the others no-op |
| guessing turn | every agent that has not guessed must guess, the others no-op |
| reward | team reward at the end: (correct guesses - wrong early guesses) / N |
| success | the fraction of agents whose guess equals their secret (`info["success"]`) |
| episode | T + 1 steps, then all agents terminate |

Observation of agent i (float vector, `obs_dim = base_dim + T * (S + 1)`):
`[others' secrets one-hot (N*K, own block zero) | agent id one-hot (N) | turn one-hot (T+1) |
guessed flag (1)]` then, per signalling turn, a one-hot of what was broadcast (S scouting actions
or "nothing", all zero for future turns). `base_dim` splits the two parts: the communication
methods replace the broadcast part with their decoded messages.

With T = 2 < N = 3 one signal per secret is not enough: a broadcast must carry a different
message to each receiver, which is what hat coding does (see `method.hat_encode`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from iclr25.core.checks import check_int

NAME = "guessing_numbers_v0"

# DEVIATION: the authors' Guessing Numbers spec is in their unavailable supplement; this is our
# re-design after the paper's description and the research notes (N=3, K=4, S=4, 2 signalling
# turns, -1 for a wrong early guess), turn-based with simultaneous final guesses.


@dataclass(frozen=True)
class GuessingNumbersSpec:
    """The sizes of one Guessing Numbers game.

    Attributes:
        num_agents: N, the number of agents (>= 2).
        num_values: K, the number of values a secret can take (>= 2).
        num_signals: S, the number of scouting actions (>= 1).
        signal_turns: T, the number of signalling turns before the guessing turn (>= 1).
    """

    num_agents: int = 3
    num_values: int = 4
    num_signals: int = 4
    signal_turns: int = 2

    def __post_init__(self) -> None:
        check_int("num_agents", self.num_agents, 2)
        check_int("num_values", self.num_values, 2)
        check_int("num_signals", self.num_signals, 1)
        check_int("signal_turns", self.signal_turns, 1)

    @property
    def num_actions(self) -> int:
        """K guesses + S scouting actions + 1 no-op."""
        return self.num_values + self.num_signals + 1

    @property
    def noop(self) -> int:
        """The index of the no-op action."""
        return self.num_values + self.num_signals

    @property
    def scouting_actions(self) -> np.ndarray:
        """Indices of the scouting actions A^s."""
        return np.arange(self.num_values, self.num_values + self.num_signals)

    @property
    def episode_len(self) -> int:
        """Steps per episode: T signalling turns and the guessing turn."""
        return self.signal_turns + 1

    @property
    def base_dim(self) -> int:
        """Length of the observation part that excludes the broadcast history."""
        return self.num_agents * self.num_values + self.num_agents + self.episode_len + 1

    @property
    def signal_dim(self) -> int:
        """Length of one turn's broadcast slot (S scouting actions + "nothing")."""
        return self.num_signals + 1

    @property
    def obs_dim(self) -> int:
        """Length of an agent's observation vector."""
        return self.base_dim + self.signal_turns * self.signal_dim

    def active(self, t: int) -> int:
        """The agent that acts on signalling turn t."""
        return t % self.num_agents


class GuessingNumbersBatch:
    """B Guessing Numbers games stepped together (numpy).

    Args:
        num_envs: B, the number of games.
        spec: The game sizes.

    Shapes:
        `reset` and `step` return `obs (B, N, obs_dim)` float32 and `mask (B, N, A)` bool;
        `step` takes `actions (B, N)` ints and also returns `reward (B,)` and `done` (a bool: all
        games have the same length).
    """

    def __init__(self, num_envs: int, spec: GuessingNumbersSpec | None = None) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.spec = spec or GuessingNumbersSpec()
        self.t = -1

    # ------------------------------------------------------------------ state
    def reset(
        self, rng: np.random.Generator | None = None, secrets: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Start B new games with secrets drawn from `rng` (or the given `secrets`, (B, N))."""
        sp, B = self.spec, self.num_envs
        if secrets is None:
            if rng is None:
                raise ValueError("reset needs rng (a numpy Generator) or secrets, got neither")
            secrets = rng.integers(0, sp.num_values, size=(B, sp.num_agents))
        secrets = np.asarray(secrets)
        if secrets.shape != (B, sp.num_agents):
            raise ValueError(
                f"secrets must have shape (num_envs, num_agents) = {(B, sp.num_agents)}, "
                f"got {secrets.shape}"
            )
        if secrets.min() < 0 or secrets.max() >= sp.num_values:
            raise ValueError(f"secrets must lie in 0..{sp.num_values - 1}, got {secrets}")
        self.secrets = secrets.astype(np.int64)
        self.guesses = np.full((B, sp.num_agents), -1, dtype=np.int64)
        self.signals = np.full((B, sp.signal_turns), -1, dtype=np.int64)  # scouting index or -1
        self.early = np.zeros((B, sp.num_agents), dtype=bool)  # guessed on a signalling turn
        self.t = 0
        return self.observe(), self.action_mask()

    def observe(self) -> np.ndarray:
        """Every agent's observation vector, (B, N, obs_dim)."""
        sp, B, N, K = self.spec, self.num_envs, self.spec.num_agents, self.spec.num_values
        obs = np.zeros((B, N, sp.obs_dim), dtype=np.float32)
        onehot = np.eye(K, dtype=np.float32)[self.secrets].reshape(B, 1, N * K)
        own = np.repeat(np.eye(N, dtype=np.float32), K, axis=1)  # (N, N*K): own block
        obs[:, :, : N * K] = onehot * (1.0 - own)  # everyone but yourself
        obs[:, :, N * K : N * K + N] = np.eye(N, dtype=np.float32)
        obs[:, :, N * K + N + min(self.t, sp.signal_turns)] = 1.0
        obs[:, :, sp.base_dim - 1] = self.guesses >= 0
        for tau in range(min(self.t, sp.signal_turns)):
            off = sp.base_dim + tau * sp.signal_dim
            slot = np.where(self.signals[:, tau] >= 0, self.signals[:, tau], sp.num_signals)
            obs[np.arange(B), :, off + slot] = 1.0
        return obs

    def action_mask(self) -> np.ndarray:
        """Legal actions, (B, N, A) bool."""
        sp, B, N, K = self.spec, self.num_envs, self.spec.num_agents, self.spec.num_values
        mask = np.zeros((B, N, sp.num_actions), dtype=bool)
        if self.t > sp.signal_turns:
            return mask
        guessed = self.guesses >= 0
        if self.t == sp.signal_turns:  # guessing turn
            mask[:, :, :K] = ~guessed[:, :, None]
            mask[:, :, sp.noop] = guessed
            return mask
        mask[:, :, sp.noop] = True  # everyone but the active agent no-ops
        a = sp.active(self.t)
        mask[:, a, :K] = ~guessed[:, a, None]
        mask[:, a, K : K + sp.num_signals] = True
        return mask

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """Apply one joint action (B, N); illegal actions raise naming the game and agent."""
        sp, B, K = self.spec, self.num_envs, self.spec.num_values
        if self.t < 0 or self.t > sp.signal_turns:
            raise RuntimeError("step called before reset or after the episode ended")
        actions = np.asarray(actions)
        if actions.shape != (B, sp.num_agents):
            raise ValueError(
                f"actions must have shape (num_envs, num_agents) = {(B, sp.num_agents)}, "
                f"got {actions.shape}"
            )
        if not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {actions.dtype}")
        mask = self.action_mask()
        inside = (actions >= 0) & (actions < sp.num_actions)
        legal = (
            inside
            & np.take_along_axis(mask, np.clip(actions, 0, sp.num_actions - 1)[..., None], 2)[
                ..., 0
            ]
        )
        if not legal.all():
            b, i = np.argwhere(~legal)[0]
            raise ValueError(
                f"illegal action {int(actions[b, i])} for agent {i} in game {b} at turn {self.t}; "
                f"legal: {np.flatnonzero(mask[b, i]).tolist()}"
            )
        guess = actions < K
        self.guesses = np.where(guess, actions, self.guesses)
        if self.t < sp.signal_turns:
            a = sp.active(self.t)
            scout = (actions[:, a] >= K) & (actions[:, a] < K + sp.num_signals)
            self.signals[:, self.t] = np.where(scout, actions[:, a] - K, -1)
            self.early |= guess
        self.t += 1
        done = self.t > sp.signal_turns
        reward = np.zeros(B, dtype=np.float32)
        if done:
            correct = self.guesses == self.secrets
            reward = (correct.sum(1) - (self.early & ~correct).sum(1)) / sp.num_agents
            reward = reward.astype(np.float32)
        return self.observe(), self.action_mask(), reward, done

    def success(self) -> np.ndarray:
        """The fraction of agents whose guess equals their secret, (B,)."""
        return (self.guesses == self.secrets).mean(axis=1)

    def task_state(self) -> tuple[np.ndarray, np.ndarray]:
        """The state that decides the reward: (secrets, guesses); scouting never changes it."""
        return self.secrets.copy(), self.guesses.copy()


class _ParallelEnv:
    """What the single-game PettingZoo Parallel environments share: the agents
    `"<prefix>_0" ..`, a Dict observation space `{"observation": float32 (spec.obs_dim,),
    "action_mask": int8 (spec.num_actions,)}` and `Discrete(spec.num_actions)` actions, the same
    for every agent; agent-name checks; no rendering. Needs gymnasium (the `marl` extra)."""

    metadata: ClassVar[dict]
    render_mode = None

    def __init__(self, spec, prefix: str, num_agents: int) -> None:
        try:
            from gymnasium import spaces
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError(
                f"{type(self).__name__} needs gymnasium: pip install iclr25[marl]"
            ) from e
        self.spec = spec
        self.possible_agents = [f"{prefix}_{i}" for i in range(num_agents)]
        self.agents: list[str] = []
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (spec.obs_dim,), np.float32),
                "action_mask": spaces.Box(0, 1, (spec.num_actions,), np.int8),
            }
        )
        self._act_space = spaces.Discrete(spec.num_actions)
        self._rng = np.random.default_rng()

    @property
    def unwrapped(self):
        """The environment itself (no wrappers)."""
        return self

    def _index(self, agent: str) -> int:
        if agent not in self.possible_agents:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        return self.possible_agents.index(agent)

    def observation_space(self, agent: str):
        """The observation space of `agent` (the same for all)."""
        self._index(agent)
        return self._obs_space

    def action_space(self, agent: str):
        """The action space of `agent` (the same for all)."""
        self._index(agent)
        return self._act_space

    def _joint_action(self, actions: dict) -> list[int]:
        """`{agent: int}` as a list in agent order, after checking that the game is running,
        every name is an agent's and every live agent acts."""
        if not self.agents:
            raise RuntimeError("step called before reset or after the game ended")
        for agent in actions:
            self._index(agent)
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"actions missing for agents {missing}")
        return [int(actions[a]) for a in self.possible_agents]

    def render(self) -> None:
        """No rendering."""

    def close(self) -> None:
        """Nothing to release."""


class GuessingNumbersEnv(_ParallelEnv):
    """One Guessing Numbers game with the PettingZoo Parallel API (`guessing_numbers_v0`).

    Agents are `"agent_0" .. "agent_{N-1}"`. Observations are dicts `{"observation": float32
    (obs_dim,), "action_mask": int8 (A,)}`; actions are `Discrete(A)` with
    `A = K + S + 1` (guesses, scouting actions, no-op). See the module docstring for the rules.
    An illegal action (masked out) raises `ValueError` naming the agent, the action and the legal
    ones. Needs the `marl` extra (gymnasium spaces).

    Args:
        spec: The game sizes (default: N=3, K=4, S=4, T=2).
    """

    metadata: ClassVar[dict] = {"name": NAME, "render_modes": [], "is_parallelizable": True}

    def __init__(self, spec: GuessingNumbersSpec | None = None) -> None:
        spec = spec or GuessingNumbersSpec()
        super().__init__(spec, "agent", spec.num_agents)

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a game; `options={"secrets": [...]}` fixes the secrets (tests)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        sp = self.spec
        secrets = (options or {}).get("secrets")
        if secrets is None:
            secrets = self._rng.integers(0, sp.num_values, size=sp.num_agents)
        self.secrets = [int(x) for x in secrets]
        if len(self.secrets) != sp.num_agents or not all(
            0 <= x < sp.num_values for x in self.secrets
        ):
            raise ValueError(
                f"options['secrets'] must be {sp.num_agents} values in 0..{sp.num_values - 1}, "
                f"got {secrets}"
            )
        self.guesses: list[int | None] = [None] * sp.num_agents
        self.early = [False] * sp.num_agents
        self.broadcasts: list[int | None] = []  # scouting index per signalling turn, or None
        self.t = 0
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def _legal(self, i: int) -> list[int]:
        sp, K = self.spec, self.spec.num_values
        guesses = list(range(K)) if self.guesses[i] is None else []
        if self.t == sp.signal_turns:
            return guesses or [sp.noop]
        if i != sp.active(self.t):
            return [sp.noop]
        return guesses + list(range(K, K + sp.num_signals)) + [sp.noop]

    def _observations(self) -> dict:
        sp, N, K = self.spec, self.spec.num_agents, self.spec.num_values
        out = {}
        for i, agent in enumerate(self.possible_agents):
            o = np.zeros(sp.obs_dim, dtype=np.float32)
            for j in range(N):
                if j != i:
                    o[j * K + self.secrets[j]] = 1.0
            o[N * K + i] = 1.0
            o[N * K + N + min(self.t, sp.signal_turns)] = 1.0
            o[sp.base_dim - 1] = float(self.guesses[i] is not None)
            for tau, b in enumerate(self.broadcasts):
                o[sp.base_dim + tau * sp.signal_dim + (sp.num_signals if b is None else b)] = 1.0
            mask = np.zeros(sp.num_actions, dtype=np.int8)
            if self.t <= sp.signal_turns:
                mask[self._legal(i)] = 1
            out[agent] = {"observation": o, "action_mask": mask}
        return out

    def step(self, actions: dict):
        """Apply one joint action `{agent: int}` (every live agent must act)."""
        sp, K = self.spec, self.spec.num_values
        acts = self._joint_action(actions)
        for i, a in enumerate(acts):
            if a not in self._legal(i):
                raise ValueError(
                    f"illegal action {a} for agent {self.possible_agents[i]} at turn {self.t}; "
                    f"legal: {self._legal(i)}"
                )
        for i, a in enumerate(acts):
            if a < K:
                self.guesses[i] = a
                self.early[i] = self.t < sp.signal_turns
        if self.t < sp.signal_turns:
            a = acts[sp.active(self.t)]
            self.broadcasts.append(a - K if K <= a < K + sp.num_signals else None)
        self.t += 1
        done = self.t > sp.signal_turns
        correct = [g == x for g, x in zip(self.guesses, self.secrets)]
        wrong_early = [e and not c for e, c in zip(self.early, correct)]
        r = (sum(correct) - sum(wrong_early)) / sp.num_agents if done else 0.0
        obs = self._observations()
        agents = list(self.agents)
        rewards = {a: float(r) for a in agents}
        terms = {a: done for a in agents}
        truncs = {a: False for a in agents}
        infos = {a: ({"success": sum(correct) / sp.num_agents} if done else {}) for a in agents}
        if done:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def state(self) -> np.ndarray:
        """The global state: secrets, guesses (-1: none) and broadcasts (-1: none)."""
        pad = self.broadcasts + [None] * (self.spec.signal_turns - len(self.broadcasts))
        return np.array(
            self.secrets
            + [-1 if g is None else g for g in self.guesses]
            + [-1 if b is None else b for b in pad],
            dtype=np.int64,
        )


# ---------------------------------------------------------------- Revealing Goals

GOALS_NAME = "revealing_goals_v0"

# DEVIATION: Revealing Goals is our re-design (N agents on a G x G grid, simultaneous moves,
# goals visible only to the others, scouting = stay and broadcast); the authors' spec is in
# their unavailable supplement.

MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])
"""Displacements of actions 0..4: stay, up, down, left, right (clipped at the walls)."""


@dataclass(frozen=True)
class RevealingGoalsSpec:
    """The sizes of one Revealing Goals game (our re-design after the paper's description).

    Rules: N agents on a G x G grid, simultaneous moves for H steps. Each agent has a goal cell
    that every other agent sees and it does not. Actions: `0` stay, `1..4` move (up, down,
    left, right; clipped at the walls), `5..5+S-1` scouting action s (stay in place and
    broadcast s to all; nothing else changes). Team reward at the end: the fraction of agents
    standing on their goal. Observation of agent i: its position one-hot (G²), every agent's
    position one-hot (N G²), every other agent's goal one-hot (N G², own block zero), the step
    one-hot (H + 1), and what each agent broadcast on the previous step (N (S + 1), "nothing"
    in the last slot). All actions are always legal while the episode runs.

    Attributes:
        num_agents: N (>= 2).
        grid: G (>= 2).
        horizon: H, steps per episode (>= 1).
        num_signals: S, scouting actions (>= 1).
    """

    num_agents: int = 2
    grid: int = 5
    horizon: int = 10
    num_signals: int = 4

    def __post_init__(self) -> None:
        check_int("num_agents", self.num_agents, 2)
        check_int("grid", self.grid, 2)
        check_int("horizon", self.horizon, 1)
        check_int("num_signals", self.num_signals, 1)

    @property
    def num_actions(self) -> int:
        """5 moves (stay included) + S scouting actions."""
        return 5 + self.num_signals

    @property
    def scouting_actions(self) -> np.ndarray:
        """Indices of the scouting actions A^s."""
        return np.arange(5, 5 + self.num_signals)

    @property
    def obs_dim(self) -> int:
        """Length of an agent's observation vector."""
        cells, N = self.grid**2, self.num_agents
        return cells + 2 * N * cells + self.horizon + 1 + N * (self.num_signals + 1)


class RevealingGoalsBatch:
    """B Revealing Goals games stepped together (numpy); see `RevealingGoalsSpec` for the rules.

    Shapes: `reset`/`step` return `obs (B, N, obs_dim)` and `mask (B, N, A)`; `step` takes
    `actions (B, N)` and also returns `reward (B,)` and `done` (a bool).
    """

    def __init__(self, num_envs: int, spec: RevealingGoalsSpec | None = None) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.spec = spec or RevealingGoalsSpec()
        self.t = -1

    def reset(
        self,
        rng: np.random.Generator | None = None,
        positions: np.ndarray | None = None,
        goals: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Start B games; cells come from `rng` unless `positions`/`goals` (B, N, 2) are given."""
        sp, B, N = self.spec, self.num_envs, self.spec.num_agents
        cells = []
        for name, given in (("positions", positions), ("goals", goals)):
            if given is None:
                if rng is None:
                    raise ValueError(f"reset needs rng (a numpy Generator) or {name}, got neither")
                given = rng.integers(0, sp.grid, size=(B, N, 2))
            given = np.asarray(given, dtype=np.int64)
            if given.shape != (B, N, 2) or given.min() < 0 or given.max() >= sp.grid:
                raise ValueError(
                    f"{name} must have shape {(B, N, 2)} with cells in 0..{sp.grid - 1}, "
                    f"got shape {given.shape}"
                )
            cells.append(given.copy())
        self.positions, self.goals = cells
        self.signals = np.full((B, N), -1, dtype=np.int64)  # last step's broadcasts
        self.t = 0
        return self.observe(), self.action_mask()

    def observe(self) -> np.ndarray:
        """Every agent's observation vector, (B, N, obs_dim)."""
        sp, B, N, G = self.spec, self.num_envs, self.spec.num_agents, self.spec.grid
        C = G * G
        eye = np.eye(C, dtype=np.float32)
        pos = eye[self.positions[..., 0] * G + self.positions[..., 1]]  # (B, N, C)
        goal = eye[self.goals[..., 0] * G + self.goals[..., 1]]
        obs = np.zeros((B, N, sp.obs_dim), dtype=np.float32)
        obs[:, :, :C] = pos
        obs[:, :, C : C + N * C] = pos.reshape(B, 1, N * C)
        own = np.repeat(np.eye(N, dtype=np.float32), C, axis=1)  # (N, N*C)
        obs[:, :, C + N * C : C + 2 * N * C] = goal.reshape(B, 1, N * C) * (1.0 - own)
        off = C + 2 * N * C
        obs[:, :, off + min(self.t, sp.horizon)] = 1.0
        off += sp.horizon + 1
        slot = np.where(self.signals >= 0, self.signals, sp.num_signals)  # (B, N)
        sig = np.eye(sp.num_signals + 1, dtype=np.float32)[slot].reshape(B, 1, -1)
        obs[:, :, off:] = sig
        return obs

    def action_mask(self) -> np.ndarray:
        """Legal actions, (B, N, A): all of them while the episode runs."""
        sp = self.spec
        return np.full((self.num_envs, sp.num_agents, sp.num_actions), self.t <= sp.horizon - 1)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """Apply one joint action (B, N)."""
        sp, B, N = self.spec, self.num_envs, self.spec.num_agents
        if self.t < 0 or self.t >= sp.horizon:
            raise RuntimeError("step called before reset or after the episode ended")
        actions = np.asarray(actions)
        if actions.shape != (B, N):
            raise ValueError(
                f"actions must have shape (num_envs, num_agents) = {(B, N)}, got {actions.shape}"
            )
        if not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {actions.dtype}")
        bad = (actions < 0) | (actions >= sp.num_actions)
        if bad.any():
            b, i = np.argwhere(bad)[0]
            raise ValueError(
                f"illegal action {int(actions[b, i])} for agent {i} in game {b}; "
                f"legal: 0..{sp.num_actions - 1}"
            )
        move = np.where(actions[..., None] < 5, MOVES[np.minimum(actions, 4)], 0)
        self.positions = np.clip(self.positions + move, 0, sp.grid - 1)
        self.signals = np.where(actions >= 5, actions - 5, -1)
        self.t += 1
        done = self.t >= sp.horizon
        reward = np.zeros(B, dtype=np.float32)
        if done:
            reward = (self.positions == self.goals).all(-1).mean(1).astype(np.float32)
        return self.observe(), self.action_mask(), reward, done


class RevealingGoalsEnv(_ParallelEnv):
    """One Revealing Goals game with the PettingZoo Parallel API (`revealing_goals_v0`).

    Agents are `"agent_0" ..`; observations `{"observation": float32 (obs_dim,), "action_mask":
    int8 (A,)}`; actions `Discrete(5 + S)`. Rules: `RevealingGoalsSpec`. Written plainly, one
    game at a time; the reference of `RevealingGoalsBatch`. Needs the `marl` extra.
    """

    metadata: ClassVar[dict] = {
        "name": GOALS_NAME,
        "render_modes": [],
        "is_parallelizable": True,
    }

    def __init__(self, spec: RevealingGoalsSpec | None = None) -> None:
        spec = spec or RevealingGoalsSpec()
        super().__init__(spec, "agent", spec.num_agents)

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a game; `options={"positions": ..., "goals": ...}` ((N, 2) each) fixes cells."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        sp, options = self.spec, options or {}
        self.positions = [list(map(int, c)) for c in options.get("positions", [])] or [
            [int(v) for v in self._rng.integers(0, sp.grid, size=2)] for _ in range(sp.num_agents)
        ]
        self.goals = [list(map(int, c)) for c in options.get("goals", [])] or [
            [int(v) for v in self._rng.integers(0, sp.grid, size=2)] for _ in range(sp.num_agents)
        ]
        self.broadcasts: list[int | None] = [None] * sp.num_agents
        self.t = 0
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def _observations(self) -> dict:
        sp, N, G = self.spec, self.spec.num_agents, self.spec.grid
        C = G * G
        out = {}
        for i, agent in enumerate(self.possible_agents):
            o = np.zeros(sp.obs_dim, dtype=np.float32)
            r, c = self.positions[i]
            o[r * G + c] = 1.0
            for j in range(N):
                r, c = self.positions[j]
                o[C + j * C + r * G + c] = 1.0
                if j != i:
                    r, c = self.goals[j]
                    o[C + N * C + j * C + r * G + c] = 1.0
            o[C + 2 * N * C + min(self.t, sp.horizon)] = 1.0
            off = C + 2 * N * C + sp.horizon + 1
            for j, b in enumerate(self.broadcasts):
                o[off + j * (sp.num_signals + 1) + (sp.num_signals if b is None else b)] = 1.0
            mask = np.full(sp.num_actions, int(self.t < sp.horizon), dtype=np.int8)
            out[agent] = {"observation": o, "action_mask": mask}
        return out

    def step(self, actions: dict):
        """Apply one joint action `{agent: int}` (every live agent must act)."""
        sp = self.spec
        acts = self._joint_action(actions)
        for agent, a in zip(self.possible_agents, acts):
            if not 0 <= a < sp.num_actions:
                raise ValueError(
                    f"illegal action {a} for agent {agent}; legal: 0..{sp.num_actions - 1}"
                )
        for i, a in enumerate(acts):
            if a < 5:
                dr, dc = MOVES[a]
                r, c = self.positions[i]
                self.positions[i] = [
                    min(max(r + dr, 0), sp.grid - 1),
                    min(max(c + dc, 0), sp.grid - 1),
                ]
                self.broadcasts[i] = None
            else:
                self.broadcasts[i] = a - 5
        self.t += 1
        done = self.t >= sp.horizon
        on_goal = [p == g for p, g in zip(self.positions, self.goals)]
        r = sum(on_goal) / sp.num_agents if done else 0.0
        obs = self._observations()
        agents = list(self.agents)
        out = (
            obs,
            {a: float(r) for a in agents},
            {a: done for a in agents},
            {a: False for a in agents},
            {a: {} for a in agents},
        )
        if done:
            self.agents = []
        return out
