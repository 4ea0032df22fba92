"""Baselines: the product of marginals, density-estimation trees (DET), density-estimation
forests (DEF), random-forest density estimation (RFDE), and XGBoost (discriminative).

All density models share NRGBoost's discretisation and its inference on any column (see
`base.TabularDensity`). A tree model's leaf j holds the density P_j / (n V_j) per grid cell
(P_j data rows, V_j cells); a forest averages its trees' densities (a mixture), so its slices
are log-sum-exps over trees.

- DET: one tree grown best-first, each split maximising the likelihood gain
  Σ_children P log(P / V) - P log(P / V) (criterion "kl"), or the squared-error gain
  Σ_children P² / V - P² / V (criterion "ise").
- DEF: bagged DETs (bootstrap rows) with a random subset of columns at every split.
- RFDE: bagged trees that split a random column at the middle of the leaf's range (a random
  half of its categories), breadth-first, with no data-driven choice at all.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy.special import logsumexp

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.nrgboost import kernels as K
from iclr25.papers.nrgboost.base import TabularDensity, as_generator, check_bool
from iclr25.papers.nrgboost.trees import Forest, Reference, Tree, grow_tree, leaf_boxes

CRITERIA = {"kl": K.KL, "ise": K.CHI2}


class ProductOfMarginals(TabularDensity):
    """Independent columns: q(x) = Π_d m_d(x_d), each marginal smoothed by `alpha` pseudo-counts
    per bin (Krichevsky-Trofimov for alpha = 0.5).

    Attributes:
        log_marginals_: (D, Cmax) log m_d(v) (-inf beyond a column's bins).
    """

    def __init__(self, alpha: float = 0.5, max_bins: int = 255, target=None):
        self.alpha = alpha
        self.max_bins = max_bins
        self.target = target

    def fit(self, X, y=None, categorical_features=None) -> ProductOfMarginals:
        """Fit the smoothed marginals of every column (y is ignored)."""
        check_float("alpha", self.alpha, 0.0, None, low_open=True)
        codes = self._fit_codes(X, categorical_features)
        D = codes.shape[1]
        out = np.full((D, self.domain_.cmax), -np.inf)
        for d in range(D):
            C = int(self.domain_.cards[d])
            # DEVIATION: the product-of-marginals baseline smooths each marginal with 0.5
            # pseudo-counts per bin (Krichevsky-Trofimov); NRGBoost's own q0 instead mixes
            # with uniform (ε = 0.1) and is reported separately (`nrgboost_q0`).
            counts = np.bincount(codes[:, d], minlength=C)[:C] + self.alpha
            out[d, :C] = np.log(counts / counts.sum())
        self.log_marginals_ = out
        return self

    def _log_pmf(self, codes, n_trees=None):
        _no_trees(n_trees)
        return self.log_marginals_[np.arange(codes.shape[1])[None, :], codes].sum(1)

    def _slice(self, codes, dim, checkpoints=None):
        C = int(self.domain_.cards[dim])
        k = 1 if checkpoints is None else len(checkpoints)
        return np.broadcast_to(self.log_marginals_[dim, :C], (k, codes.shape[0], C)).copy()

    def _sample_codes(self, n, rng):
        m = np.exp(self.log_marginals_)
        out = np.empty((n, self.domain_.ndim), np.uint8)
        for d in range(self.domain_.ndim):
            C = int(self.domain_.cards[d])
            cdf = np.cumsum(m[d, :C])
            out[:, d] = np.minimum(np.searchsorted(cdf, rng.random(n) * cdf[-1], "right"), C - 1)
        return out


def _no_trees(n_trees) -> None:
    if n_trees is not None:
        raise ValueError(f"n_trees={n_trees!r}: the product of marginals has no trees")


class _TreeMixture(TabularDensity):
    """A mixture of tree densities, (1 - η) · mean_t p_t + η · uniform.

    Subclasses implement `_grow(codes, rows, rng) -> Tree` (P set, boxes set).

    Attributes:
        forest_: The trees; leaf values are log P_j / (n_t V_j), the tree's log density.
        leaf_lo_, leaf_hi_, leaf_masks_: Leaf boxes (for sampling).
        leaf_weight_: Probability of each leaf within its tree (P_j / n_t).
        eta_: The uniform mixture weight actually used.
    """

    def _fit_forest(self, X, categorical_features, n_trees, bootstrap, rng):
        check_int("n_trees", n_trees, 1)
        check_int("max_leaves", self.max_leaves, 2, 32768)
        eta = self.uniform_mixture
        if eta is not None:  # None: 1 / (n + 1)
            check_float("uniform_mixture", eta, 0.0, 1.0, high_open=True)
        codes = self._fit_codes(X, categorical_features)
        n = codes.shape[0]
        dom = self.domain_
        # DEVIATION: tree densities are mixed with the uniform pmf (weight 1/(n+1), one
        # pseudo-row) so that held-out log-likelihoods stay finite: RFDE leaves can be empty
        # and a test row can fall in them. The paper's DET/DEF/RFDE have no such term.
        self.eta_ = 1.0 / (n + 1) if eta is None else float(eta)
        self.forest_ = Forest(dom)
        los, his, masks, weights = [], [], [], []
        self._unordered = np.flatnonzero(~dom.ordered)
        for _ in range(n_trees):
            rows = rng.integers(0, n, n) if bootstrap else np.arange(n)
            tree = self._grow(codes, rows.astype(np.int64), rng)
            boxes = tree.boxes if tree.boxes is not None else leaf_boxes(tree, dom)
            logv = np.log(boxes.sum(2).astype(float)).sum(1)
            with np.errstate(divide="ignore"):
                tree.value = np.log(tree.P / rows.shape[0]) - logv
            self.forest_.append(tree)
            weights.append(tree.P / rows.shape[0])
            los.append(np.argmax(boxes, axis=2))
            his.append(dom.cmax - np.argmax(boxes[:, :, ::-1], axis=2))
            masks.append(boxes[:, self._unordered])
        self.leaf_lo_ = np.concatenate(los).astype(np.int64)
        self.leaf_hi_ = np.concatenate(his).astype(np.int64)
        self.leaf_masks_ = np.concatenate(masks)
        self.leaf_weight_ = np.concatenate(weights)
        self.n_trees_ = self.forest_.n_trees
        return self

    def _n(self, n_trees) -> int:
        if n_trees is None:
            return self.n_trees_
        return check_int("n_trees", n_trees, 1, self.n_trees_)

    def _mix(self, log_mean: np.ndarray) -> np.ndarray:
        if self.eta_ == 0:
            return log_mean
        return np.logaddexp(
            np.log1p(-self.eta_) + log_mean, np.log(self.eta_) - self.domain_.log_size
        )

    def _log_pmf(self, codes, n_trees=None):
        T = self._n(n_trees)
        f = self.forest_
        per_tree = np.stack([f.value[f.leaves(codes, t)] for t in range(T)])
        return self._mix(logsumexp(per_tree, axis=0) - np.log(T))

    def _slice(self, codes, dim, checkpoints=None):
        ck = np.array([self.n_trees_]) if checkpoints is None else np.asarray(checkpoints)
        for c in ck:
            self._n(int(c))
        out = self.forest_.slice(codes, dim, 1, ck)
        return self._mix(out - np.log(ck)[:, None, None])

    def _sample_codes(self, n, rng, n_trees=None):
        T = self._n(n_trees)
        f, dom = self.forest_, self.domain_
        starts = [*f.leaf_start, f.value.shape[0]]
        tree = rng.integers(0, T, n)
        leaf = np.empty(n, np.int64)
        for t in range(T):
            sel = np.flatnonzero(tree == t)
            w = self.leaf_weight_[starts[t] : starts[t + 1]]
            cdf = np.cumsum(w)
            leaf[sel] = starts[t] + np.minimum(
                np.searchsorted(cdf, rng.random(sel.size) * cdf[-1], "right"), w.size - 1
            )
        mask_dims = np.full(dom.ndim, -1, np.int64)
        mask_dims[self._unordered] = np.arange(self._unordered.size)
        out = np.empty((n, dom.ndim), np.uint8)
        K.sample_boxes(
            self.leaf_lo_,
            self.leaf_hi_,
            self.leaf_masks_,
            mask_dims,
            leaf,
            rng.random((n, dom.ndim)),
            out,
        )
        uniform = rng.random(n) < self.eta_
        if uniform.any():
            k = int(uniform.sum())
            out[uniform] = np.floor(rng.random((k, dom.ndim)) * dom.cards).astype(np.uint8)
        return out


def _check_det(model) -> None:
    check_choice("criterion", model.criterion, CRITERIA)
    # >= 1: an empty leaf would have zero density
    check_float("min_data_in_leaf", model.min_data_in_leaf, 1.0, None)


def _grow_det(model, codes, rows, rng, feature_frac: float) -> Tree:
    dom = model.domain_
    volume = np.zeros((dom.ndim, dom.cmax))
    for d in range(dom.ndim):
        volume[d, : dom.cards[d]] = 1.0
    tree, _ = grow_tree(
        dom,
        codes,
        rows,
        Reference(weight=1.0, marginals=volume),
        criterion=CRITERIA[model.criterion],
        max_leaves=model.max_leaves,
        min_data=float(model.min_data_in_leaf),
        feature_frac=feature_frac,
        rng=rng,
    )
    return tree


class DensityForest(_TreeMixture):
    """DEF: bagged density-estimation trees with column subsampling at every split.

    Args:
        n_trees: Trees in the forest.
        max_leaves: Leaves per tree (best-first growth).
        min_data_in_leaf: Rows each leaf must keep (>= 1 keeps every leaf's density positive).
        criterion: "kl" (likelihood, DEF (KL)) or "ise" (squared error, DEF (ISE)).
        feature_frac: Fraction of columns considered at each split.
        bootstrap: Fit each tree on a bootstrap sample of the rows.
        uniform_mixture: η of the final mixture with the uniform pmf (None: 1 / (n + 1)).
        max_bins, target, random_state: as in `NRGBoost`.
    """

    def __init__(
        self,
        n_trees: int = 50,
        max_leaves: int = 64,
        min_data_in_leaf: int = 1,
        criterion: str = "kl",
        feature_frac: float = 0.5,
        bootstrap: bool = True,
        uniform_mixture: float | None = None,
        max_bins: int = 255,
        target=None,
        random_state=None,
    ):
        self.n_trees = n_trees
        self.max_leaves = max_leaves
        self.min_data_in_leaf = min_data_in_leaf
        self.criterion = criterion
        self.feature_frac = feature_frac
        self.bootstrap = bootstrap
        self.uniform_mixture = uniform_mixture
        self.max_bins = max_bins
        self.target = target
        self.random_state = random_state

    def fit(self, X, y=None, categorical_features=None):
        """Fit the forest on the table X (y is ignored)."""
        _check_det(self)
        check_float("feature_frac", self.feature_frac, 0.0, 1.0, low_open=True)
        check_bool("bootstrap", self.bootstrap)
        rng = as_generator(self.random_state)
        return self._fit_forest(X, categorical_features, self.n_trees, self.bootstrap, rng)

    def _grow(self, codes, rows, rng) -> Tree:
        return _grow_det(self, codes, rows, rng, float(self.feature_frac))


class DensityTree(_TreeMixture):
    """DET: one density-estimation tree on all rows and all columns.

    Args: as in `DensityForest` (a DET is a DEF of one tree without bagging or column
    subsampling).
    """

    def __init__(
        self,
        max_leaves: int = 64,
        min_data_in_leaf: int = 1,
        criterion: str = "kl",
        uniform_mixture: float | None = None,
        max_bins: int = 255,
        target=None,
    ):
        self.max_leaves = max_leaves
        self.min_data_in_leaf = min_data_in_leaf
        self.criterion = criterion
        self.uniform_mixture = uniform_mixture
        self.max_bins = max_bins
        self.target = target

    def fit(self, X, y=None, categorical_features=None):
        """Fit the tree on the table X (y is ignored)."""
        _check_det(self)
        return self._fit_forest(X, categorical_features, 1, False, np.random.default_rng(0))

    def _grow(self, codes, rows, rng) -> Tree:
        return _grow_det(self, codes, rows, rng, 1.0)


class RandomForestDensity(_TreeMixture):
    """RFDE: bagged trees that split a random column at the middle of the leaf's range.

    Args:
        n_trees: Trees in the forest.
        max_leaves: Leaves per tree (breadth-first growth).
        bootstrap: Fit each tree's leaf masses on a bootstrap sample of the rows.
        uniform_mixture: η of the mixture with the uniform pmf (None: 1 / (n + 1)); needed,
            since RFDE leaves can be empty.
        max_bins, target, random_state: as in `NRGBoost`.
    """

    def __init__(
        self,
        n_trees: int = 50,
        max_leaves: int = 64,
        bootstrap: bool = True,
        uniform_mixture: float | None = None,
        max_bins: int = 255,
        target=None,
        random_state=None,
    ):
        self.n_trees = n_trees
        self.max_leaves = max_leaves
        self.bootstrap = bootstrap
        self.uniform_mixture = uniform_mixture
        self.max_bins = max_bins
        self.target = target
        self.random_state = random_state

    def fit(self, X, y=None, categorical_features=None):
        """Fit the forest on the table X (y is ignored)."""
        check_bool("bootstrap", self.bootstrap)
        rng = as_generator(self.random_state)
        return self._fit_forest(X, categorical_features, self.n_trees, self.bootstrap, rng)

    def _grow(self, codes, rows, rng) -> Tree:
        dom = self.domain_
        D, cmax = dom.ndim, dom.cmax
        full = np.zeros((D, cmax), bool)
        for d in range(D):
            full[d, : dom.cards[d]] = True
        rows = rows.copy()
        leaves = [((0, rows.shape[0]), full, -1, 0)]
        queue = deque([0])
        feat, thr, left, right, masks = [], [], [], [], []
        while queue and len(leaves) < self.max_leaves:
            j = queue.popleft()
            (a, b), box, parent, side = leaves[j]
            counts = box.sum(1)
            dims = np.flatnonzero(counts > 1)
            if dims.size == 0:
                continue
            d = int(rng.choice(dims))
            allowed = np.flatnonzero(box[d])
            if dom.ordered[d]:
                half, odd = divmod(allowed.size, 2)
                t = int(allowed[0] + half + (odd and rng.random() < 0.5))
                n_left = K.partition(codes, rows, a, b, d, True, t, full[0])
                mask = None
            else:
                chosen = rng.permutation(allowed)[: allowed.size // 2]
                mask = np.zeros(cmax, bool)
                mask[chosen] = True
                t = len(masks)
                n_left = K.partition(codes, rows, a, b, d, False, 0, mask)
            bl, br = box.copy(), box.copy()
            if mask is None:
                bl[d, t:] = False
                br[d, :t] = False
            else:
                bl[d] &= mask
                br[d] &= ~mask
                masks.append(mask)
            node = len(feat)
            feat.append(d)
            thr.append(t)
            left.append(~j)
            right.append(~len(leaves))
            if parent >= 0:
                (left if side == 0 else right)[parent] = node
            leaves[j] = ((a, a + n_left), bl, node, 0)
            leaves.append(((a + n_left, b), br, node, 1))
            queue.extend([j, len(leaves) - 1])
        P = np.array([float(seg[1] - seg[0]) for seg, *_ in leaves])
        return Tree(
            feat=np.array(feat, np.int64),
            thr=np.array(thr, np.int64),
            left=np.array(left, np.int64),
            right=np.array(right, np.int64),
            catmask=np.array(masks, bool).reshape(len(masks), cmax),
            value=np.zeros(len(leaves)),
            P=P,
            Q=np.ones(len(leaves)),
            boxes=np.stack([box for _, box, *_ in leaves]),
        )


# ---------------------------------------------------------------- discriminative reference


def xgboost_model(task: str, n_classes: int = 2, random_state: int = 0, **params):
    """An XGBoost classifier or regressor with the settings used in the experiments.

    One thread (the experiments run seeds in parallel); hist tree method; early stopping is
    left to the caller (`fit(..., eval_set=...)`).
    """
    try:
        import xgboost
    except ImportError:
        raise ImportError(
            "the XGBoost baseline needs xgboost: pip install 'iclr25[tabular]'"
        ) from None
    settings = dict(
        n_estimators=500,
        learning_rate=0.05,
        max_depth=6,
        subsample=0.8,
        colsample_bytree=0.8,
        tree_method="hist",
        enable_categorical=True,
        n_jobs=1,
        random_state=random_state,
        early_stopping_rounds=50,
    )
    settings.update(params)
    if task == "regression":
        return xgboost.XGBRegressor(**settings)
    return xgboost.XGBClassifier(**settings)
