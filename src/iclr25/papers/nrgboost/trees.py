"""Trees on a discretised domain: the flat forest layout, best-first growth and leaf boxes.

A tree partitions the grid prod_d {0, ..., cards[d]-1} into axis-aligned boxes (leaves).
`grow_tree` grows one tree best-first (always splitting the leaf with the largest gain) from
two histograms per leaf: the data mass P and a reference mass Q, where Q is either

- a weighted sample (NRGBoost's model-sample pool), histogrammed from its rows, or
- a product measure prod_d q_d(x_d) restricted to the leaf's box (NRGBoost's exact q0 in the
  first round; the uniform volume measure of density-estimation trees),

with the histogram of the larger child obtained by subtraction from its parent.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from iclr25.papers.nrgboost import kernels as K


@dataclass(frozen=True)
class Domain:
    """The discretised domain: bins per dimension and whether each dimension is ordered.

    Attributes:
        cards: (D,) number of bins of each dimension (1..255).
        ordered: (D,) True for numerical (ordered) dimensions, False for categorical ones.
    """

    cards: np.ndarray
    ordered: np.ndarray

    @property
    def ndim(self) -> int:
        return int(self.cards.shape[0])

    @property
    def cmax(self) -> int:
        return int(self.cards.max())

    def writable(self) -> Domain:
        """This domain with writable arrays (unpickling may give read-only ones)."""
        return Domain(np.array(self.cards), np.array(self.ordered))

    @property
    def log_size(self) -> float:
        """log of the number of cells of the grid."""
        return float(np.log(self.cards.astype(float)).sum())


@dataclass
class Tree:
    """One tree with local indices (see `kernels` for the layout).

    Attributes:
        feat, thr, left, right: (n_nodes,) internal nodes; children >= 0 are nodes, < 0 are
            `~leaf`.
        catmask: (n_masks, Cmax) bool: left categories of unordered splits (`thr` indexes it).
        value: (n_leaves,) leaf values.
        P, Q: (n_leaves,) data and reference mass of each leaf.
        boxes: (n_leaves, D, Cmax) bool allowed bins per leaf, or None when not tracked.
    """

    feat: np.ndarray
    thr: np.ndarray
    left: np.ndarray
    right: np.ndarray
    catmask: np.ndarray
    value: np.ndarray
    P: np.ndarray
    Q: np.ndarray
    boxes: np.ndarray | None = None

    @property
    def n_leaves(self) -> int:
        return int(self.value.shape[0])

    @property
    def n_nodes(self) -> int:
        return int(self.feat.shape[0])


@dataclass
class Forest:
    """Trees stored as flat arrays, ready for the compiled kernels."""

    domain: Domain
    feat: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    thr: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    left: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    right: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    value: np.ndarray = field(default_factory=lambda: np.empty(0, np.float64))
    roots: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    catmask: np.ndarray | None = None
    first_node: np.ndarray | None = None
    node_start: list[int] = field(default_factory=list)
    leaf_start: list[int] = field(default_factory=list)
    max_nodes: int = 0

    def __post_init__(self) -> None:
        if self.catmask is None:
            self.catmask = np.zeros((1, self.domain.cmax), bool)  # row 0 unused (never empty)
        if self.first_node is None:
            self.first_node = np.zeros((0, self.domain.ndim), np.int32)

    @property
    def n_trees(self) -> int:
        return int(self.roots.shape[0])

    def make_writable(self) -> None:
        """Copy read-only arrays (after unpickling from a memory map)."""
        for key, value in vars(self).items():
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                setattr(self, key, value.copy())
        self.domain = self.domain.writable()

    def append(self, tree: Tree) -> None:
        """Add a tree (its leaf values are copied)."""
        n0, l0, m0 = self.feat.shape[0], self.value.shape[0], self.catmask.shape[0]
        unordered = ~self.domain.ordered[tree.feat] if tree.n_nodes else np.zeros(0, bool)
        thr = np.where(unordered, tree.thr + m0, tree.thr)

        def shift(child: np.ndarray) -> np.ndarray:
            return np.where(child >= 0, child + n0, ~(~child + l0))

        self.feat = np.concatenate([self.feat, tree.feat])
        self.thr = np.concatenate([self.thr, thr])
        self.left = np.concatenate([self.left, shift(tree.left)])
        self.right = np.concatenate([self.right, shift(tree.right)])
        self.catmask = np.concatenate([self.catmask, tree.catmask])
        self.value = np.concatenate([self.value, tree.value])
        first = first_nodes(tree, self.domain.ndim)
        self.first_node = np.concatenate([self.first_node, np.where(first >= 0, first + n0, -1)])
        root = n0 if tree.n_nodes else ~l0
        self.roots = np.append(self.roots, root)
        self.node_start.append(n0)
        self.leaf_start.append(l0)
        self.max_nodes = max(self.max_nodes, tree.n_nodes)

    def packed(self) -> tuple[np.ndarray, np.ndarray]:
        """(nodes, first_node) for the Gibbs kernel: nodes (n_nodes, 4) int32 rows
        (feat, thr, left, right); first_node transposed to (D, n_leaves)."""
        nodes = np.stack([self.feat, self.thr, self.left, self.right], 1).astype(np.int32)
        return nodes, np.ascontiguousarray(self.first_node.T)

    def args(self) -> tuple:
        """(feat, thr, left, right, catmask, ordered) for the kernels."""
        return self.feat, self.thr, self.left, self.right, self.catmask, self.domain.ordered

    def dims_to_trees(self, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """CSR lists (ptr, trees) of the trees (among the first `stop`) that split on each dim:
        trees[ptr[d]:ptr[d + 1]] are those splitting on d, in increasing order."""
        stop = self.n_trees if stop is None else stop
        D = self.domain.ndim
        n_nodes = self.node_start[stop] if stop < self.n_trees else self.feat.shape[0]
        sizes = np.diff([*self.node_start[:stop], n_nodes])
        tree_of_node = np.repeat(np.arange(stop, dtype=np.int64), sizes)
        # one (dim, tree) pair per tree and dim it splits on, sorted by dim then tree
        keys = np.unique(self.feat[:n_nodes] * max(stop, 1) + tree_of_node)
        ptr = np.zeros(D + 1, np.int64)
        ptr[1:] = np.cumsum(np.bincount(keys // max(stop, 1), minlength=D))
        return ptr, keys % max(stop, 1)

    def sum(self, codes: np.ndarray, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Sum of the leaf values of trees start..stop-1 at each row. Shapes: (n, D) -> (n,)."""
        out = np.zeros(codes.shape[0])
        roots = self.roots[start:stop]
        if roots.size:
            K.sum_trees(codes, roots, *self.args(), self.value, out)
        return out

    def leaves(self, codes: np.ndarray, t: int) -> np.ndarray:
        """Global leaf index of tree t for each row."""
        out = np.empty(codes.shape[0], np.int64)
        K.leaf_index(codes, self.roots[t], *self.args(), out)
        return out

    def slice(
        self,
        codes: np.ndarray,
        dim: int,
        mode: int,
        checkpoints: np.ndarray | None = None,
    ) -> np.ndarray:
        """Slice values over every bin of `dim` at each row, after each checkpoint tree count.

        mode 0: sum over trees; mode 1: log-sum-exp over trees. Shapes: codes (n, D) ->
        (n_checkpoints, n, cards[dim]).
        """
        C = int(self.domain.cards[dim])
        if checkpoints is None:
            checkpoints = np.array([self.n_trees], np.int64)
        checkpoints = np.asarray(checkpoints, np.int64)
        out = np.zeros((checkpoints.shape[0], codes.shape[0], C))
        roots = self.roots[: int(checkpoints.max())] if checkpoints.size else self.roots[:0]
        K.slice_logits(
            codes,
            dim,
            C,
            roots,
            checkpoints,
            *self.args(),
            self.value,
            mode,
            self.max_nodes,
            out,
        )
        return out


def first_nodes(tree: Tree, ndim: int) -> np.ndarray:
    """(n_leaves, D) int32: the shallowest node on the leaf's path that tests dimension d, or
    -1 when no node on the path tests d (local node indices)."""
    out = np.full((tree.n_leaves, ndim), -1, np.int32)
    if tree.n_nodes == 0:
        return out
    stack = [(0, np.full(ndim, -1, np.int32))]
    while stack:
        node, first = stack.pop()
        d = int(tree.feat[node])
        if first[d] < 0:
            first = first.copy()
            first[d] = node
        for child in (tree.left[node], tree.right[node]):
            if child >= 0:
                stack.append((int(child), first))
            else:
                out[~child] = first
    return out


# ---------------------------------------------------------------- growing one tree


@dataclass
class Reference:
    """The reference mass Q: a weighted sample (`codes`, `weight`) or a product measure
    (`marginals` (D, Cmax), total mass `weight`)."""

    weight: float
    codes: np.ndarray | None = None
    marginals: np.ndarray | None = None


@dataclass
class _Leaf:
    p: tuple[int, int]
    q: tuple[int, int]
    P: np.ndarray
    Q: np.ndarray
    box: np.ndarray | None
    parent: int  # internal node index (-1 for the root)
    side: int  # 0 left, 1 right
    split: tuple = ()


def grow_tree(
    domain: Domain,
    data: np.ndarray,
    rows: np.ndarray,
    ref: Reference,
    *,
    criterion: int,
    max_leaves: int,
    max_ratio: float = 0.0,
    min_data: float = 0.0,
    feature_frac: float = 1.0,
    rng: np.random.Generator | None = None,
    track_boxes: bool = False,
) -> tuple[Tree, np.ndarray | None]:
    """Grow one tree best-first to at most `max_leaves` leaves.

    Args:
        domain: The grid.
        data: (n, D) uint8 codes of the data; `rows` selects (with repeats) the rows used.
        ref: The reference mass Q.
        criterion: `kernels.CHI2` (NRGBoost) or `kernels.KL` (density-estimation trees).
        max_ratio: Leaf-ratio constraint P/Q <= max_ratio on both children (0: off).
        min_data: Both children must hold at least this data mass (0: off).
        feature_frac: Fraction of dimensions considered at each node (drawn from `rng`).
        track_boxes: Keep every leaf's box (always on for a product reference).

    Returns:
        (tree, ref_leaf): the tree with leaf masses P, Q (values unset: zeros) and, for a
        sample reference, the leaf of each reference row (else None).
    """
    D, cmax = domain.ndim, domain.cmax
    cards, ordered = domain.cards, domain.ordered
    product = ref.marginals is not None
    track_boxes = track_boxes or product
    prow = np.array(rows, dtype=np.int64, copy=True)
    qrow = None if product else np.arange(ref.codes.shape[0], dtype=np.int64)
    order_buf = np.empty(cmax, np.int64)
    key_buf = np.empty(cmax)
    mask_buf = np.zeros(cmax, bool)
    all_dims = np.arange(D, dtype=np.int64)
    n_feat = max(1, round(feature_frac * D))

    def hist_p(seg):
        out = np.empty((D, cmax))
        K.histogram(data, prow, seg[0], seg[1], 1.0, out)
        return out

    def hist_q(seg, box):
        out = np.empty((D, cmax))
        if product:
            K.product_histogram(ref.marginals, box, float(ref.weight), out)
            return out
        K.histogram(ref.codes, qrow, seg[0], seg[1], 1.0, out)
        return out

    wq = 1.0 if product else float(ref.weight)

    def find(leaf: _Leaf) -> float:
        dims = all_dims
        if n_feat < D:
            dims = np.sort(rng.choice(D, n_feat, replace=False)).astype(np.int64)
        gain, dim, thr = K.best_split(
            leaf.P,
            leaf.Q,
            wq,
            dims,
            cards,
            ordered,
            criterion,
            float(max_ratio),
            float(min_data),
            order_buf,
            key_buf,
            mask_buf,
        )
        mask = mask_buf.copy() if dim >= 0 and not ordered[dim] else None
        leaf.split = (gain, int(dim), int(thr), mask)
        return gain

    full_box = np.zeros((D, cmax), bool)
    for d in range(D):
        full_box[d, : cards[d]] = True
    nq = 0 if product else ref.codes.shape[0]
    root = _Leaf((0, prow.shape[0]), (0, nq), None, None, full_box if track_boxes else None, -1, 0)
    root.P = hist_p(root.p)
    root.Q = hist_q(root.q, root.box)
    leaves = [root]
    feat, thr_l, left, right, masks = [], [], [], [], []
    heap = [(-find(root), 0, 0)]
    counter = 1
    while heap and len(leaves) < max_leaves:
        neg_gain, _, j = heapq.heappop(heap)
        if not -neg_gain >= 0.0:  # -inf: no admissible split left
            break
        leaf = leaves[j]
        _, dim, thr, mask = leaf.split
        is_ord = bool(ordered[dim])
        mask_arg = mask if mask is not None else mask_buf
        np_left = K.partition(data, prow, leaf.p[0], leaf.p[1], dim, is_ord, thr, mask_arg)
        pl = (leaf.p[0], leaf.p[0] + np_left)
        pr = (leaf.p[0] + np_left, leaf.p[1])
        if product:
            ql = qr = (0, 0)
        else:
            nq_left = K.partition(ref.codes, qrow, leaf.q[0], leaf.q[1], dim, is_ord, thr, mask_arg)
            ql = (leaf.q[0], leaf.q[0] + nq_left)
            qr = (leaf.q[0] + nq_left, leaf.q[1])
        box_l = box_r = None
        if track_boxes:
            box_l, box_r = leaf.box.copy(), leaf.box.copy()
            if is_ord:
                box_l[dim, thr:] = False
                box_r[dim, :thr] = False
            else:
                box_l[dim, : mask.shape[0]] &= mask
                box_r[dim, : mask.shape[0]] &= ~mask
        # histograms: build the smaller child, subtract for the other
        if (pl[1] - pl[0]) <= (pr[1] - pr[0]):
            P_l = hist_p(pl)
            P_r = leaf.P - P_l
        else:
            P_r = hist_p(pr)
            P_l = leaf.P - P_r
        if product:
            Q_l, Q_r = hist_q(None, box_l), hist_q(None, box_r)
        elif (ql[1] - ql[0]) <= (qr[1] - qr[0]):
            Q_l = hist_q(ql, None)
            Q_r = leaf.Q - Q_l
        else:
            Q_r = hist_q(qr, None)
            Q_l = leaf.Q - Q_r
        node = len(feat)
        feat.append(dim)
        if is_ord:
            thr_l.append(thr)
        else:
            thr_l.append(len(masks))
            masks.append(mask)
        left.append(~j)
        right.append(~len(leaves))
        if leaf.parent >= 0:
            (left if leaf.side == 0 else right)[leaf.parent] = node
        lchild = _Leaf(pl, ql, P_l, Q_l, box_l, node, 0)
        rchild = _Leaf(pr, qr, P_r, Q_r, box_r, node, 1)
        leaves[j] = lchild
        leaves.append(rchild)
        heapq.heappush(heap, (-find(lchild), counter, j))
        heapq.heappush(heap, (-find(rchild), counter + 1, len(leaves) - 1))
        counter += 2

    n_leaves = len(leaves)
    P = np.array([lf.P[0, : cards[0]].sum() for lf in leaves])
    Q = np.array([lf.Q[0, : cards[0]].sum() for lf in leaves]) * wq
    tree = Tree(
        feat=np.array(feat, np.int64),
        thr=np.array(thr_l, np.int64),
        left=np.array(left, np.int64),
        right=np.array(right, np.int64),
        catmask=np.array(masks, bool).reshape(len(masks), cmax),
        value=np.zeros(n_leaves),
        P=P,
        Q=Q,
        boxes=np.stack([lf.box for lf in leaves]) if track_boxes else None,
    )
    ref_leaf = None
    if not product:
        ref_leaf = np.empty(nq, np.int64)
        for j, lf in enumerate(leaves):
            ref_leaf[qrow[lf.q[0] : lf.q[1]]] = j
    return tree, ref_leaf


def leaf_boxes(tree: Tree, domain: Domain) -> np.ndarray:
    """(n_leaves, D, Cmax) allowed bins of every leaf, by walking the tree from its root."""
    D, cmax = domain.ndim, domain.cmax
    full = np.zeros((D, cmax), bool)
    for d in range(D):
        full[d, : domain.cards[d]] = True
    boxes = np.zeros((tree.n_leaves, D, cmax), bool)
    if tree.n_nodes == 0:
        boxes[0] = full
        return boxes
    stack = [(0, full)]
    while stack:
        node, box = stack.pop()
        d = tree.feat[node]
        bl, br = box.copy(), box.copy()
        if domain.ordered[d]:
            bl[d, tree.thr[node] :] = False
            br[d, : tree.thr[node]] = False
        else:
            m = tree.catmask[tree.thr[node]]
            bl[d] &= m
            br[d] &= ~m
        for child, b in ((tree.left[node], bl), (tree.right[node], br)):
            if child >= 0:
                stack.append((child, b))
            else:
                boxes[~child] = b
    return boxes
