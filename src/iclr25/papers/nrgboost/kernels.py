"""Compiled hot loops (numba, cached on disk): histograms, split search, row partitioning, tree
evaluation on points and on slices, and the systematic-scan Gibbs sampler.

Everything works on the discretised domain: a row is a vector of `uint8` bin codes, dimension `d`
has `cards[d]` bins (<= 255) and is ordered (numerical) or unordered (categorical).

A forest is stored as flat arrays (see `trees.Forest`):

- internal nodes: `feat[i]` the split dimension; `thr[i]` the threshold (ordered dimension:
  go left when `x[feat] < thr`) or, for an unordered dimension, the row of `catmask` whose
  True entries go left; `left[i]`, `right[i]` the children, a node index when >= 0 or `~leaf`
  (a leaf index) when < 0;
- `value[leaf]` the leaf values; `root[t]` the root of tree `t` (`~leaf` for a one-leaf tree).

No function draws random numbers: callers pass uniforms drawn from a numpy Generator, so results
do not depend on numba's RNG state or on thread scheduling. Importing this module compiles every
kernel (or loads it from numba's on-disk cache), see `_warm_up`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ---------------------------------------------------------------- histograms and partitions


@njit(cache=True)
def histogram(codes, rows, start, stop, weight, out):  # pragma: no cover - compiled
    """out[d, v] = weight * #{i in rows[start:stop] : codes[i, d] == v} (out is overwritten)."""
    ndim = codes.shape[1]
    for d in range(ndim):
        for v in range(out.shape[1]):
            out[d, v] = 0.0
    for k in range(start, stop):
        r = rows[k]
        for d in range(ndim):
            out[d, codes[r, d]] += 1.0
    if weight != 1.0:
        for d in range(ndim):
            for v in range(out.shape[1]):
                out[d, v] *= weight


@njit(cache=True)
def partition(codes, rows, start, stop, dim, is_ordered, thr, mask):  # pragma: no cover
    """Reorder rows[start:stop] in place so rows going left come first; return their count.

    Left is `codes[r, dim] < thr` (ordered) or `mask[codes[r, dim]]` (unordered).
    """
    i = start
    j = stop - 1
    while i <= j:
        v = codes[rows[i], dim]
        go_left = v < thr if is_ordered else mask[v]
        if go_left:
            i += 1
        else:
            tmp = rows[i]
            rows[i] = rows[j]
            rows[j] = tmp
            j -= 1
    return i - start


@njit(cache=True)
def product_histogram(marg, box, weight, out):  # pragma: no cover - compiled
    """out[d, v] = weight q_d(v) [v in box_d] prod_{d' != d} q_{d'}(box_{d'}): the histogram of
    a product measure prod_d q_d restricted to a box (box: (D, Cmax) allowed bins)."""
    D, cmax = marg.shape
    mass = np.empty(D)
    n_zero = 0
    log_total = 0.0
    for d in range(D):
        m = 0.0
        for v in range(cmax):
            if box[d, v]:
                m += marg[d, v]
        mass[d] = m
        if m > 0.0:
            log_total += np.log(m)
        else:
            n_zero += 1
    for d in range(D):
        if n_zero > 1 or (n_zero == 1 and mass[d] > 0.0):
            others = 0.0
        elif mass[d] > 0.0:
            others = np.exp(log_total - np.log(mass[d]))
        else:
            others = np.exp(log_total)
        for v in range(cmax):
            out[d, v] = weight * marg[d, v] * others if box[d, v] else 0.0


# ---------------------------------------------------------------- split search

CHI2 = 0
"""NRGBoost's criterion: g(P, Q) = P^2 / Q (second-order expansion of the likelihood)."""
KL = 1
"""Density-tree likelihood criterion: g(P, Q) = P log(P / Q) with Q the volume."""


@njit(cache=True)
def _g(p, q, criterion):  # pragma: no cover - compiled
    if criterion == CHI2:
        return p * p / q
    if p <= 0.0:
        return 0.0
    return p * np.log(p / q)


EMPTY = 1e-9
"""A side whose reference mass is below EMPTY x the parent's is empty (guards against the
rounding residue of `parent - left` when the true mass is 0)."""


@njit(cache=True)
def _valid(p, q, qtot, max_ratio, min_data):  # pragma: no cover - compiled
    # Both sides must carry model mass; P/Q <= max_ratio (the leaf-ratio constraint) and
    # P >= min_data when those constraints are on (max_ratio <= 0 or min_data <= 0: off).
    if q <= EMPTY * qtot:
        return False
    if max_ratio > 0.0 and p > max_ratio * q:
        return False
    return not (min_data > 0.0 and p < min_data)


@njit(cache=True)
def best_split(
    P, Q, wq, dims, cards, ordered, criterion, max_ratio, min_data, order_buf, key_buf, mask_out
):  # pragma: no cover - compiled
    """Best split of one leaf from its data histogram `P` and reference histogram `wq * Q`.

    P, Q: (D, Cmax); keeping a sample pool's Q as integer counts (weight wq applied here) makes
    an empty side exactly 0.

    Ordered dimensions scan every threshold; unordered ones sort the categories by P/Q and scan
    prefixes of that order (many-vs-many). Returns (gain, dim, thr); for an unordered winner the
    left categories are written to `mask_out`. gain is -inf when no split satisfies the
    constraints. The gain of a split is g(L) + g(R) - g(parent).
    """
    best_gain = -np.inf
    best_dim = -1
    best_thr = -1
    for di in range(dims.shape[0]):
        d = dims[di]
        C = cards[d]
        if C < 2:
            continue
        Ptot = 0.0
        Qtot = 0.0
        for v in range(C):
            Ptot += P[d, v]
            Qtot += Q[d, v]
        Qtot *= wq
        if Qtot <= 0.0:
            continue
        g_parent = _g(Ptot, Qtot, criterion)
        if ordered[d]:
            for v in range(C):
                order_buf[v] = v
        else:
            for v in range(C):
                q = Q[d, v]
                key_buf[v] = P[d, v] / q if q > 0.0 else np.inf
            for v in range(C):  # insertion sort of the categories by key (C <= 255)
                k = v
                while k > 0 and key_buf[order_buf[k - 1]] > key_buf[v]:
                    order_buf[k] = order_buf[k - 1]
                    k -= 1
                order_buf[k] = v
        pl = 0.0
        ql = 0.0
        for k in range(C - 1):
            v = order_buf[k]
            pl += P[d, v]
            ql += wq * Q[d, v]
            pr = Ptot - pl
            qr = Qtot - ql
            if not (
                _valid(pl, ql, Qtot, max_ratio, min_data)
                and _valid(pr, qr, Qtot, max_ratio, min_data)
            ):
                continue
            gain = _g(pl, ql, criterion) + _g(pr, qr, criterion) - g_parent
            if gain > best_gain:
                best_gain = gain
                best_dim = d
                best_thr = k + 1
                if not ordered[d]:
                    for v2 in range(mask_out.shape[0]):
                        mask_out[v2] = False
                    for kk in range(k + 1):
                        mask_out[order_buf[kk]] = True
    return best_gain, best_dim, best_thr


# ---------------------------------------------------------------- evaluation on points


@njit(cache=True)
def _leaf(codes, r, node, feat, thr, left, right, catmask, ordered):  # pragma: no cover
    while node >= 0:
        f = feat[node]
        v = codes[r, f]
        go_left = v < thr[node] if ordered[f] else catmask[thr[node], v]
        node = left[node] if go_left else right[node]
    return ~node


@njit(cache=True)
def leaf_index(codes, root, feat, thr, left, right, catmask, ordered, out):  # pragma: no cover
    """out[i] = the leaf (global index) of one tree with root `root` that row i falls in."""
    for r in range(codes.shape[0]):
        out[r] = _leaf(codes, r, root, feat, thr, left, right, catmask, ordered)


@njit(cache=True)
def sum_trees(
    codes, roots, feat, thr, left, right, catmask, ordered, value, out
):  # pragma: no cover
    """out[i] += sum over the trees in `roots` of the leaf value of row i."""
    for r in range(codes.shape[0]):
        s = 0.0
        for t in range(roots.shape[0]):
            s += value[_leaf(codes, r, roots[t], feat, thr, left, right, catmask, ordered)]
        out[r] += s


# ---------------------------------------------------------------- evaluation on slices


@njit(cache=True)
def _slice_tree(
    x,
    d,
    C,
    node0,
    feat,
    thr,
    left,
    right,
    catmask,
    ordered,
    value,
    add_to,
    st_node,
    st_lo,
    st_hi,
    st_mask,
    cur,
    leaf_out,
):  # pragma: no cover - compiled
    """add_to[v] += the leaf value of the point x with x[d] replaced by v, for every v < C;
    when leaf_out is not empty, leaf_out[v] = that leaf (its index).

    One traversal that carries the set of slice values still reaching a node: a range [lo, hi)
    for an ordered `d`, a boolean mask for an unordered `d` (`cur` holds the current set;
    pending right branches wait on the stack). Nodes on other dimensions follow x.
    """
    is_ord = ordered[d]
    st_node[0] = node0
    st_lo[0] = 0
    st_hi[0] = C
    if not is_ord:
        for v in range(C):
            st_mask[0, v] = True
    top = 1
    while top > 0:
        top -= 1
        node = st_node[top]
        lo = st_lo[top]
        hi = st_hi[top]
        if not is_ord:
            for v in range(C):
                cur[v] = st_mask[top, v]
        while node >= 0:
            f = feat[node]
            if f != d:
                v = x[f]
                go_left = v < thr[node] if ordered[f] else catmask[thr[node], v]
                node = left[node] if go_left else right[node]
            elif is_ord:
                t = thr[node]
                if hi <= t:
                    node = left[node]
                elif lo >= t:
                    node = right[node]
                else:  # both sides reached: keep [lo, t) and push [t, hi)
                    st_node[top] = right[node]
                    st_lo[top] = t
                    st_hi[top] = hi
                    top += 1
                    hi = t
                    node = left[node]
            else:
                m = thr[node]
                n_left = 0
                n_right = 0
                for v in range(C):
                    if cur[v]:
                        if catmask[m, v]:
                            n_left += 1
                        else:
                            n_right += 1
                if n_right == 0:
                    node = left[node]
                elif n_left == 0:
                    node = right[node]
                else:
                    for v in range(C):
                        st_mask[top, v] = cur[v] and not catmask[m, v]
                        cur[v] = cur[v] and catmask[m, v]
                    st_node[top] = right[node]
                    top += 1
                    node = left[node]
        val = value[~node]
        record = leaf_out.shape[0] > 0
        if is_ord:
            for v in range(lo, hi):
                add_to[v] += val
                if record:
                    leaf_out[v] = ~node
        else:
            for v in range(C):
                if cur[v]:
                    add_to[v] += val
                    if record:
                        leaf_out[v] = ~node


@njit(cache=True)
def slice_logits(
    codes,
    d,
    C,
    roots,
    checkpoints,
    feat,
    thr,
    left,
    right,
    catmask,
    ordered,
    value,
    mode,
    max_nodes,
    out,
):  # pragma: no cover - compiled
    """Slice evaluation of a forest for every row: out[k, i, v] for each checkpoint k.

    mode 0 (boosting, additive): the sum over trees; mode 1 (bagging, a mixture): the
    log-sum-exp over trees of the trees' log densities. The value after the first
    `checkpoints[k]` trees is written to out[k] (checkpoints ascending, last = len(roots)).
    Rows of `out` must be zero-initialised for mode 0.
    """
    n = codes.shape[0]
    st_node = np.empty(max_nodes + 2, np.int64)
    st_lo = np.empty(max_nodes + 2, np.int64)
    st_hi = np.empty(max_nodes + 2, np.int64)
    st_mask = np.empty((max_nodes + 2, C), np.bool_)
    cur = np.empty(C, np.bool_)
    acc = np.empty(C)
    tmp = np.empty(C)
    no_leaves = np.empty(0, np.int64)
    for i in range(n):
        x = codes[i]
        for v in range(C):
            acc[v] = 0.0 if mode == 0 else -np.inf
        k = 0
        while k < checkpoints.shape[0] and checkpoints[k] == 0:  # no tree yet
            for v in range(C):
                out[k, i, v] = acc[v]
            k += 1
        for t in range(roots.shape[0]):
            for v in range(C):
                tmp[v] = 0.0
            _slice_tree(
                x,
                d,
                C,
                roots[t],
                feat,
                thr,
                left,
                right,
                catmask,
                ordered,
                value,
                tmp,
                st_node,
                st_lo,
                st_hi,
                st_mask,
                cur,
                no_leaves,
            )
            for v in range(C):
                a = acc[v]
                b = tmp[v]
                if mode == 0:
                    acc[v] = a + b
                else:
                    hi_ = a if a > b else b
                    if hi_ == -np.inf:
                        acc[v] = -np.inf
                    else:
                        acc[v] = hi_ + np.log(np.exp(a - hi_) + np.exp(b - hi_))
            while k < checkpoints.shape[0] and checkpoints[k] == t + 1:
                for v in range(C):
                    out[k, i, v] = acc[v]
                k += 1


# ---------------------------------------------------------------- Gibbs sampling


@njit(cache=True)
def _draw_ordered(steps, C, cdf, u, p_start, p_w):  # pragma: no cover - compiled
    """Draw v with p(v) ∝ q0(v) exp(S(v)), S the prefix sums of the difference array `steps`.

    S is constant on pieces (few of them), so: pick a piece with probability ∝
    exp(S) q0(piece) (cdf: q0's CDF), then v within it from q0 by binary search, reusing the
    uniform u. Exact, with one exp per piece instead of one per bin.
    """
    n = 0
    S = 0.0
    top = -np.inf
    for v in range(C):
        if v == 0 or steps[v] != 0.0:
            S += steps[v]
            p_start[n] = v
            p_w[n] = S
            if top < S:
                top = S
            n += 1
    p_start[n] = C
    total = 0.0
    for k in range(n):
        w = np.exp(p_w[k] - top) * (cdf[p_start[k + 1]] - cdf[p_start[k]])
        p_w[k] = w
        total += w
    target = u * total
    k = 0
    while k < n - 1 and target >= p_w[k]:
        target -= p_w[k]
        k += 1
    a = p_start[k]
    b = p_start[k + 1]
    frac = min(target / p_w[k], 1.0) if p_w[k] > 0.0 else 0.5
    y = cdf[a] + frac * (cdf[b] - cdf[a])
    lo = a  # smallest v in [a, b) with cdf[v + 1] > y
    hi = b - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[mid + 1] > y:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _draw_logits(logits, C, u):  # pragma: no cover - compiled
    """Draw v with p(v) ∝ exp(logits[v]) (logits is overwritten)."""
    m = -np.inf
    for v in range(C):
        if logits[v] > m:
            m = logits[v]
    total = 0.0
    for v in range(C):
        e = np.exp(logits[v] - m)
        logits[v] = e
        total += e
    target = u * total
    pick = C - 1
    acc = 0.0
    for v in range(C):
        acc += logits[v]
        if target < acc:
            pick = v
            break
    while logits[pick] == 0.0:  # never a zero-probability bin
        pick -= 1
    return pick


@njit(cache=True)
def _leaf_packed(x, node, nodes, catmask, ordered):  # pragma: no cover - compiled
    while node >= 0:
        f = nodes[node, 0]
        v = x[f]
        go_left = v < nodes[node, 1] if ordered[f] else catmask[nodes[node, 1], v]
        node = nodes[node, 2] if go_left else nodes[node, 3]
    return ~node


@njit(cache=True)
def gibbs(
    state,
    n_sweeps,
    log_q0,
    cdf_q0,
    cards,
    ordered,
    roots,
    nodes,
    feat,
    thr,
    left,
    right,
    catmask,
    value,
    first_node,
    dim_ptr,
    dim_trees,
    max_nodes,
    uniforms,
    out,
):  # pragma: no cover - compiled
    """Systematic-scan Gibbs sampling of q(x) ∝ q0(x) exp(sum_t δ_t(x)), chain by chain.

    state (K, D) uint8: the chains' current points (updated in place). One sweep resamples
    x_0, ..., x_{D-1} in turn from its exact conditional q0_d(v) exp(sum_t δ_t(x; x_d = v)).
    Only trees whose current root-to-leaf path tests d enter: the others do not look at x_d,
    so they add a constant that cancels. For those, the nodes above the shallowest node that
    tests d do not depend on x_d either, so the slice is evaluated from that node: first_node
    (D, n_leaves) holds it (-1: d not on the path). The slice also gives each such tree's leaf
    at every value of x_d (its pieces: ranges of an ordered d, or per value of an unordered
    one), so the new leaf after x_d moves is read off it, not found by a second traversal.
    dim_ptr/dim_trees list the trees that split on d at all. nodes (n_nodes, 4) int32 packs
    (feat, thr, left, right) of every internal node (see the module docstring) for the
    ordered fast path; the separate arrays serve unordered dimensions.
    Sweep s's state is written to out[k, s]; uniforms (K, n_sweeps, D) supplies the
    randomness. cdf_q0 (D, Cmax + 1) is the CDF of q0's marginals (log_q0 their logs).
    """
    K = state.shape[0]
    D = state.shape[1]
    T = roots.shape[0]
    Cmax = log_q0.shape[1]
    st_node = np.empty(max_nodes + 2, np.int64)
    st_lo = np.empty(max_nodes + 2, np.int64)
    st_hi = np.empty(max_nodes + 2, np.int64)
    st_mask = np.empty((max_nodes + 2, Cmax), np.bool_)
    cur = np.empty(Cmax, np.bool_)
    buf = np.empty(Cmax + 1)
    p_start = np.empty(Cmax + 1, np.int64)
    p_w = np.empty(Cmax + 1)
    leaf = np.empty(T, np.int64)
    hits = np.empty(T, np.int64)
    starts = np.empty(T, np.int64)
    # pieces of the ordered slices: hit h owns pieces pc_off[h]..pc_off[h + 1] - 1, in
    # increasing order of x_d, piece k covering x_d < pc_hi[k] (from the previous piece on)
    # and landing in leaf pc_leaf[k]; a tree has at most as many pieces as leaves
    pc_off = np.empty(T + 1, np.int64)
    pc_hi = np.empty(value.shape[0] + 1, np.int64)
    pc_leaf = np.empty(value.shape[0] + 1, np.int64)
    # unordered slices: leaf of hit h at every value of the coordinate
    u_leaf = np.empty((T, Cmax), np.int64)
    for c in range(K):
        x = state[c]
        for t in range(T):
            leaf[t] = _leaf_packed(x, roots[t], nodes, catmask, ordered)
        for s in range(n_sweeps):
            for d in range(D):
                C = cards[d]
                if C == 1:
                    continue
                is_ord = ordered[d]
                fd = first_node[d]
                n_hits = 0
                if is_ord:
                    for v in range(C + 1):
                        buf[v] = 0.0
                    # the trees whose current path tests d (compacted without a branch)
                    for j in range(dim_ptr[d], dim_ptr[d + 1]):
                        t = dim_trees[j]
                        start = np.int64(fd[leaf[t]])
                        hits[n_hits] = t
                        starts[n_hits] = start
                        n_hits += start >= 0
                    n_pc = 0
                    for h in range(n_hits):
                        start = starts[h]
                        pc_off[h] = n_pc
                        # slice of tree t along the ordered d, from `start` (inlined
                        # _slice_tree with as_steps): ranges [lo, hi) of x_d per leaf
                        node = start
                        lo = 0
                        hi = C
                        top = 0
                        while True:
                            while node >= 0:
                                r = nodes[node]
                                f = r[0]
                                if f != d:
                                    v = x[f]
                                    go_left = v < r[1] if ordered[f] else catmask[r[1], v]
                                    node = r[2] if go_left else r[3]
                                else:
                                    th = r[1]
                                    if hi <= th:
                                        node = r[2]
                                    elif lo >= th:
                                        node = r[3]
                                    else:
                                        st_node[top] = r[3]
                                        st_lo[top] = th
                                        st_hi[top] = hi
                                        top += 1
                                        hi = th
                                        node = r[2]
                            val = value[~node]
                            buf[lo] += val
                            buf[hi] -= val
                            pc_hi[n_pc] = hi
                            pc_leaf[n_pc] = ~node
                            n_pc += 1
                            if top == 0:
                                break
                            top -= 1
                            node = st_node[top]
                            lo = st_lo[top]
                            hi = st_hi[top]
                    pc_off[n_hits] = n_pc
                    pick = _draw_ordered(buf, C, cdf_q0[d], uniforms[c, s, d], p_start, p_w)
                    if pick != x[d]:
                        # the new leaf of each hit tree is the piece holding the pick: no
                        # second traversal (x changed only along d)
                        x[d] = pick
                        for h in range(n_hits):
                            k = pc_off[h]
                            while pc_hi[k] <= pick:
                                k += 1
                            leaf[hits[h]] = pc_leaf[k]
                else:
                    for v in range(C):
                        buf[v] = log_q0[d, v]
                    for j in range(dim_ptr[d], dim_ptr[d + 1]):
                        t = dim_trees[j]
                        start = np.int64(fd[leaf[t]])
                        if start < 0:
                            continue
                        _slice_tree(
                            x,
                            d,
                            C,
                            start,
                            feat,
                            thr,
                            left,
                            right,
                            catmask,
                            ordered,
                            value,
                            buf,
                            st_node,
                            st_lo,
                            st_hi,
                            st_mask,
                            cur,
                            u_leaf[n_hits],
                        )
                        hits[n_hits] = t
                        n_hits += 1
                    pick = _draw_logits(buf, C, uniforms[c, s, d])
                    if pick != x[d]:
                        x[d] = pick
                        for h in range(n_hits):
                            leaf[hits[h]] = u_leaf[h, pick]
            for d in range(D):
                out[c, s, d] = x[d]


# ---------------------------------------------------------------- sampling from leaf boxes


@njit(cache=True)
def sample_boxes(lo, hi, masks, mask_dims, leaf, uniforms, out):  # pragma: no cover - compiled
    """Uniform points in leaf boxes: out[i, d] uniform over the allowed bins of box leaf[i].

    lo/hi (L, D): ranges of ordered dims; masks (L, Du, Cmax): allowed bins of the unordered
    dims listed in mask_dims (mask_dims[d] = row in masks, or -1 for an ordered d).
    """
    n, D = out.shape
    for i in range(n):
        b = leaf[i]
        for d in range(D):
            u = uniforms[i, d]
            j = mask_dims[d]
            if j < 0:
                width = hi[b, d] - lo[b, d]
                out[i, d] = lo[b, d] + min(int(u * width), width - 1)
            else:
                count = 0
                for v in range(masks.shape[2]):
                    if masks[b, j, v]:
                        count += 1
                target = min(int(u * count), count - 1)
                for v in range(masks.shape[2]):
                    if masks[b, j, v]:
                        if target == 0:
                            out[i, d] = v
                            break
                        target -= 1


# ---------------------------------------------------------------- compilation at import


def _warm_up() -> None:
    """Compile every kernel for the argument types the library passes (or load it from
    numba's on-disk cache, about 0.1 s), so that no fit or timed run pays compilation.

    A cold cache (first import after installing or editing this file) costs about 5 s of
    compilation, once.
    """
    i64, u8, f64 = np.int64, np.uint8, np.float64
    codes = np.array([[0, 1], [1, 0]], u8)
    rows = np.arange(2, dtype=i64)
    hist = np.empty((2, 2), f64)
    histogram(codes, rows, 0, 2, 1.0, hist)
    mask = np.zeros(2, np.bool_)
    partition(codes, rows, 0, 2, 0, True, 1, mask)
    cards = np.array([2, 2], i64)
    ordered = np.array([True, False])
    dims = np.arange(2, dtype=i64)
    for crit in (CHI2, KL):
        best_split(
            hist, hist, 1.0, dims, cards, ordered, crit, 2.0, 0.0, np.empty(2, i64),
            np.empty(2, f64), mask,
        )  # fmt: skip
    # one tree: x0 < 1 ? (x1 in {0} ? leaf 0 : leaf 1) : leaf 2
    feat, thr = np.array([0, 1], i64), np.array([1, 0], i64)
    left, right = np.array([1, ~0], i64), np.array([~2, ~1], i64)
    catmask = np.array([[True, False]])
    value = np.array([0.1, -0.2, 0.3])
    roots = np.array([0], i64)
    leaf_index(codes, 0, feat, thr, left, right, catmask, ordered, np.empty(2, i64))
    sum_trees(codes, roots, feat, thr, left, right, catmask, ordered, value, np.zeros(2))
    for d in (0, 1):
        slice_logits(
            codes, d, 2, roots, np.array([1], i64), feat, thr, left, right, catmask, ordered,
            value, d, 2, np.zeros((1, 2, 2)),
        )  # fmt: skip
    nodes = np.stack([feat, thr, left, right], 1).astype(np.int32)
    first = np.array([[0, 0, 0], [1, 1, -1]], np.int32)
    log_q0 = np.log(np.full((2, 2), 0.5))
    cdf = np.array([[0.0, 0.5, 1.0], [0.0, 0.5, 1.0]])
    gibbs(
        codes.copy(), 1, log_q0, cdf, cards, ordered, roots, nodes, feat, thr, left, right,
        catmask, value, first, np.array([0, 1, 2], i64), np.array([0, 0], i64), 2,
        np.full((2, 1, 2), 0.5), np.empty((2, 1, 2), u8),
    )  # fmt: skip
    product_histogram(np.full((2, 2), 0.5), np.ones((2, 2), np.bool_), 1.0, np.empty((2, 2)))
    sample_boxes(
        np.zeros((1, 2), i64), np.full((1, 2), 2, i64), np.ones((1, 1, 2), np.bool_),
        np.array([-1, 0], i64), np.zeros(2, i64), np.full((2, 2), 0.5), np.empty((2, 2), u8),
    )  # fmt: skip


_warm_up()
