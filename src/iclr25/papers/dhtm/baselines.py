"""Baselines in DHTM's API shape: `reset()`, `partial_fit(observation, action=0)`,
`predict_next()`, `successor_features(gamma, horizon)`.

- `MarkovCounts`: first-order transition counts with exponential forgetting.
- `CloneHMM`: a clone-structured HMM (CSCG without actions) refit by EM on a sliding buffer of
  episodes.
- `LSTMPredictor` and `RWKVPredictor`: recurrent next-symbol predictors (hidden 100) trained on a
  buffer of episodes with Adam (the paper's schedule: random batches every few episodes) plus
  online steps on each finished episode. The RWKV cell is hand-written (RWKV-4 time mixing with
  a WKV recurrence, and channel mixing).

Buffer-based baselines learn from an episode when the next `reset()` closes it. The episode
model of the experiments ends every episode with an END symbol: in successor-feature rollouts
the mass predicted on END is dropped from the rollout (nothing follows the end of an episode),
which for DHTM happens by itself (END cells have no segments).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from iclr25.core.errors import UsageError
from iclr25.core.seeding import torch_seed


class _Base:
    """Input checks and the episode buffer shared by the baselines."""

    def __init__(self, n_obs_states: int, end_state: int | None) -> None:
        if n_obs_states < 2:
            raise ValueError(f"n_obs_states={n_obs_states!r} is not allowed: must be >= 2")
        self.n_obs_states = n_obs_states
        self.end_state = end_state
        self._episode: list[int] = []
        self.episodes_: list[list[int]] = []

    def _check_obs(self, observation) -> int:
        if isinstance(observation, bool) or not isinstance(observation, int | np.integer):
            raise TypeError(
                f"observation={observation!r}: must be an int in [0, {self.n_obs_states})"
            )
        if not 0 <= observation < self.n_obs_states:
            raise ValueError(
                f"observation={observation!r} is out of the alphabet: must be in "
                f"[0, {self.n_obs_states})"
            )
        return int(observation)

    def _need_context(self) -> None:
        if not self._episode:
            raise UsageError("predict_next() needs a context: call partial_fit(observation) first")

    def reset(self):
        """Close the current episode (learning from it) and start a new one."""
        if self._episode:
            self.episodes_.append(self._episode)
            self._end_episode(self._episode)
        self._episode = []
        return self

    def _end_episode(self, episode: list[int]) -> None:
        pass

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
        if not 0 <= forgetting < 1:
            raise ValueError(f"forgetting={forgetting!r} is not allowed: must be in [0, 1)")
        self.forgetting = forgetting
        self.pseudocount = pseudocount
        self.counts_ = np.zeros((n_obs_states, n_obs_states))

    def partial_fit(self, observation: int, action: int = 0) -> MarkovCounts:
        o = self._check_obs(observation)
        if self._episode:
            self.counts_ *= 1 - self.forgetting
            self.counts_[self._episode[-1], o] += 1
        self._episode.append(o)
        return self

    def _transition(self) -> np.ndarray:
        c = self.counts_ + self.pseudocount
        rows = self.counts_.sum(1, keepdims=True) > 0
        return np.where(rows, c / c.sum(1, keepdims=True), 0.0)

    def predict_next(self) -> np.ndarray:
        self._need_context()
        return self._transition()[self._episode[-1]]

    def successor_features(self, gamma: float = 0.8, horizon: int = 50) -> np.ndarray:
        self._need_context()
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
    """Clone-structured HMM (CSCG without actions): `clones` hidden states per symbol, fixed
    emission, transitions and initial distribution refit by Baum-Welch on the last
    `buffer_episodes` episodes every `refit_every` episodes (warm-started from the current
    parameters)."""

    def __init__(
        self,
        n_obs_states: int,
        *,
        clones: int = 10,
        buffer_episodes: int = 200,
        refit_every: int = 50,
        em_iters: int = 10,
        pseudocount: float = 1e-3,
        end_state: int | None = None,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(n_obs_states, end_state)
        self.clones = clones
        self.buffer_episodes = buffer_episodes
        self.refit_every = refit_every
        self.em_iters = em_iters
        self.pseudocount = pseudocount
        rng = np.random.default_rng(random_state)
        n = n_obs_states * clones
        self.state_obs = np.repeat(np.arange(n_obs_states), clones)
        t = rng.random((n, n))
        self.trans_ = t / t.sum(1, keepdims=True)
        self.init_ = np.full(n, 1.0 / n)
        self._belief: np.ndarray | None = None

    def _mask(self, o) -> np.ndarray:
        return (self.state_obs == o).astype(float)

    def partial_fit(self, observation: int, action: int = 0) -> CloneHMM:
        o = self._check_obs(observation)
        b = self.init_ if not self._episode else self._belief @ self.trans_
        b = b * self._mask(o)
        s = b.sum()
        self._belief = b / s if s > 0 else self._mask(o) / self.clones
        self._episode.append(o)
        return self

    def predict_next(self) -> np.ndarray:
        self._need_context()
        return np.bincount(self.state_obs, self._belief @ self.trans_, minlength=self.n_obs_states)

    def successor_features(self, gamma: float = 0.8, horizon: int = 50) -> np.ndarray:
        self._need_context()
        b = self._belief
        keep = 1.0 - self._mask(self.end_state) if self.end_state is not None else 1.0
        sf = np.zeros(self.n_obs_states)
        for k in range(horizon):
            b = b @ self.trans_
            sf += gamma**k * np.bincount(self.state_obs, b, minlength=self.n_obs_states)
            b = b * keep
        return sf

    def _end_episode(self, episode: list[int]) -> None:
        if len(self.episodes_) % self.refit_every == 0:
            self.fit_em(self.episodes_[-self.buffer_episodes :])

    def fit_em(self, episodes: list[list[int]]) -> CloneHMM:
        """Baum-Welch iterations on `episodes` (grouped by length), from the current params."""
        by_len: dict[int, list[list[int]]] = {}
        for e in episodes:
            by_len.setdefault(len(e), []).append(e)
        masks = np.eye(self.n_obs_states)[self.state_obs].T  # (K, S)
        for _ in range(self.em_iters):
            xi = np.zeros_like(self.trans_)
            g0 = np.zeros_like(self.init_)
            for length, group in by_len.items():
                x = np.asarray(group)  # (B, L)
                em = masks[x]  # (B, L, S)
                alpha = np.zeros(em.shape)
                scale = np.zeros(x.shape)
                a = self.init_ * em[:, 0]
                for t in range(length):
                    if t:
                        a = (alpha[:, t - 1] @ self.trans_) * em[:, t]
                    scale[:, t] = a.sum(1) + 1e-300
                    alpha[:, t] = a / scale[:, t, None]
                beta = np.ones(em.shape)
                for t in range(length - 2, -1, -1):
                    beta[:, t] = ((em[:, t + 1] * beta[:, t + 1]) @ self.trans_.T) / scale[
                        :, t + 1, None
                    ]
                post0 = alpha[:, 0] * beta[:, 0]
                g0 += (post0 / post0.sum(1, keepdims=True)).sum(0)
                for t in range(length - 1):
                    r = em[:, t + 1] * beta[:, t + 1] / scale[:, t + 1, None]
                    xi += self.trans_ * (alpha[:, t].T @ r)
            xi += self.pseudocount
            self.trans_ = xi / xi.sum(1, keepdims=True)
            self.init_ = (g0 + self.pseudocount) / (g0 + self.pseudocount).sum()
        return self


# ---------------------------------------------------------------------------- RNNs


class _RecurrentPredictor(_Base):
    """Next-symbol prediction with a recurrent torch module, trained on an episode buffer."""

    def __init__(
        self,
        n_obs_states: int,
        *,
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
        super().__init__(n_obs_states, end_state)
        if not lr > 0:
            raise ValueError(f"lr={lr!r} is not allowed: must be > 0")
        self.hidden = hidden
        self.buffer_episodes = buffer_episodes
        self.train_every = train_every
        self.n_batches = n_batches
        self.batch_size = batch_size
        self.online_steps = online_steps
        seed = int(np.random.default_rng(random_state).integers(2**31))
        self._gen = torch.Generator().manual_seed(seed)
        with torch_seed(seed):  # default inits read torch's global generator
            self.net = self._build()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)
        self._state = None
        self._logits: torch.Tensor | None = None

    def _build(self) -> nn.Module:
        raise NotImplementedError

    def _init_state(self, batch: int):
        raise NotImplementedError

    def _step(self, x: torch.Tensor, state):
        """One step: x (B, K) input distribution -> (logits (B, K), state)."""
        raise NotImplementedError

    def partial_fit(self, observation: int, action: int = 0):
        o = self._check_obs(observation)
        if not self._episode:
            self._state = self._init_state(1)
        with torch.no_grad():
            x = torch.zeros(1, self.n_obs_states)
            x[0, o] = 1.0
            self._logits, self._state = self._step(x, self._state)
        self._episode.append(o)
        return self

    def predict_next(self) -> np.ndarray:
        self._need_context()
        return torch.softmax(self._logits[0], -1).double().numpy()

    def successor_features(self, gamma: float = 0.8, horizon: int = 50) -> np.ndarray:
        """Mean-field rollout: the predicted distribution (END removed, renormalised) is the next
        input; the mass that survives END scales later predictions."""
        self._need_context()
        sf = np.zeros(self.n_obs_states)
        alive = 1.0
        logits, state = self._logits, self._state
        with torch.no_grad():
            for k in range(horizon):
                p = torch.softmax(logits[0], -1).double().numpy()
                sf += gamma**k * alive * p
                q = self._drop_end(p)
                alive *= q.sum()
                if alive < 1e-6:
                    break
                x = torch.as_tensor(q / q.sum(), dtype=torch.float32)[None]
                logits, state = self._step(x, state)
        return sf

    def _loss(self, batch: list[list[int]]) -> torch.Tensor:
        x = torch.as_tensor(batch)  # (B, L), equal lengths
        onehot = torch.nn.functional.one_hot(x, self.n_obs_states).float()
        state = self._init_state(x.shape[0])
        losses = []
        for t in range(x.shape[1] - 1):
            logits, state = self._step(onehot[:, t], state)
            losses.append(nn.functional.cross_entropy(logits, x[:, t + 1]))
        return torch.stack(losses).mean()

    def _update(self, batch: list[list[int]]) -> None:
        self.opt.zero_grad()
        self._loss(batch).backward()
        self.opt.step()

    def _end_episode(self, episode: list[int]) -> None:
        if len(episode) < 2:
            return
        for _ in range(self.online_steps):
            self._update([episode])
        if len(self.episodes_) % self.train_every == 0:
            buf = self.episodes_[-self.buffer_episodes :]
            by_len: dict[int, list[list[int]]] = {}
            for e in buf:
                if len(e) >= 2:
                    by_len.setdefault(len(e), []).append(e)
            lengths = sorted(by_len)
            for _ in range(self.n_batches):
                group = by_len[lengths[int(torch.randint(len(lengths), (1,), generator=self._gen))]]
                idx = torch.randint(
                    len(group), (min(self.batch_size, len(group)),), generator=self._gen
                )
                self._update([group[i] for i in idx.tolist()])


class LSTMPredictor(_RecurrentPredictor):
    """One-layer LSTM (hidden 100) with a linear read-out."""

    def _build(self) -> nn.Module:
        return nn.ModuleDict(
            {
                "cell": nn.LSTMCell(self.n_obs_states, self.hidden),
                "out": nn.Linear(self.hidden, self.n_obs_states),
            }
        )

    def _init_state(self, batch: int):
        z = torch.zeros(batch, self.hidden)
        return (z, z)

    def _step(self, x, state):
        h, c = self.net["cell"](x, state)
        return self.net["out"](h), (h, c)


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


class RWKVPredictor(_RecurrentPredictor):
    """Linear embedding, one hand-written RWKV block (width 100), layer norm and read-out."""

    def _build(self) -> nn.Module:
        d = self.hidden
        return nn.ModuleDict(
            {
                "emb": nn.Linear(self.n_obs_states, d, bias=False),
                "block": RWKVCell(d),
                "ln": nn.LayerNorm(d),
                "out": nn.Linear(d, self.n_obs_states),
            }
        )

    def _init_state(self, batch: int):
        z = torch.zeros(batch, self.hidden)
        return (z, z, z, z)

    def _step(self, x, state):
        h, state = self.net["block"](self.net["emb"](x), state)
        return self.net["out"](self.net["ln"](h)), state
