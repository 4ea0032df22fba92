"""NRGBoost: energy-based generative boosting (Bravo, ICLR 2025).

The model is a pmf on the discretised grid, q_f(x) = exp f(x) / Z[f], with

    f = log q0 + sum_t δ_t,

q0 the product of the training marginals mixed with uniform, and each δ_t a piecewise-constant
tree. Round t maximises a second-order expansion of the log-likelihood
L(f) = E_P[f] - log Z[f] around the current model q:

    L(f + δ) ≈ L(f) + E_P[δ] - E_q[δ] - ½ Var_q[δ].

For a tree with leaves X_j, data mass P_j and model mass Q_j (both normalised), the optimal leaf
values are v_j = P_j / Q_j - 1 and the gain of a split is ½ (P_L²/Q_L + P_R²/Q_R - P²/Q): a
χ²-type criterion, searched over histograms and grown best-first to `max_leaves`, with every
leaf keeping P_j/Q_j <= `max_ratio_in_leaf`. The step α* maximises the exact Monte-Carlo
ΔL(α) = α Σ_j P_j v_j - log Σ_j Q_j e^{α v_j} over logspace(-3, 1, 101) and the tree is added
scaled by shrinkage · α*.

Q_j is estimated on a pool of model samples, amortised across rounds: round 1 uses q0's exact
masses; round 2 draws from q0 and keeps each draw with probability exp(δ_1 - max δ_1)
(rejection sampling turns q0 samples into q1 samples); afterwards each pooled sample is kept
with probability (1 - p_refresh) exp(δ_t - max δ_t) and the pool is refilled by Gibbs chains
started at data points. The Gibbs sampler is a systematic scan whose conditionals are exact:
one traversal per tree evaluates δ_t on a whole slice of the grid (`kernels.gibbs`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from iclr25.core.checks import check_float, check_int
from iclr25.papers.nrgboost import kernels as K
from iclr25.papers.nrgboost.base import TabularDensity, as_generator, check_bool
from iclr25.papers.nrgboost.trees import Forest, Reference, grow_tree

LINE_SEARCH_STEPS = np.logspace(-3, 1, 101)
"""The step sizes α tried by the line search (the paper's grid)."""

GIBBS_BLOCK = 256
"""Sweeps per call of the Gibbs kernel (bounds the memory of the uniforms it is given)."""


def line_search(P: np.ndarray, Q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """The step α* in LINE_SEARCH_STEPS maximising the exact ΔL, and ΔL(α*).

    ΔL(α) = α Σ_j p_j v_j - log Σ_j q_j exp(α v_j), with p, q the normalised leaf masses.
    """
    p, q = P / P.sum(), Q / Q.sum()
    a = LINE_SEARCH_STEPS
    dL = a * (p @ v) - logsumexp(a[:, None] * v[None, :], b=q[None, :], axis=1)
    k = int(np.argmax(dL))
    return float(a[k]), float(dL[k])


def product_marginals(codes: np.ndarray, cards: np.ndarray, uniform_mixture: float) -> np.ndarray:
    """q0's marginals: (1 - ε) p_d + ε u_d per dimension, zero-padded to (D, Cmax)."""
    n, D = codes.shape
    out = np.zeros((D, int(cards.max())))
    for d in range(D):
        C = int(cards[d])
        emp = np.bincount(codes[:, d], minlength=C)[:C] / n
        out[d, :C] = (1 - uniform_mixture) * emp + uniform_mixture / C
    return out


def sample_product(marginals: np.ndarray, cards: np.ndarray, n: int, rng) -> np.ndarray:
    """n independent draws from a product of marginals. Shapes: -> (n, D) uint8."""
    D = marginals.shape[0]
    out = np.empty((n, D), np.uint8)
    for d in range(D):
        C = int(cards[d])
        cdf = np.cumsum(marginals[d, :C])
        out[:, d] = np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(n), side="right"), C - 1)
    return out


class NRGBoost(TabularDensity):
    """Energy-based generative boosted trees: a density model of a whole table.

    Fit on a table (numerical and categorical columns), then evaluate its unnormalised log
    density, predict any column from the others by exact slice inference, or sample rows.
    Defaults are the official package's.

    Args:
        n_trees: Boosting rounds.
        shrinkage: Factor applied to every step on top of the line search.
        max_leaves: Leaves per tree (best-first growth).
        max_ratio_in_leaf: Every leaf keeps data mass / model mass <= this (> 1).
        min_data_in_leaf: Minimum data rows per leaf (0: no constraint).
        feature_frac: Fraction of columns drawn at random for each split search.
        uniform_mixture: ε of q0 = (1 - ε) product of marginals + ε uniform (per column).
        line_search: Choose the step by the exact Monte-Carlo line search (else step 1).
        n_model_samples: Size of the pool of model samples that estimates Q.
        p_refresh: Fraction of the pool refreshed by Gibbs sampling each round.
        n_chains: Gibbs chains that refill the pool (started at random data rows).
        burn_in: Sweeps discarded at the start of each chain.
        max_bins: Bins of a numerical column (<= 255), see `discretize`.
        target: Default column for `predict` / `predict_proba` (index or name).
        random_state: Seed (None, int or numpy Generator) for the pool and feature draws.

    Attributes:
        discretizer_: The fitted `Discretizer` (bins of every column).
        domain_: The grid (`trees.Domain`).
        log_q0_: (D, Cmax) log marginals of q0 (-inf beyond a column's bins).
        cdf_q0_: (D, Cmax + 1) their cumulative sums (for the Gibbs sampler).
        forest_: The trees (`trees.Forest`), leaf values already scaled by the step.
        n_trees_: Trees fitted.
        step_sizes_: α* of every round (before shrinkage).
        delta_loglik_: ΔL(α*) of every round, the Monte-Carlo estimate of the likelihood gain.
        n_features_in_, feature_names_in_: as in scikit-learn.
    """

    def __init__(
        self,
        n_trees: int = 200,
        shrinkage: float = 0.15,
        max_leaves: int = 256,
        max_ratio_in_leaf: float = 2.0,
        min_data_in_leaf: float = 0.0,
        feature_frac: float = 1.0,
        uniform_mixture: float = 0.1,
        line_search: bool = True,
        n_model_samples: int = 80_000,
        p_refresh: float = 0.1,
        n_chains: int = 16,
        burn_in: int = 100,
        max_bins: int = 255,
        target=None,
        random_state=None,
    ):
        self.n_trees = n_trees
        self.shrinkage = shrinkage
        self.max_leaves = max_leaves
        self.max_ratio_in_leaf = max_ratio_in_leaf
        self.min_data_in_leaf = min_data_in_leaf
        self.feature_frac = feature_frac
        self.uniform_mixture = uniform_mixture
        self.line_search = line_search
        self.n_model_samples = n_model_samples
        self.p_refresh = p_refresh
        self.n_chains = n_chains
        self.burn_in = burn_in
        self.max_bins = max_bins
        self.target = target
        self.random_state = random_state

    def _check_params(self) -> None:
        """Every hyper-parameter, checked at fit time (floats must be finite: an infinite
        shrinkage or leaf ratio would make the pool's rejection step loop forever)."""
        check_int("n_trees", self.n_trees, 1)
        check_float("shrinkage", self.shrinkage, 0.0, None, low_open=True)
        check_int("max_leaves", self.max_leaves, 2, 32768)
        check_float("max_ratio_in_leaf", self.max_ratio_in_leaf, 1.0, None, low_open=True)
        check_float("min_data_in_leaf", self.min_data_in_leaf, 0.0, None)
        check_float("feature_frac", self.feature_frac, 0.0, 1.0, low_open=True)
        # q0 must give every bin positive mass
        check_float("uniform_mixture", self.uniform_mixture, 0.0, 1.0, low_open=True)
        check_bool("line_search", self.line_search)
        check_int("n_model_samples", self.n_model_samples, 2)
        check_float("p_refresh", self.p_refresh, 0.0, 1.0)
        check_int("n_chains", self.n_chains, 1)
        check_int("burn_in", self.burn_in, 0)

    # ------------------------------------------------------------ fitting

    def fit(self, X, y=None, categorical_features=None) -> NRGBoost:
        """Fit the density of the table X.

        Args:
            X: (n, D) array or DataFrame; DataFrame columns of dtype "category" are categorical.
            y: Ignored (every column is modelled; choose the target at prediction time).
            categorical_features: Column indices, names or a boolean mask of categorical columns.
        """
        self._check_params()
        rng = as_generator(self.random_state)
        codes = self._fit_codes(X, categorical_features)
        n, D = codes.shape
        dom = self.domain_
        marg = product_marginals(codes, dom.cards, self.uniform_mixture)
        with np.errstate(divide="ignore"):
            self.log_q0_ = np.log(marg)
        self.cdf_q0_ = np.zeros((D, dom.cmax + 1))
        self.cdf_q0_[:, 1:] = np.cumsum(marg, axis=1)
        self.forest_ = Forest(dom)
        self.step_sizes_, self.delta_loglik_ = [], []
        rows = np.arange(n, dtype=np.int64)
        m = self.n_model_samples
        pool = pool_values = None
        for t in range(self.n_trees):
            if t == 0:
                ref = Reference(weight=float(n), marginals=marg)
            else:
                pool = self._next_pool(t, pool, pool_values, codes, marg, rng)
                ref = Reference(weight=n / m, codes=pool)
            tree, pool_leaf = grow_tree(
                dom,
                codes,
                rows,
                ref,
                criterion=K.CHI2,
                max_leaves=self.max_leaves,
                max_ratio=float(self.max_ratio_in_leaf),
                min_data=float(self.min_data_in_leaf),
                feature_frac=float(self.feature_frac),
                rng=rng,
            )
            v = tree.P / tree.Q - 1.0
            if self.line_search:
                alpha, dL = line_search(tree.P, tree.Q, v)
            else:
                alpha = 1.0
                p, q = tree.P / tree.P.sum(), tree.Q / tree.Q.sum()
                dL = float(p @ v - logsumexp(v, b=q))
            tree.value = self.shrinkage * alpha * v
            self.forest_.append(tree)
            self.step_sizes_.append(alpha)
            self.delta_loglik_.append(dL)
            pool_values = None if pool_leaf is None else tree.value[pool_leaf]
        self.n_trees_ = self.forest_.n_trees
        self.step_sizes_ = np.array(self.step_sizes_)
        self.delta_loglik_ = np.array(self.delta_loglik_)
        return self

    def _next_pool(self, t, pool, pool_values, data, marg, rng) -> np.ndarray:
        """The pool of samples of q_t (t >= 1 trees so far)."""
        m = self.n_model_samples
        forest, cards = self.forest_, self.domain_.cards
        last = forest.value[forest.leaf_start[t - 1] :]
        top = last.max()
        if t == 1:  # draws from q0, rejection-filtered by the first tree
            parts, have = [], 0
            while have < m:
                draw = sample_product(marg, cards, m, rng)
                delta = forest.value[forest.leaves(draw, 0)]
                keep = rng.random(m) < np.exp(delta - top)
                parts.append(draw[keep])
                have += int(keep.sum())
            return np.concatenate(parts)[:m]
        keep = rng.random(pool.shape[0]) < (1.0 - self.p_refresh) * np.exp(pool_values - top)
        kept = pool[keep][:m]
        n_new = m - kept.shape[0]
        if n_new == 0:
            return kept
        # DEVIATION: each chain runs ceil(n_new / n_chains) kept sweeps and the first n_new
        # states (chain-major) refill the pool, so it stays at exactly n_model_samples; the
        # official code runs floor(n_new / n_chains) and may leave the pool a few short.
        K_ = self.n_chains
        per_chain = -(-n_new // K_)
        init = data[rng.integers(0, data.shape[0], K_)]
        fresh = self._gibbs(init, self.burn_in, per_chain, rng).reshape(-1, data.shape[1])
        return np.concatenate([kept, fresh[:n_new]])

    # ------------------------------------------------------------ Gibbs sampling

    def _gibbs(self, init, burn_in, n_keep, rng, n_trees=None) -> np.ndarray:
        """Run len(init) chains for burn_in + n_keep sweeps; return the last n_keep states of
        each chain. Shapes: init (K, D) -> (K, n_keep, D) uint8."""
        f = self.forest_
        ptr, trees = f.dims_to_trees(n_trees)
        roots = f.roots[: self._n(n_trees)]
        nodes, first = f.packed()
        state = np.array(init, np.uint8, copy=True)
        K_, D = state.shape
        out = np.empty((K_, n_keep, D), np.uint8)
        done = 0
        total = burn_in + n_keep
        while done < total:
            block = min(GIBBS_BLOCK, total - done)
            u = rng.random((K_, block, D))
            buf = np.empty((K_, block, D), np.uint8)
            K.gibbs(
                state,
                block,
                self.log_q0_,
                self.cdf_q0_,
                self.domain_.cards,
                self.domain_.ordered,
                roots,
                nodes,
                f.feat,
                f.thr,
                f.left,
                f.right,
                f.catmask,
                f.value,
                first,
                ptr,
                trees,
                f.max_nodes,
                u,
                buf,
            )
            lo = max(burn_in - done, 0)
            if lo < block:
                start = done + lo - burn_in
                out[:, start : start + block - lo] = buf[:, lo:]
            done += block
        return out

    def _sample_codes(self, n, rng, n_steps: int = 100, n_trees: int | None = None):
        """n independent chains started at q0 draws, each run for n_steps sweeps (the official
        sampler's default); the last state of each chain is a sample."""
        n_steps = check_int("n_steps", n_steps, 1)
        stop = self._n(n_trees)
        init = sample_product(np.exp(self.log_q0_), self.domain_.cards, n, rng)
        if stop == 0:
            return init
        out = np.empty_like(init)
        for s in range(0, n, 1024):
            chunk = self._gibbs(init[s : s + 1024], n_steps - 1, 1, rng, stop)
            out[s : s + 1024] = chunk[:, -1]
        return out

    # ------------------------------------------------------------ evaluation

    def _n(self, n_trees) -> int:
        have = self.forest_.n_trees
        if n_trees is None:
            return have
        return check_int("n_trees", n_trees, 0, have)

    def _log_pmf(self, codes, n_trees=None) -> np.ndarray:
        D = codes.shape[1]
        base = self.log_q0_[np.arange(D)[None, :], codes].sum(1)
        return base + self.forest_.sum(codes, 0, self._n(n_trees))

    def _slice(self, codes, dim, checkpoints=None) -> np.ndarray:
        ck = np.array([self.n_trees_]) if checkpoints is None else checkpoints
        for c in ck:
            self._n(int(c))
        C = int(self.domain_.cards[dim])
        return self.forest_.slice(codes, dim, 0, ck) + self.log_q0_[dim, :C]
