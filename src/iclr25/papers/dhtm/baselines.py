"""Baselines in DHTM's API shape (`iclr25.papers.dhtm.method.SequenceModel`): `reset()`,
`observe`/`act` or `partial_fit(observation, action=0)`, `predict_next()`,
`successor_features(gamma, horizon)`, `successor_features_actions(gamma, horizon)`.

- `MarkovCounts`: first-order transition counts with exponential forgetting.
- `CloneHMM`: a clone-structured HMM (CSCG without actions) refit by EM on a sliding buffer of
  episodes.
- `RecurrentPredictor`: a recurrent next-symbol predictor (hidden 100) trained on a buffer of
  episodes with Adam (the paper's schedule: random batches every few episodes) plus online
  steps on each finished episode, over a `RecurrentCore`: `LSTMCore` (`LSTMPredictor(...)`) or
  `RWKVCore` (`RWKVPredictor(...)`; the RWKV cell is hand-written: RWKV-4 time mixing with a
  WKV recurrence, and channel mixing).

Buffer-based baselines learn from an episode when the next `reset()` closes it. The episode
model of the experiments ends every episode with an END symbol: in successor-feature rollouts
the mass predicted on END is dropped from the rollout (nothing follows the end of an episode),
which for DHTM happens by itself (END cells have no segments).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_float, check_int
from iclr25.core.errors import UsageError
from iclr25.core.seeding import torch_seed
from iclr25.papers.dhtm.method import SymbolChecks, check_rollout


class _Base(SymbolChecks):
    """Input checks, the observe/act protocol and the episode buffer shared by the baselines
    (each a `SequenceModel`: `MarkovCounts`, `CloneHMM`, `RecurrentPredictor`).

    `observe(o)` then `act(a)` per step (`partial_fit(o, a)` does both); `reset()` closes the
    episode, stored in `episodes_` (observations) and `actions_` (actions after each)."""

    def __init__(self, n_obs_states: int, end_state: int | None, n_actions: int = 1) -> None:
        self.n_obs_states = check_int("n_obs_states", n_obs_states, 2)
        self.n_actions = check_int("n_actions", n_actions, 1)
        self.end_state = (
            None if end_state is None else check_int("end_state", end_state, 0, n_obs_states - 1)
        )
        self._episode: list[int] = []
        self._actions: list[int] = []
        self.episodes_: list[list[int]] = []
        self.actions_: list[list[int]] = []

    def _need_context(self) -> None:
        if not self._episode:
            raise UsageError("predict_next() needs a context: call partial_fit(observation) first")

    def _acted(self) -> bool:
        return len(self._actions) == len(self._episode)

    def _action_or_pending(self, action: int | None) -> int | None:
        """`action` if given, else the action taken after the last observation, else None."""
        if action is not None:
            return self._check_action(action)
        return self._actions[-1] if self._episode and self._acted() else None

    def observe(self, observation: int):
        """Observe o_t (after the action passed to `act`)."""
        o = self._check_obs(observation)
        if self._episode and not self._acted():
            if self.n_actions > 1:
                raise UsageError("observe() twice without act(action) in between")
            self._act(0)
        self._observe(o)
        self._episode.append(o)
        return self

    def act(self, action: int):
        """Record a_t, the action taken after the last observation."""
        if not self._episode or self._acted():
            raise UsageError("act() needs a new observation first: call observe(observation)")
        self._act(self._check_action(action))
        return self

    def _act(self, a: int) -> None:
        self._actions.append(a)

    def _observe(self, o: int) -> None:
        pass

    def partial_fit(self, observation: int, action: int = 0):
        """`observe(observation)` then `act(action)`."""
        self._check_obs(observation)
        self._check_action(action)
        return self.observe(observation).act(action)

    def reset(self):
        """Close the current episode (learning from it) and start a new one."""
        if self._episode:
            self.episodes_.append(self._episode)
            self.actions_.append(self._actions)
            self._end_episode(self._episode)
        self._episode = []
        self._actions = []
        return self

    def _end_episode(self, episode: list[int]) -> None:
        pass

    def successor_features_actions(
        self, gamma: float = 0.8, horizon: int = 50, actions=None
    ) -> np.ndarray:
        """`successor_features` for several first actions (default: every action), shape
        (len(actions), K)."""
        acts = range(self.n_actions) if actions is None else actions
        return np.stack([self.successor_features(gamma, horizon, action=a) for a in acts])

    def _drop_end(self, p: np.ndarray) -> np.ndarray:
        if self.end_state is None:
            return p
        q = p.copy()
        q[..., self.end_state] = 0.0
        return q


# ---------------------------------------------------------------------------- Markov


class MarkovCounts(_Base):
    """First-order counts C[prev, next], all multiplied by (1 - forgetting) at each step."""

    def __init__(
        self,
        n_obs_states: int,
        *,
        forgetting: float = 0.01,
        pseudocount: float = 0.01,
        end_state: int | None = None,
    ) -> None:
        super().__init__(n_obs_states, end_state)
        self.forgetting = check_float("forgetting", forgetting, 0, 1, high_open=True)
        self.pseudocount = check_float("pseudocount", pseudocount, 0)
        self.counts_ = np.zeros((n_obs_states, n_obs_states))

    def _observe(self, o: int) -> None:
        if self._episode:
            self.counts_ *= 1 - self.forgetting
            self.counts_[self._episode[-1], o] += 1

    def _transition(self) -> np.ndarray:
        c = self.counts_ + self.pseudocount
        rows = self.counts_.sum(1, keepdims=True) > 0
        return np.where(rows, c / c.sum(1, keepdims=True), 0.0)

    def predict_next(self, action: int | None = None) -> np.ndarray:
        """p(o_{t+1} | o_t) (actions are ignored)."""
        self._need_context()
        return self._transition()[self._episode[-1]]

    def successor_features(
        self, gamma: float = 0.8, horizon: int = 50, *, action: int | None = None
    ) -> np.ndarray:
        """Exact SF of the first-order chain (actions are ignored)."""
        self._need_context()
        gamma, horizon = check_rollout(gamma, horizon)
        t = self._transition()
        d = np.zeros(self.n_obs_states)
        d[self._episode[-1]] = 1.0
        sf = np.zeros(self.n_obs_states)
        for k in range(horizon):
            d = d @ t
            sf += gamma**k * d
            d = self._drop_end(d)
        return sf


# ---------------------------------------------------------------------------- clone HMM


class CloneHMM(_Base):
    """Clone-structured HMM (CSCG): `clones` hidden states per symbol, fixed emission, one
    transition matrix per action; transitions and initial distribution refit by Baum-Welch on
    the last `buffer_episodes` episodes every `refit_every` episodes, at most `em_iters`
    iterations, stopping early once an iteration gains less than `em_tol` nats of
    log-likelihood per step (None: never). Each refit starts from a fresh random matrix (the
    official agent's `prev_matrix_as_init: false`), or with `warm_start` from the current
    parameters. Rollouts use a uniform action after the first step.

    A warm start saves iterations but, refit after refit on a sliding buffer, turns every row
    the buffer no longer uses into the uniform pseudocount row: the clones of a symbol become
    interchangeable and EM cannot split them again (in the gridworld, a warm-started agent
    that walked one path for 300 episodes never learned the detour after the change)."""

    def __init__(
        self,
        n_obs_states: int,
        n_actions: int = 1,
        *,
        clones: int = 10,
        buffer_episodes: int = 200,
        refit_every: int = 50,
        em_iters: int = 200,
        em_tol: float | None = 1e-4,
        warm_start: bool = False,
        pseudocount: float = 1e-3,
        end_state: int | None = None,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(n_obs_states, end_state, n_actions)
        self.clones = check_int("clones", clones, 1)
        self.buffer_episodes = check_int("buffer_episodes", buffer_episodes, 1)
        self.refit_every = check_int("refit_every", refit_every, 1)
        self.em_iters = check_int("em_iters", em_iters, 1)
        self.em_tol = None if em_tol is None else check_float("em_tol", em_tol, 0)
        self.warm_start = bool(warm_start)
        self.pseudocount = check_float("pseudocount", pseudocount, 0)
        self._rng = np.random.default_rng(random_state)
        self.state_obs = np.repeat(np.arange(n_obs_states), clones)
        self._random_init()
        self._belief: np.ndarray | None = None
        self.em_iters_run_: list[int] = []

    def _random_init(self) -> None:
        n = len(self.state_obs)
        t = self._rng.random((self.n_actions, n, n))
        self.trans_ = t / t.sum(2, keepdims=True)
        self.init_ = np.full(n, 1.0 / n)

    def _mask(self, o) -> np.ndarray:
        return (self.state_obs == o).astype(float)

    def _transition(self, action: int | None) -> np.ndarray:
        return self.trans_.mean(0) if action is None else self.trans_[action]

    def _observe(self, o: int) -> None:
        b = self._belief @ self.trans_[self._actions[-1]] if self._episode else self.init_
        b = b * self._mask(o)
        s = b.sum()
        self._belief = b / s if s > 0 else self._mask(o) / self.clones

    def predict_next(self, action: int | None = None) -> np.ndarray:
        """p(o_{t+1} | o_{<=t}, a_t) by forward filtering (uniform action if unknown)."""
        self._need_context()
        b = self._belief @ self._transition(self._action_or_pending(action))
        return np.bincount(self.state_obs, b, minlength=self.n_obs_states)

    def successor_features(
        self, gamma: float = 0.8, horizon: int = 50, *, action: int | None = None
    ) -> np.ndarray:
        """Exact rollout of the belief (first step with a_t, then a uniform action)."""
        self._need_context()
        gamma, horizon = check_rollout(gamma, horizon)
        b = self._belief
        keep = 1.0 - self._mask(self.end_state) if self.end_state is not None else 1.0
        t = self._transition(self._action_or_pending(action))
        uniform = self._transition(None)
        sf = np.zeros(self.n_obs_states)
        for k in range(horizon):
            b = b @ t
            sf += gamma**k * np.bincount(self.state_obs, b, minlength=self.n_obs_states)
            b = b * keep
            t = uniform
        return sf

    def _end_episode(self, episode: list[int]) -> None:
        if len(self.episodes_) % self.refit_every == 0:
            if not self.warm_start:
                self._random_init()
            self.fit_em(
                self.episodes_[-self.buffer_episodes :], self.actions_[-self.buffer_episodes :]
            )

    def fit_em(self, episodes: list[list[int]], actions: list[list[int]] | None = None) -> CloneHMM:
        """Baum-Welch iterations on `episodes` (with the actions taken after each observation;
        none for a single action), grouped by length, from the current parameters; the number
        of iterations run is appended to `em_iters_run_`.

        The emission is deterministic, so a posterior lives on the clones of the observed
        symbol: the E-step runs on the (clones x clones) blocks of the transition between
        consecutive symbols, not on the whole matrix (the same counts with n_obs_states^2
        times fewer operations), and the expected counts of each block are one matrix product
        over the steps that used it. Identical episodes (with their actions) are one row
        weighted by their count: a buffer of a deterministic process holds a few distinct
        episodes."""
        if not episodes:
            return self
        if actions is None:
            actions = [[0] * len(e) for e in episodes]
        k, c = self.n_obs_states, self.clones
        by_len: dict[int, list[list[int]]] = {}
        for e, a in zip(episodes, actions):
            by_len.setdefault(len(e), []).append(list(e) + (list(a) + [0] * len(e))[: len(e)])
        # what does not change over the iterations: per length, the distinct (symbols, actions)
        # rows with their counts and each step's (action, symbol, next symbol) block; the steps
        # that use each block, sorted by block
        groups = []
        for length, rows in by_len.items():
            distinct, counts = np.unique(np.asarray(rows), axis=0, return_counts=True)
            x, acts = distinct[:, :length], distinct[:, length:]
            step_keys = (acts[:, :-1] * k + x[:, :-1]) * k + x[:, 1:]
            groups.append((x, counts.astype(float), step_keys))
        keys = np.concatenate([sk.ravel() for _, _, sk in groups])
        order = np.argsort(keys, kind="stable")
        used, starts = np.unique(keys[order], return_index=True)
        by_block = list(zip(used, starts, [*starts[1:], len(keys)]))
        n_steps = sum(len(e) for e in episodes)
        loglik, iters = -np.inf, 0
        while iters < self.em_iters:
            iters += 1
            trans = self.trans_.reshape(self.n_actions, k, c, k, c)
            # the (clones x clones) block of p(clone of the next symbol | clone, action), per key
            blocks = trans.transpose(0, 1, 3, 2, 4).reshape(-1, c, c)
            new_loglik = 0.0
            g0 = np.zeros((k, c))
            alphas, rs = [], []  # per step with a successor, weighted by its row's count
            for x, w, step_keys in groups:  # x: (B, L) distinct rows, w: (B,) their counts
                block = blocks[step_keys]  # (B, L-1, c, c)
                alpha = np.empty((*x.shape, c))
                scale = np.empty(x.shape)
                a = self.init_.reshape(k, c)[x[:, 0]]
                for t in range(x.shape[1]):
                    if t:
                        a = (alpha[:, t - 1, None, :] @ block[:, t - 1])[:, 0]
                    scale[:, t] = a.sum(1) + 1e-300
                    alpha[:, t] = a / scale[:, t, None]
                new_loglik += float(w @ np.log(scale).sum(1))
                beta = np.ones(alpha.shape)
                for t in range(x.shape[1] - 2, -1, -1):
                    beta[:, t] = (block[:, t] @ beta[:, t + 1, :, None])[..., 0]
                    beta[:, t] /= scale[:, t + 1, None]
                post0 = alpha[:, 0] * beta[:, 0]
                np.add.at(g0, x[:, 0], w[:, None] * post0 / post0.sum(1, keepdims=True))
                alphas.append((alpha[:, :-1] * w[:, None, None]).reshape(-1, c))
                rs.append((beta[:, 1:] / scale[:, 1:, None]).reshape(-1, c))
            alpha_steps, r_steps = np.concatenate(alphas)[order], np.concatenate(rs)[order]
            outer = np.zeros((self.n_actions * k * k, c, c))
            for u, lo, hi in by_block:
                outer[u] = alpha_steps[lo:hi].T @ r_steps[lo:hi]
            xi = trans * outer.reshape(self.n_actions, k, k, c, c).transpose(0, 1, 3, 2, 4)
            xi = xi.reshape(self.trans_.shape) + self.pseudocount
            self.trans_ = xi / xi.sum(2, keepdims=True)
            g0 = g0.reshape(-1) + self.pseudocount
            self.init_ = g0 / g0.sum()
            # the log-likelihood of the parameters this iteration started from
            gain, loglik = (new_loglik - loglik) / n_steps, new_loglik
            if self.em_tol is not None and gain < self.em_tol:
                break
        self.em_iters_run_.append(iters)
        return self


# ---------------------------------------------------------------------------- RNNs


class RecurrentCore(Protocol):
    """The recurrent network a `RecurrentPredictor` trains (`LSTMCore`, `RWKVCore`): a torch
    module built as `core(n_inputs, hidden, n_outputs)`.

    Shapes: `init_state(B)` is a tuple of (B, hidden) tensors; `step(x, state)` maps x (B,
    n_inputs) to (logits (B, n_outputs), next state).
    """

    def parameters(self) -> Iterator[nn.Parameter]: ...

    def init_state(self, batch: int) -> tuple[torch.Tensor, ...]: ...

    def step(
        self, x: torch.Tensor, state: tuple[torch.Tensor, ...]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]: ...


class LSTMCore(nn.Module):
    """One-layer LSTM with a linear read-out."""

    def __init__(self, n_inputs: int, hidden: int, n_outputs: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.cell = nn.LSTMCell(n_inputs, hidden)
        self.out = nn.Linear(hidden, n_outputs)

    def init_state(self, batch: int):
        z = torch.zeros(batch, self.hidden)
        return (z, z)

    def step(self, x, state):
        h, c = self.cell(x, state)
        return self.out(h), (h, c)


class RecurrentPredictor(_Base):
    """Next-observation prediction with a recurrent network (`core`: `LSTMCore` or
    `RWKVCore`), trained on an episode buffer. The input at step t is one-hot(o_t), followed by
    one-hot(a_t) when there is more than one action; the target is o_{t+1}."""

    def __init__(
        self,
        n_obs_states: int,
        n_actions: int = 1,
        *,
        core: Callable[[int, int, int], RecurrentCore] = LSTMCore,
        hidden: int = 100,
        lr: float = 0.002,
        buffer_episodes: int = 1000,
        train_every: int = 10,
        n_batches: int = 50,
        batch_size: int = 50,
        online_steps: int = 1,
        end_state: int | None = None,
        random_state: int | None = None,
    ) -> None:
        super().__init__(n_obs_states, end_state, n_actions)
        lr = check_float("lr", lr, 0, low_open=True)
        self.hidden = check_int("hidden", hidden, 1)
        self.n_inputs = n_obs_states + (n_actions if n_actions > 1 else 0)
        self.buffer_episodes = check_int("buffer_episodes", buffer_episodes, 1)
        self.train_every = check_int("train_every", train_every, 1)
        self.n_batches = check_int("n_batches", n_batches, 0)
        self.batch_size = check_int("batch_size", batch_size, 1)
        self.online_steps = check_int("online_steps", online_steps, 0)
        seed = int(np.random.default_rng(random_state).integers(2**31))
        self._gen = torch.Generator().manual_seed(seed)
        with torch_seed(seed):  # default inits read torch's global generator
            self.net = core(self.n_inputs, self.hidden, n_obs_states)
        # foreach: one multi-tensor Adam update per step instead of a Python loop over the
        # parameters (same update).
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr, foreach=True)
        self._state = None  # state before the last observation's step
        self._stepped = None  # (logits, state) after it, once the action is known

    def _input(self, obs: torch.Tensor, action: int | np.ndarray | None) -> torch.Tensor:
        """Input rows for observation distributions `obs` (B, K) and an action (None:
        uniform)."""
        if self.n_actions == 1:
            return obs
        a = torch.full((obs.shape[0], self.n_actions), 1.0 / self.n_actions)
        if action is not None:
            a = torch.nn.functional.one_hot(torch.as_tensor(action), self.n_actions).float()
            a = a.expand(obs.shape[0], -1)
        return torch.cat([obs, a], dim=1)

    def _observe(self, o: int) -> None:
        if not self._episode:
            self._state = self.net.init_state(1)
        else:
            self._state = self._stepped[1]
        self._stepped = None

    def _act(self, a: int) -> None:
        super()._act(a)
        self._stepped = self._advance(a)

    def _advance(self, action: int | None):
        x = torch.zeros(1, self.n_obs_states)
        x[0, self._episode[-1] if self._episode else 0] = 1.0
        with torch.no_grad():
            return self.net.step(self._input(x, action), self._state)

    def _after(self, action: int | None):
        a = self._action_or_pending(action)
        if action is None and self._stepped is not None:
            return self._stepped
        return self._advance(a)

    def predict_next(self, action: int | None = None) -> np.ndarray:
        """p(o_{t+1} | o_{<=t}, a_t) (uniform action if unknown)."""
        self._need_context()
        logits, _ = self._after(action)
        return torch.softmax(logits[0], -1).double().numpy()

    def successor_features(
        self, gamma: float = 0.8, horizon: int = 50, *, action: int | None = None
    ) -> np.ndarray:
        """Mean-field rollout: the predicted distribution (END removed, renormalised) is the next
        input, with a uniform action after the first step; the mass that survives END scales
        later predictions."""
        self._need_context()
        gamma, horizon = check_rollout(gamma, horizon)
        logits, state = self._after(action)
        return self._rollout(logits, state, gamma, horizon)[0]

    def successor_features_actions(
        self, gamma: float = 0.8, horizon: int = 50, actions=None
    ) -> np.ndarray:
        """`successor_features` for several first actions (default: all), as one batch."""
        self._need_context()
        gamma, horizon = check_rollout(gamma, horizon)
        acts = list(range(self.n_actions)) if actions is None else list(actions)
        x = torch.zeros(len(acts), self.n_obs_states)
        x[:, self._episode[-1]] = 1.0
        if self.n_actions > 1:
            a = torch.stack(
                [
                    torch.full((self.n_actions,), 1.0 / self.n_actions)
                    if b is None
                    else torch.nn.functional.one_hot(
                        torch.tensor(self._check_action(b)), self.n_actions
                    ).float()
                    for b in acts
                ]
            )
            x = torch.cat([x, a], dim=1)
        state = tuple(t.expand(len(acts), -1) for t in self._state)
        with torch.no_grad():
            logits, state = self.net.step(x, state)
        return self._rollout(logits, state, gamma, horizon)

    # DEVIATION: LSTM/RWKV SFs come from mean-field rollouts (the predicted distribution is
    # fed back as a soft input); sampling rollouts would be exact in expectation but costly.
    def _rollout(self, logits, state, gamma: float, horizon: int) -> np.ndarray:
        sf = np.zeros((logits.shape[0], self.n_obs_states))
        alive = np.ones(logits.shape[0])
        with torch.no_grad():
            for k in range(horizon):
                p = torch.softmax(logits, -1).double().numpy()
                sf += gamma**k * alive[:, None] * p
                q = self._drop_end(p)
                alive = alive * q.sum(1)
                if alive.max() < 1e-6:
                    break
                x = torch.as_tensor(q / q.sum(1, keepdims=True), dtype=torch.float32)
                logits, state = self.net.step(self._input(x, None), state)
        return sf

    def _loss(self, batch: list[tuple[list[int], list[int]]]) -> torch.Tensor:
        x = torch.as_tensor([e for e, _ in batch])  # (B, L), equal lengths
        inp = torch.nn.functional.one_hot(x, self.n_obs_states).float()
        if self.n_actions > 1:
            acts = torch.as_tensor([a for _, a in batch])
            inp = torch.cat([inp, torch.nn.functional.one_hot(acts, self.n_actions).float()], 2)
        state = self.net.init_state(x.shape[0])
        logits = []
        for t in range(x.shape[1] - 1):
            out, state = self.net.step(inp[:, t], state)
            logits.append(out)
        # the mean over steps of per-step means (every step has the whole batch)
        return nn.functional.cross_entropy(torch.stack(logits, 1).flatten(0, 1), x[:, 1:].flatten())

    def _update(self, batch) -> None:
        self.opt.zero_grad()
        self._loss(batch).backward()
        self.opt.step()

    def _end_episode(self, episode: list[int]) -> None:
        if len(episode) < 2:
            return
        actions = (self.actions_[-1] + [0] * len(episode))[: len(episode)]
        for _ in range(self.online_steps):
            self._update([(episode, actions)])
        if len(self.episodes_) % self.train_every == 0:
            start = max(0, len(self.episodes_) - self.buffer_episodes)
            # DEVIATION: a batch holds episodes of one length (a length drawn uniformly among
            # those in the buffer, then episodes at random), instead of padded mixed lengths.
            by_len: dict[int, list[tuple[list[int], list[int]]]] = {}
            for e, a in zip(self.episodes_[start:], self.actions_[start:]):
                if len(e) >= 2:
                    by_len.setdefault(len(e), []).append((e, (a + [0] * len(e))[: len(e)]))
            lengths = sorted(by_len)
            for _ in range(self.n_batches):
                pick = int(torch.randint(len(lengths), (1,), generator=self._gen))
                group = by_len[lengths[pick]]
                size = min(self.batch_size, len(group))
                idx = torch.randint(len(group), (size,), generator=self._gen)
                self._update([group[i] for i in idx.tolist()])


class RWKVCell(nn.Module):
    """One RWKV-4 block in recurrent form: time mixing (token shift, receptance, WKV with
    per-channel decay w and bonus u) and channel mixing (token shift, squared ReLU).

    State per sequence: previous inputs of both mixings, and the WKV numerator/denominator.
    """

    def __init__(self, d: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mix_k, self.mix_v, self.mix_r = (nn.Parameter(torch.full((d,), 0.5)) for _ in range(3))
        self.mix_fk, self.mix_fr = (nn.Parameter(torch.full((d,), 0.5)) for _ in range(2))
        self.decay = nn.Parameter(torch.linspace(-3.0, 1.0, d))  # w = -exp(decay)
        self.bonus = nn.Parameter(torch.zeros(d))  # u
        self.key, self.value, self.recept = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.output = nn.Linear(d, d, bias=False)
        self.fkey = nn.Linear(d, 2 * d, bias=False)
        self.fvalue = nn.Linear(2 * d, d, bias=False)
        self.frecept = nn.Linear(d, d, bias=False)

    def forward(self, x, state):
        prev_att, num, den, prev_ffn = state
        xa = self.ln1(x)
        k = self.key(xa * self.mix_k + prev_att * (1 - self.mix_k)).clamp(-30, 30)
        v = self.value(xa * self.mix_v + prev_att * (1 - self.mix_v))
        r = torch.sigmoid(self.recept(xa * self.mix_r + prev_att * (1 - self.mix_r)))
        eu = torch.exp(self.bonus + k)
        wkv = (num + eu * v) / (den + eu)
        x = x + self.output(r * wkv)
        w = torch.exp(-torch.exp(self.decay))
        ek = torch.exp(k)
        num, den = w * num + ek * v, w * den + ek
        xf = self.ln2(x)
        kf = torch.relu(self.fkey(xf * self.mix_fk + prev_ffn * (1 - self.mix_fk))) ** 2
        rf = torch.sigmoid(self.frecept(xf * self.mix_fr + prev_ffn * (1 - self.mix_fr)))
        x = x + rf * self.fvalue(kf)
        return x, (xa, num, den, xf)


class RWKVCore(nn.Module):
    """Linear embedding, one hand-written RWKV block (`RWKVCell`), layer norm and read-out."""

    def __init__(self, n_inputs: int, hidden: int, n_outputs: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.emb = nn.Linear(n_inputs, hidden, bias=False)
        self.block = RWKVCell(hidden)
        self.ln = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, n_outputs)

    def init_state(self, batch: int):
        z = torch.zeros(batch, self.hidden)
        return (z, z, z, z)

    def step(self, x, state):
        h, state = self.block(self.emb(x), state)
        return self.out(self.ln(h)), state


def LSTMPredictor(n_obs_states: int, n_actions: int = 1, **kwargs) -> RecurrentPredictor:
    """A `RecurrentPredictor` over a one-layer LSTM (width `hidden`, paper: 100)."""
    return RecurrentPredictor(n_obs_states, n_actions, core=LSTMCore, **kwargs)


def RWKVPredictor(n_obs_states: int, n_actions: int = 1, **kwargs) -> RecurrentPredictor:
    """A `RecurrentPredictor` over one hand-written RWKV-4 block (width `hidden`)."""
    return RecurrentPredictor(n_obs_states, n_actions, core=RWKVCore, **kwargs)
