"""Distributed Hebbian Temporal Memory (DHTM), the fully online variant, as an estimator.

The model (Dzhivelikian, Kuderov, Panov, ICLR 2025), in the notation of the docs page:

- One categorical observation variable with K states. It has `n_copies` (r) hidden variables;
  each has K·c states (*cells*): c cells per *column*, one column per observed value (the clone
  structure of CSCG). Emission is fixed: a cell emits only its own column.
- The transition to a hidden variable j is a product of *factors* (at most
  `max_factors_per_var`). A factor links j to `n_vars_per_factor` variables at t-1, one of which
  is usually the action variable. A factor's table is sparse: each non-zero entry is a
  *dendritic segment* l on its postsynaptic cell, with a receptive field rec(l) holding one
  presynaptic cell per factor variable, a value f_l in (0, 1] (stored as log f) and per-synapse
  efficiencies s_i in [0, 1].

Inference (one forward step, `_excitation`): for messages m over all cells, a cell is active
when m >= θ; only segments whose presynaptic cells are all active count. A segment's
log-likelihood is log L = s̄·log(mean_i m_i s_i) + Σ_i (1 - s_i) log m_i and its excitation
E = log L + log f. Per cell: **max** over the segments of one factor, **sum** over factors;
cells with no active segment get -inf. Per hidden variable: subtract the mean of the finite
values, multiply by the inverse temperature, exponentiate and normalise; a variable with no
finite cell predicts all zeros.

Learning (`partial_fit`) is local, from one sampled cell per hidden variable (not from messages):
segments active under the previous *sample* plus the action cell are reinforced
(f += λ_f(1-f)) when their cell was sampled and punished (f *= 1-λ_f) otherwise, deleted when
log f < log_f_min; synapses with an active presynaptic cell move towards 1[segment active];
activity traces move towards 1[active]; a sampled cell with no active segment grows one
(log f = log_f_init, then reinforced once: it is active in the step that grows it) on a factor
of its variable, creating the factor first when the variable has fewer than
`max_factors_per_var`. Over `max_segments`, the segments with the lowest f·a are
pruned.

Storage is a struct of fixed-width arrays (one row per segment slot, `n_vars_per_factor`
columns for the receptive field and efficiencies), so every step is a handful of vectorised
numpy operations over all segments, never a Python loop over segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.core.errors import UsageError

_NEG_INF = -np.inf


@dataclass
class SegmentStore:
    """All segments of a DHTM, one row per slot (dead rows have `alive` False).

    Attributes:
        alive: (S,) whether the slot holds a segment.
        cell: (S,) global index of the postsynaptic cell.
        factor: (S,) index of the segment's factor.
        rec: (S, V) global indices of the presynaptic cells (one per factor variable).
        log_f: (S,) log of the segment value f.
        s: (S, V) synapse efficiencies.
        a: (S,) activity trace.
    """

    alive: np.ndarray
    cell: np.ndarray
    factor: np.ndarray
    rec: np.ndarray
    log_f: np.ndarray
    s: np.ndarray
    a: np.ndarray

    @classmethod
    def empty(cls, capacity: int, width: int) -> SegmentStore:
        return cls(
            alive=np.zeros(capacity, bool),
            cell=np.zeros(capacity, np.int64),
            factor=np.zeros(capacity, np.int64),
            rec=np.zeros((capacity, width), np.int64),
            log_f=np.zeros(capacity),
            s=np.zeros((capacity, width)),
            a=np.zeros(capacity),
        )

    def grow_to(self, capacity: int) -> None:
        """Enlarge every array to `capacity` rows (new rows dead)."""
        for name in ("alive", "cell", "factor", "rec", "log_f", "s", "a"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)


def segment_log_likelihood(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """log L = s̄·log(mean_i m_i s_i) + Σ_i (1 - s_i) log m_i, over the last axis.

    Shapes: m (..., V) presynaptic messages (all > 0), s (..., V) efficiencies -> (...). With
    s = 1 this is the log of the mean of the inputs (redundant inputs), with s = 0 the sum of
    their logs (independent inputs). Rows with s̄ = 0 have no first term.
    """
    v = m.shape[-1]
    sbar = s.sum(axis=-1) / v
    with np.errstate(divide="ignore"):
        first = np.where(sbar > 0, sbar * np.log(np.maximum((m * s).sum(axis=-1) / v, 1e-300)), 0.0)
    return first + ((1.0 - s) * np.log(m)).sum(axis=-1)


@runtime_checkable
class SequenceModel(Protocol):
    """What the experiments and `SFAgent` use of a model: DHTM and every baseline
    (`MarkovCounts`, `CloneHMM`, `RecurrentPredictor`) implement it.

    An episode is `reset()`, then per step `observe(o_t)` and `act(a_t)` (or
    `partial_fit(o_t, a_t)`, both at once). Predictions are over the K observation states.

    Shapes: `predict_next` (K,); `successor_features` (K,); `successor_features_actions`
    (len(actions), K), one row per first action (default: every action).
    """

    n_obs_states: int
    n_actions: int

    def reset(self) -> Any: ...

    def observe(self, observation: int) -> Any: ...

    def act(self, action: int) -> Any: ...

    def partial_fit(self, observation: int, action: int = 0) -> Any: ...

    def predict_next(self, action: int | None = None) -> np.ndarray: ...

    def successor_features(
        self, gamma: float = 0.8, horizon: int = 50, *, action: int | None = None
    ) -> np.ndarray: ...

    def successor_features_actions(
        self, gamma: float = 0.8, horizon: int = 50, actions=None
    ) -> np.ndarray: ...


class SymbolChecks:
    """Checks of one observation in [0, n_obs_states) and one action in [0, n_actions), shared
    by DHTM and the baselines (which set those two attributes)."""

    n_obs_states: int
    n_actions: int

    def _check_obs(self, observation) -> int:
        return check_int("observation", observation, 0, self.n_obs_states - 1)

    def _check_action(self, action) -> int:
        return check_int("action", action, 0, self.n_actions - 1)


def check_rollout(gamma: float, horizon: int) -> tuple[float, int]:
    """The discount (in [0, 1]) and horizon (an int >= 1) of a successor-feature rollout."""
    return check_float("gamma", gamma, 0, 1), check_int("horizon", horizon, 1)


class DHTM(SymbolChecks):
    """Online Distributed Hebbian Temporal Memory (the paper's BioDHTM), an estimator.

    Episodes: call `reset()` at the start of each episode (the paper resets the memory at
    episode start), then for every step `partial_fit(observation, action)` with the observation
    just seen and the action taken after it. `predict_next()` gives p(o_{t+1} | o_{<=t}, a_t) and
    `successor_features(gamma, horizon)` the discounted sum of predicted observations, by
    rolling the prediction step forward with a uniform action message after the first action.

    Parameters are those of the paper's online config (notes §2): λ_f = 0.1, λ_s = 0.1,
    λ_a = 0.001, log f of a new segment -3, deletion below log f = -5, θ = 1e-4, 30 000
    segments, action boost 10, one factor per variable. The default `cells_per_column=40`,
    `n_copies=3`, `n_vars_per_factor=4` is the online config; our experiments use smaller sizes.

    Args:
        n_obs_states: K, the size of the observation alphabet.
        n_actions: number of actions (1 for a passive sequence: pass action 0).
        cells_per_column: c, the clones per observed value.
        n_copies: r, the hidden variables per observation variable.
        n_vars_per_factor: presynaptic variables per factor (at most the r + 1 that exist).
        max_factors_per_var: factors a hidden variable may grow.
        lr_f, lr_s, lr_a: learning rates of segment values, synapse efficiencies and traces.
        lr_var_score: learning rate of the variable scores.
        log_f_init: log f of a new segment before its first reinforcement.
        log_f_min: segments below this log f are deleted.
        init_efficiency: s of a new synapse.
        max_segments: the segment budget; beyond it the lowest f·a are pruned.
        theta: a cell with message >= theta is active.
        inverse_temperature: multiplies the centred excitation before the softmax.
        action_boost: added to the action variable's score when a factor picks its variables.
        burst: when no cell of the observed column is predicted: "least_used" (default; learn
            on a least-used cell of the column and send only that cell forward) or "uniform"
            (the notes' rule: uniform posterior over the column, learning on a sample of it).
        random_state: seed or numpy Generator for cell sampling and factor creation.
    """

    def __init__(
        self,
        n_obs_states: int,
        n_actions: int = 1,
        *,
        cells_per_column: int = 40,
        n_copies: int = 3,
        n_vars_per_factor: int = 4,
        max_factors_per_var: int = 1,
        lr_f: float = 0.1,
        lr_s: float = 0.1,
        lr_a: float = 0.001,
        lr_var_score: float = 0.001,
        log_f_init: float = -3.0,
        log_f_min: float = -5.0,
        init_efficiency: float = 0.5,
        max_segments: int = 30_000,
        theta: float = 1e-4,
        inverse_temperature: float = 1.0,
        action_boost: float = 10.0,
        burst: str = "least_used",
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        n_obs_states = check_int("n_obs_states", n_obs_states, 2)
        n_actions = check_int("n_actions", n_actions, 1)
        cells_per_column = check_int("cells_per_column", cells_per_column, 1)
        n_copies = check_int("n_copies", n_copies, 1)
        n_vars_per_factor = check_int("n_vars_per_factor", n_vars_per_factor, 1)
        max_factors_per_var = check_int("max_factors_per_var", max_factors_per_var, 1)
        max_segments = check_int("max_segments", max_segments, 1)
        lr_f, lr_s, lr_a = (
            check_float(name, v, 0, 1, low_open=True, high_open=True)
            for name, v in (("lr_f", lr_f), ("lr_s", lr_s), ("lr_a", lr_a))
        )
        lr_var_score = check_float("lr_var_score", lr_var_score, 0)
        log_f_init = check_float("log_f_init", log_f_init, None, 0)
        log_f_min = check_float("log_f_min", log_f_min, None, log_f_init, high_open=True)
        init_efficiency = check_float("init_efficiency", init_efficiency, 0, 1)
        theta = check_float("theta", theta, 0, 1, low_open=True, high_open=True)
        inverse_temperature = check_float(
            "inverse_temperature", inverse_temperature, 0, low_open=True
        )
        action_boost = check_float("action_boost", action_boost)
        self.burst = check_choice("burst", burst, ("least_used", "uniform"))
        self.n_obs_states = n_obs_states
        self.n_actions = n_actions
        self.cells_per_column = cells_per_column
        self.n_copies = n_copies
        if n_vars_per_factor > n_copies + 1:
            raise ValueError(
                f"n_vars_per_factor={n_vars_per_factor!r} is not allowed: must be <= "
                f"n_copies + 1 = {n_copies + 1} (the hidden variables at t-1 and the action)"
            )
        self.n_vars_per_factor = n_vars_per_factor
        self.max_factors_per_var = max_factors_per_var
        self.lr_f, self.lr_s, self.lr_a, self.lr_var_score = lr_f, lr_s, lr_a, lr_var_score
        self.log_f_init, self.log_f_min = log_f_init, log_f_min
        self.init_efficiency = init_efficiency
        self.max_segments = max_segments
        self.theta = theta
        self.inverse_temperature = inverse_temperature
        self.action_boost = action_boost
        self.rng = (
            random_state
            if isinstance(random_state, np.random.Generator)
            else np.random.default_rng(random_state)
        )
        self.cells_per_var = n_obs_states * cells_per_column
        self.n_hidden_cells = n_copies * self.cells_per_var
        self.n_cells = self.n_hidden_cells + n_actions  # action cells come last
        # variable index of every cell: hidden variables 0..r-1, the action variable r
        self.cell_var = np.concatenate(
            [np.repeat(np.arange(n_copies), self.cells_per_var), np.full(n_actions, n_copies)]
        )
        self.segments_ = SegmentStore.empty(256, self.n_vars_per_factor)
        self.n_used_ = 0  # high-water mark of used slots
        self.factor_post_: list[int] = []  # postsynaptic variable of each factor
        self.factor_vars_ = np.zeros((0, self.n_vars_per_factor), np.int64)
        self.var_score_ = np.zeros((n_copies, n_copies + 1))
        self.n_steps_ = 0
        self.reset()

    # ------------------------------------------------------------------ episode state

    def reset(self) -> DHTM:
        """Start a new episode: forget the context (the memory, not what was learned)."""
        self._alpha: np.ndarray | None = None  # posterior over hidden cells at t, (r, K·c)
        self._action: int | None = None  # action taken after o_t (None: not yet chosen)
        self._prev_sample: np.ndarray | None = None  # sampled cells C_t, (r,)
        self._priors: dict[int | None, np.ndarray] = {}  # cache: action -> prior for t+1
        return self

    @property
    def n_segments(self) -> int:
        """Number of live segments."""
        return int(self.segments_.alive[: self.n_used_].sum())

    # ------------------------------------------------------------------ inference

    def _excitation(self, messages: np.ndarray) -> np.ndarray:
        """Excitation of every hidden cell under messages (B, n_cells) -> (B, n_hidden_cells);
        -inf where a cell has no active segment."""
        st, n = self.segments_, self.n_used_
        rows = messages.shape[0]
        exc = np.full((rows, self.n_hidden_cells), _NEG_INF)
        n_factors = len(self.factor_post_)
        if n_factors == 0:
            return exc
        active_cell = messages >= self.theta
        # a segment is active when all its receptor cells are: filter on the first receptor
        # (few cells are active), then check the others on the survivors only
        b, idx = np.nonzero(st.alive[:n] & active_cell[:, st.rec[:n, 0]])  # (B, n) candidates
        if st.rec.shape[1] > 1 and idx.size:
            keep = active_cell[b[:, None], st.rec[idx, 1:]].all(axis=1)
            b, idx = b[keep], idx[keep]
        if idx.size == 0:
            return exc
        e = segment_log_likelihood(messages[b[:, None], st.rec[idx]], st.s[idx]) + st.log_f[idx]
        if n_factors == len(set(self.factor_post_)):  # at most one factor per variable
            np.maximum.at(exc, (b, st.cell[idx]), e)
            return exc
        per_factor = np.full((rows, n_factors, self.n_hidden_cells), _NEG_INF)
        np.maximum.at(per_factor, (b, st.factor[idx], st.cell[idx]), e)  # max within a factor
        # sum across the factors of each cell's variable (-inf if one factor has no segment)
        post = np.asarray(self.factor_post_)
        var_of_cell = self.cell_var[: self.n_hidden_cells]
        exc = np.zeros((rows, self.n_hidden_cells))
        has = np.zeros(self.n_hidden_cells, bool)
        for f in range(n_factors):
            mine = var_of_cell == post[f]
            exc[:, mine] += per_factor[:, f, mine]
            has |= mine
        exc[:, ~has] = _NEG_INF
        return exc

    def _normalise(self, exc: np.ndarray) -> np.ndarray:
        """Per hidden variable: softmax of inverse_temperature·excitation over the finite cells
        (the paper's centring by the mean of the finite values cancels in the normalisation);
        a variable without a finite cell gets all zeros. Shape (B, n_hidden_cells)."""
        x = exc.reshape(exc.shape[0], self.n_copies, self.cells_per_var)
        fin = np.isfinite(x)
        top = np.where(fin, x, _NEG_INF).max(axis=2, keepdims=True)
        z = np.where(
            fin, self.inverse_temperature * (x - np.where(fin.any(2, keepdims=True), top, 0)), 0
        )
        p = np.where(fin, np.exp(z), 0.0)
        tot = p.sum(axis=2, keepdims=True)
        return (p / np.where(tot > 0, tot, 1.0)).reshape(exc.shape)

    def _prior_from(self, messages: np.ndarray) -> np.ndarray:
        """Prior over hidden cells for one message vector (n_cells,) or a batch (B, n_cells)."""
        if messages.ndim == 1:
            return self._normalise(self._excitation(messages[None]))[0]
        return self._normalise(self._excitation(messages))

    def _column_probs(self, prior: np.ndarray) -> np.ndarray:
        """p(o = k): the prior mass of column k, averaged over the r copies; (..., K)."""
        shape = (*prior.shape[:-1], self.n_copies, self.n_obs_states, self.cells_per_column)
        return prior.reshape(shape).sum(-1).mean(-2)

    def _action_message(self, action: int | None) -> np.ndarray:
        if action is None:
            return np.full(self.n_actions, 1.0 / self.n_actions)
        m = np.zeros(self.n_actions)
        m[action] = 1.0
        return m

    def _need_context(self, what: str) -> None:
        if self._alpha is None:
            raise UsageError(
                f"{what} needs a context: call partial_fit(observation, action) (or observe) "
                "first; after reset() there is none"
            )

    def _prior_for(self, action: int | None) -> np.ndarray:
        """The prior over hidden cells at t+1 given α_t and `action` (None: uniform)."""
        if action not in self._priors:
            msg = np.concatenate([self._alpha.reshape(-1), self._action_message(action)])
            self._priors[action] = self._prior_from(msg)
        return self._priors[action]

    def predict_next(self, action: int | None = None) -> np.ndarray:
        """p(o_{t+1} = k | o_{<=t}, a_t), shape (K,), with a_t the action passed to
        `partial_fit`/`act` (or `action` if given; uniform if none is known). All zeros when no
        segment is active (the model is inhibited by default); otherwise the sum is a multiple
        of 1/r (the copies that predict something)."""
        self._need_context("predict_next()")
        a = self._action if action is None else self._check_action(action)
        return self._column_probs(self._prior_for(a))

    def successor_features(
        self,
        gamma: float = 0.8,
        horizon: int = 50,
        *,
        action: int | None = None,
        min_kl: float = 0.0,
        stop_obs: int | None = None,
        stop_prob: float = 0.05,
    ) -> np.ndarray:
        """SF = Σ_{k=0}^{horizon-1} γ^k p̂(o_{t+k+1}), shape (K,).

        The prediction step is repeated with the hidden prior as the next message and no
        observation; the first step uses a_t (or `action` if given), later steps a uniform
        action message (the paper's uniform policy inside rollouts). The rollout stops when no
        cell is predicted, when the mean KL of the column prediction to uniform falls below
        `min_kl` (the paper's agent uses 0.1; 0 disables it), or when the predicted
        probability of `stop_obs` (the goal) exceeds `stop_prob`.
        """
        self._need_context("successor_features()")
        a = self._action if action is None else self._check_action(action)
        return self.successor_features_actions(
            gamma, horizon, [a], min_kl=min_kl, stop_obs=stop_obs, stop_prob=stop_prob
        )[0]

    def successor_features_actions(
        self,
        gamma: float = 0.8,
        horizon: int = 50,
        actions=None,
        *,
        min_kl: float = 0.0,
        stop_obs: int | None = None,
        stop_prob: float = 0.05,
    ) -> np.ndarray:
        """`successor_features` for several first actions at once (default: every action;
        None in the list means a uniform first action), shape (len(actions), K). The rollouts
        run in lockstep, each stopping on its own."""
        self._need_context("successor_features_actions()")
        gamma, horizon = check_rollout(gamma, horizon)
        min_kl = check_float("min_kl", min_kl, 0)
        stop_prob = check_float("stop_prob", stop_prob, 0, 1)
        if stop_obs is not None:
            stop_obs = self._check_obs(stop_obs)
        acts = list(range(self.n_actions)) if actions is None else list(actions)
        for a in acts:
            if a is not None:
                self._check_action(a)
        prior = np.stack([self._prior_for(a) for a in acts])
        uniform_action = np.broadcast_to(self._action_message(None), (len(acts), self.n_actions))
        sf = np.zeros((len(acts), self.n_obs_states))
        live = np.ones(len(acts), bool)
        for k in range(horizon):
            live &= prior.any(axis=1)
            if not live.any():
                break
            p = self._column_probs(prior)
            sf[live] += gamma**k * p[live]
            if min_kl > 0:
                q = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
                kl = np.sum(q * np.log(np.where(q > 0, q, 1.0) * self.n_obs_states), axis=1)
                live &= kl >= min_kl
            if stop_obs is not None:
                live &= p[:, stop_obs] <= stop_prob
            if k + 1 < horizon and live.any():
                nxt = np.zeros_like(prior)
                msg = np.concatenate([prior[live], uniform_action[live]], axis=1)
                nxt[live] = self._prior_from(msg)
                prior = nxt
        return sf

    # ------------------------------------------------------------------ learning

    def posterior(self, observation: int) -> np.ndarray:
        """α_t over hidden cells for `observation` given the current context (no learning):
        the prior restricted to the observed column and normalised per hidden variable; a
        variable whose prior has no mass there "bursts" (uniform over the column)."""
        alpha, _ = self._posterior(self._check_obs(observation))
        return alpha.reshape(-1)

    def _posterior(self, obs: int) -> tuple[np.ndarray, np.ndarray]:
        """(α of shape (r, K·c), burst mask of shape (r,))."""
        lo, hi = obs * self.cells_per_column, (obs + 1) * self.cells_per_column
        alpha = np.zeros((self.n_copies, self.cells_per_var))
        if self._alpha is None:
            # DEVIATION: the first observation of an episode has no context; we put its
            # posterior on the column's first clone (a fixed start state) rather than uniform
            # over the column, so that every episode starts from the same context cell.
            # Uniform starts split each context over c random clones (the notes do not say).
            alpha[:, lo] = 1.0
            return alpha, np.zeros(self.n_copies, bool)
        prior = self._prior_for(self._action)
        alpha[:, lo:hi] = prior.reshape(self.n_copies, -1)[:, lo:hi]
        tot = alpha.sum(axis=1, keepdims=True)
        burst = tot[:, 0] == 0
        alpha[burst, lo:hi] = 1.0 / self.cells_per_column
        alpha[~burst] /= tot[~burst]
        return alpha, burst

    def partial_fit(self, observation: int, action: int = 0) -> DHTM:
        """Observe o_t (learning the transition from the previous step), then take action a_t.
        The same as `observe(observation)` followed by `act(action)`."""
        self._check_obs(observation)
        self._check_action(action)
        return self.observe(observation).act(action)

    def act(self, action: int) -> DHTM:
        """Record a_t, the action taken after the last observation (agents choose it after
        `observe`, e.g. from `successor_features(action=a)` for every a)."""
        self._need_context("act()")
        self._action = self._check_action(action)
        self._priors = {}
        return self

    def observe(self, observation: int) -> DHTM:
        """Observe o_t: posterior α_t, sampled cells C_t, and the local learning step from
        (C_{t-1}, a_{t-1}) to C_t."""
        obs = self._check_obs(observation)
        if self._alpha is not None and self._action is None:
            if self.n_actions > 1:
                raise UsageError(
                    "observe() twice without act(action) in between: the transition's action "
                    f"is unknown (n_actions={self.n_actions})"
                )
            self._action = 0
        alpha, burst = self._posterior(obs)
        cdf = np.cumsum(alpha, axis=1)
        u = self.rng.random((self.n_copies, 1))
        local = np.minimum((cdf < u * cdf[:, -1:]).sum(axis=1), self.cells_per_var - 1)
        if self.burst == "least_used" and burst.any():
            # DEVIATION: a bursting variable (no predicted cell in the observed column) learns
            # on a least-used cell of the column (fewest segments on it or from it, ties at
            # random; HTM's winner-cell rule; never clone 0, the episode-start cell) and its
            # message for the next step is that cell alone. With the uniform bursting message of
            # the notes, every context that once burst merges with all contexts already learned
            # on that column, which aliases sequences for good.
            used = self._clone_use(obs)
            noise = self.rng.random(used.shape)
            pick = np.argmin(used + noise, axis=1) + obs * self.cells_per_column
            local = np.where(burst, pick, local)
            self._burst_message(alpha, burst, local)
        sample = local + np.arange(self.n_copies) * self.cells_per_var
        if self._prev_sample is not None:
            self._learn(self._prev_sample, self._action, sample)
        self._alpha = alpha
        self._prev_sample, self._action = sample, None
        self._priors = {}
        self.n_steps_ += 1
        return self

    def _clone_use(self, obs: int) -> np.ndarray:
        """Per copy, the use of each clone of column `obs` for least-used bursting: the live
        segments it takes part in, on it (postsynaptic) or from it (presynaptic), and +inf for
        clone 0. Shape (copies, cells_per_column).

        A clone whose own segments died but whose outgoing ones live on is still another
        context's state and must not be reused; clone 0 is the fixed start cell of episodes
        that begin with this symbol (see `_posterior`): it never grows a segment, so it would
        always look unused, and picking it would merge this context with the episode start."""
        st, n = self.segments_, self.n_used_
        live = st.alive[:n]
        used = (
            np.bincount(st.cell[:n][live], minlength=self.n_cells)
            + np.bincount(st.rec[:n][live].reshape(-1), minlength=self.n_cells)
        )[: self.n_hidden_cells].reshape(self.n_copies, self.n_obs_states, self.cells_per_column)
        used = used[:, obs].astype(float)
        if self.cells_per_column > 1:
            used[:, 0] = np.inf
        return used

    def _burst_message(self, alpha: np.ndarray, burst: np.ndarray, local: np.ndarray) -> None:
        """Least-used bursting: a bursting variable's message for the next step is its picked
        cell alone (in place on `alpha`)."""
        alpha[burst] = 0.0
        alpha[burst, local[burst]] = 1.0

    def _learn(self, prev: np.ndarray, prev_action: int, sample: np.ndarray) -> None:
        st, n = self.segments_, self.n_used_
        presyn = np.zeros(self.n_cells, bool)
        presyn[prev] = True
        presyn[self.n_hidden_cells + prev_action] = True
        alive = st.alive[:n]
        syn_on = presyn[st.rec[:n]] & alive[:, None]  # synapses with an active presynaptic cell
        act = syn_on.all(axis=1)
        post = np.zeros(self.n_cells, bool)
        post[sample] = True
        hit = act & post[st.cell[:n]]
        miss = act & ~hit
        # segment values: reinforce active segments of sampled cells, punish the other active ones
        f = np.exp(st.log_f[:n])
        with np.errstate(divide="ignore"):
            st.log_f[:n] = np.where(
                hit, np.log(f + self.lr_f * (1 - f)), st.log_f[:n] + miss * np.log1p(-self.lr_f)
            )
        # synapses whose presynaptic cell is active move towards 1[segment active]
        st.s[:n] += syn_on * self.lr_s * (act[:, None] - st.s[:n])
        # activity traces of all live segments
        st.a[:n] += alive * self.lr_a * (act - st.a[:n])
        # variable scores: up for the variables of reinforced segments, down for punished
        if hit.any() or miss.any():
            fv = self.factor_vars_
            post_var = np.asarray(self.factor_post_)
            for mask, sign in ((hit, 1.0), (miss, -1.0)):
                fs = st.factor[:n][mask]
                if fs.size:
                    np.add.at(
                        self.var_score_,
                        (np.repeat(post_var[fs], fv.shape[1]), fv[fs].reshape(-1)),
                        sign * self.lr_var_score,
                    )
        # deletion
        dead = alive & (st.log_f[:n] < self.log_f_min)
        st.alive[:n] &= ~dead
        # growth: sampled cells with no active segment
        covered = np.zeros(self.n_cells, bool)
        covered[st.cell[:n][act & ~dead]] = True
        for j, cell in enumerate(sample):
            if not covered[cell]:
                self._grow(j, int(cell), prev, prev_action)
        if self.n_segments > self.max_segments:
            self._prune()

    # DEVIATION: the candidate presynaptic variables of a factor are all r hidden variables at
    # t-1 (including j's own copy) and the action; "self-loops are excluded" in the notes is
    # read as "no variable at time t". With r = 1 a factor is then (h_{t-1}, a_{t-1}).
    def _new_factor(self, j: int) -> int:
        """Create a factor for hidden variable j, picking its variables among the active ones
        (all r hidden variables at t-1 and the action) by softmax(score + action boost)."""
        cand = np.arange(self.n_copies + 1)
        logits = self.var_score_[j].copy()
        logits[self.n_copies] += self.action_boost
        chosen: list[int] = []
        for _ in range(self.n_vars_per_factor):  # sampling without replacement
            free = np.setdiff1d(cand, chosen)
            z = np.exp(logits[free] - logits[free].max())
            chosen.append(int(self.rng.choice(free, p=z / z.sum())))
        self.factor_post_.append(j)
        self.factor_vars_ = np.vstack([self.factor_vars_, np.sort(chosen)])
        return len(self.factor_post_) - 1

    def _grow(self, j: int, cell: int, prev: np.ndarray, prev_action: int) -> None:
        mine = [f for f, v in enumerate(self.factor_post_) if v == j]
        if len(mine) < self.max_factors_per_var:
            factor = self._new_factor(j)
        elif len(mine) == 1:
            factor = mine[0]
        else:  # an existing factor, by softmax of its mean f·a
            st, n = self.segments_, self.n_used_
            score = np.zeros(len(mine))
            for i, f in enumerate(mine):
                sel = st.alive[:n] & (st.factor[:n] == f)
                if sel.any():
                    score[i] = np.mean(np.exp(st.log_f[:n][sel]) * st.a[:n][sel])
            z = np.exp(score - score.max())
            factor = mine[int(self.rng.choice(len(mine), p=z / z.sum()))]
        vars_ = self.factor_vars_[factor]
        hidden = prev[np.minimum(vars_, self.n_copies - 1)]
        rec = np.where(vars_ == self.n_copies, self.n_hidden_cells + prev_action, hidden)
        slot = self._free_slot()
        st = self.segments_
        st.alive[slot] = True
        st.cell[slot] = cell
        st.factor[slot] = factor
        st.rec[slot] = rec
        # A new segment is counted as active and reinforced in the step that grows it (the
        # official BioDHTM passes new segments with the reinforced ones to its factor and
        # synapse updates): f = f0 + λ_f(1 - f0), s = s0 + λ_s(1 - s0), trace a = 1.
        f0 = np.exp(self.log_f_init)
        st.log_f[slot] = np.log(f0 + self.lr_f * (1.0 - f0))
        st.s[slot] = self.init_efficiency + self.lr_s * (1.0 - self.init_efficiency)
        st.a[slot] = 1.0

    def _free_slot(self) -> int:
        st = self.segments_
        if self.n_used_ < len(st.alive):
            self.n_used_ += 1
            return self.n_used_ - 1
        free = np.flatnonzero(~st.alive[: self.n_used_])
        if free.size:
            return int(free[0])
        st.grow_to(2 * len(st.alive))
        self.n_used_ += 1
        return self.n_used_ - 1

    def _prune(self) -> None:
        st, n = self.segments_, self.n_used_
        idx = np.flatnonzero(st.alive[:n])
        excess = idx.size - self.max_segments
        score = np.exp(st.log_f[idx]) * st.a[idx]
        st.alive[idx[np.argsort(score, kind="stable")[:excess]]] = False
