"""FlashMask's column-wise sparse mask representation, its builders and its tile classifier.

For every key column j (per batch and per head, or one entry broadcast over them) a `MaskSpec`
stores four int32 row bounds: the lower-triangle interval [LTS_j, LTE_j) and the upper-triangle
interval [UTS_j, UTE_j). Query row i may **not** attend to key j iff

    LTS_j <= i < LTE_j   or   UTS_j <= i < UTE_j   or   (causal and i < j).

That is 16 bytes per column (16N for one head) instead of N^2 for a dense boolean mask. The names
LT/UT follow the paper (the LT interval usually lies below the diagonal and the UT interval above
it), but the semantics above hold for any two row intervals, and so does the tile classifier.

Tiles: `block_summary(block_n)` keeps, per key block, the min and max of each vector (8 ints per
block); `classify(block_m, block_n)` turns them into a three-way label per (query tile, key tile):
`SKIP` (every element masked: not computed), `FULL` (no element masked: computed without an
element mask) or `PARTIAL` (the element mask is built from the column vectors). The test is
conservative (a tile covered only by the union of the two intervals is PARTIAL), so attention
computed from it is exact.

Shapes: the four vectors are (B, H, N) with B and H each 1 (broadcast) or the batch and head
count of the attention inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from iclr25.core.checks import check_int

MAX_N = 2**31 - 1
"""Longest sequence a mask can hold: the row bounds (0..N) are stored as int32."""

SKIP, FULL, PARTIAL = 0, 1, 2
"""Tile labels of `MaskSpec.classify`."""

_NAMES = ("lts", "lte", "uts", "ute")


def _as_vector(name: str, value: Tensor | Sequence[int]) -> Tensor:
    t = value if isinstance(value, Tensor) else torch.as_tensor(value)
    if t.dtype == torch.bool or t.dtype.is_floating_point or t.dtype.is_complex:
        raise TypeError(f"{name} has dtype {t.dtype}: the row bounds must be an integer tensor")
    if t.dim() not in (1, 2, 3) or t.shape[-1] < 1:
        raise ValueError(
            f"{name} has shape {tuple(t.shape)}: allowed are (N,), (H, N) or (B, H, N) with N >= 1"
        )
    while t.dim() < 3:
        t = t.unsqueeze(0)
    return t  # still in its own integer dtype: bounds are checked before the int32 cast


def _to_int32(t: Tensor) -> Tensor:
    return t.to(torch.int32).contiguous()


class BlockSummary(NamedTuple):
    """Per key block, the 8 ints the classifier needs; each field is (B, H, num_blocks).

    `lts_max`/`lte_min` (and `uts_max`/`ute_min`) are the plain max and min over the block's
    columns: rows [r0, r1) are masked in every column iff r0 >= lts_max and r1 <= lte_min.
    `lts_min`/`lte_max` (and `uts_min`/`ute_max`) are taken over the columns whose interval is
    non-empty (an empty interval masks nothing): rows [r0, r1) miss every column's interval if
    r1 <= lts_min or r0 >= lte_max.
    """

    lts_min: Tensor
    lts_max: Tensor
    lte_min: Tensor
    lte_max: Tensor
    uts_min: Tensor
    uts_max: Tensor
    ute_min: Tensor
    ute_max: Tensor

    def stacked(self) -> Tensor:
        """The 8 fields as one int32 tensor (B, H, num_blocks, 8), in field order."""
        return torch.stack(list(self), dim=-1).to(torch.int32).contiguous()


class MaskSpec:
    """A FlashMask attention mask: two masked row intervals per key column, plus a causal flag.

    Args:
        lts, lte: Lower-triangle interval [LTS, LTE) of masked rows per column. `lte`
            defaults to N (masked to the end); both None means no LT interval.
        uts, ute: Upper-triangle interval [UTS, UTE). `uts` defaults to 0 (masked from the
            top); both None means no UT interval.
        causal: Also mask every row i < j (the strict upper triangle).
        n: Sequence length; needed only when no vector is given (a full or causal mask).

    Shapes:
        Each given vector is (N,), (H, N) or (B, H, N), all the same shape, integer dtype, with
        0 <= start <= end <= N. They are stored as int32 (B, H, N); B and H of 1 broadcast.

    Raises:
        TypeError: a vector is not an integer tensor.
        ValueError: shapes differ, a bound lies outside [0, N], a start lies after its end, or
            N > MAX_N = 2**31 - 1 (the bounds would not fit int32).
    """

    def __init__(
        self,
        lts: Tensor | Sequence[int] | None = None,
        lte: Tensor | Sequence[int] | None = None,
        uts: Tensor | Sequence[int] | None = None,
        ute: Tensor | Sequence[int] | None = None,
        *,
        causal: bool = False,
        n: int | None = None,
    ) -> None:
        given = {
            k: _as_vector(k, v)
            for k, v in zip(_NAMES, (lts, lte, uts, ute), strict=True)
            if v is not None
        }
        shapes = {k: tuple(v.shape) for k, v in given.items()}
        if len(set(shapes.values())) > 1:
            raise ValueError(f"the row-bound vectors have different shapes: {shapes}")
        if given:
            shape = next(iter(given.values())).shape
            if n is not None and n != shape[-1]:
                raise ValueError(f"n={n} does not match the vectors' length N={shape[-1]}")
        else:
            if n is None:
                raise ValueError("n=None: give an int n >= 1 when no row-bound vector is given")
            n = check_int("n", n, 1, MAX_N)
            shape = torch.Size((1, 1, n))
        N = shape[-1]
        if N > MAX_N:
            raise ValueError(
                f"the row-bound vectors have length N={N}: allowed is N <= {MAX_N} (int32 bounds)"
            )
        for orphan, partner in (("lte", "lts"), ("uts", "ute")):
            if orphan in given and partner not in given:
                raise ValueError(f"{orphan} is given without {partner}: give both or {partner}")
        # LT defaults to [N, N) (none) or [lts, N); UT to [0, 0) (none) or [0, ute)
        defaults = {"lts": N, "lte": N, "uts": 0, "ute": 0}
        device = next(iter(given.values())).device if given else None
        filled = {
            k: given[k]
            if k in given
            else torch.full(shape, defaults[k], dtype=torch.int32, device=device)
            for k in _NAMES
        }
        for name, t in filled.items():
            bad = (t < 0) | (t > N)
            if bool(bad.any()):
                idx = tuple(int(i) for i in bad.nonzero()[0])
                raise ValueError(
                    f"{name}[{idx}]={int(t[idx])} is out of range: row bounds must lie in "
                    f"[0, N={N}]"
                )
        for s, e in (("lts", "lte"), ("uts", "ute")):
            bad = filled[s] > filled[e]
            if bool(bad.any()):
                idx = tuple(int(i) for i in bad.nonzero()[0])
                raise ValueError(
                    f"{s}[{idx}]={int(filled[s][idx])} lies after {e}[{idx}]={int(filled[e][idx])}:"
                    f" an interval [{s}, {e}) needs {s} <= {e}"
                )
        if not isinstance(causal, bool):
            raise TypeError(f"causal={causal!r} must be a bool")
        self.lts, self.lte, self.uts, self.ute = (_to_int32(filled[k]) for k in _NAMES)
        self.causal = causal

    # ------------------------------------------------------------------ basics

    @property
    def n(self) -> int:
        """Sequence length N."""
        return self.lts.shape[-1]

    @property
    def batch(self) -> int:
        """Batch entries B of the mask (1: broadcast over the batch)."""
        return self.lts.shape[0]

    @property
    def heads(self) -> int:
        """Head entries H of the mask (1: broadcast over heads)."""
        return self.lts.shape[1]

    @property
    def nbytes(self) -> int:
        """Bytes of the four int32 vectors: 16 per column per (batch, head) entry."""
        return sum(t.numel() * t.element_size() for t in self.vectors())

    @property
    def device(self) -> torch.device:
        """Device the vectors live on."""
        return self.lts.device

    def vectors(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(lts, lte, uts, ute), each int32 (B, H, N)."""
        return self.lts, self.lte, self.uts, self.ute

    def to(self, device: torch.device | str) -> MaskSpec:
        """The same mask with its vectors on `device`."""
        lts, lte, uts, ute = (t.to(device) for t in self.vectors())
        return MaskSpec(lts, lte, uts, ute, causal=self.causal)

    def __repr__(self) -> str:
        return f"MaskSpec(batch={self.batch}, heads={self.heads}, n={self.n}, causal={self.causal})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MaskSpec):
            return NotImplemented
        return self.causal == other.causal and all(
            torch.equal(a, b) for a, b in zip(self.vectors(), other.vectors())
        )

    __hash__ = None  # type: ignore[assignment]

    def check_compatible(self, batch: int, heads: int, n: int) -> None:
        """Raise ValueError unless this mask fits attention inputs of shape (batch, heads, n, ·)."""
        if self.n != n:
            raise ValueError(f"the mask has N={self.n} columns but the sequence length is {n}")
        if self.batch not in (1, batch):
            raise ValueError(f"the mask has batch {self.batch}; allowed are 1 or {batch}")
        if self.heads not in (1, heads):
            raise ValueError(f"the mask has {self.heads} heads; allowed are 1 or {heads}")

    # ------------------------------------------------------------------ dense views

    def allowed(self, rows: Tensor, cols: Tensor) -> Tensor:
        """Which (row, col) pairs may attend, for given row and column indices.

        Shapes: rows (R,), cols (C,) -> bool (B, H, R, C); True = may attend. Columns must be
        valid indices (< N).
        """
        i = rows.to(self.device).view(1, 1, -1, 1)
        lts, lte, uts, ute = (t[..., cols.to(self.device)].unsqueeze(-2) for t in self.vectors())
        masked = ((i >= lts) & (i < lte)) | ((i >= uts) & (i < ute))
        if self.causal:
            masked = masked | (i < cols.to(self.device).view(1, 1, 1, -1))
        return ~masked

    def to_dense(self) -> Tensor:
        """The dense boolean mask, True where a query row may attend to a key column.

        Shapes: -> (B, H, N, N), the convention of `scaled_dot_product_attention`'s bool mask.
        """
        ar = torch.arange(self.n, device=self.device)
        return self.allowed(ar, ar)

    # ------------------------------------------------------------------ tiles

    def block_summary(self, block_n: int) -> BlockSummary:
        """Min and max of the four vectors per key block of `block_n` columns (8 ints per block).

        The last block holds the N mod block_n remaining columns when N is not a multiple.

        Shapes: -> each field (B, H, ceil(N / block_n)).
        """
        _check_block("block_n", block_n)
        N = self.n
        nb = -(-N // block_n)
        pad = nb * block_n - N

        def blocks(t: Tensor, fill: int) -> Tensor:
            return torch.nn.functional.pad(t, (0, pad), value=fill).view(*t.shape[:2], nb, block_n)

        out = {}
        for s, e in (("lts", "lte"), ("uts", "ute")):
            start, end = getattr(self, s), getattr(self, e)
            nonempty = start < end
            # plain extremes for the fully-masked test (padding cannot make a tile masked)
            out[f"{s}_max"] = blocks(start, 0).amax(-1)
            out[f"{e}_min"] = blocks(end, N).amin(-1)
            # extremes over non-empty intervals for the unmasked test (padding masks nothing)
            out[f"{s}_min"] = blocks(torch.where(nonempty, start, N), N).amin(-1)
            out[f"{e}_max"] = blocks(torch.where(nonempty, end, 0), 0).amax(-1)
        return BlockSummary(**{f: out[f].to(torch.int32) for f in BlockSummary._fields})

    def classify(self, block_m: int, block_n: int) -> Tensor:
        """Label every (query tile, key tile) SKIP, FULL or PARTIAL from the block summary only.

        Query tile a holds rows [a*block_m, min((a+1)*block_m, N)), key tile b the columns
        [b*block_n, min((b+1)*block_n, N)).

        Shapes: -> int8 (B, H, ceil(N / block_m), ceil(N / block_n)).
        """
        _check_block("block_m", block_m)
        s = self.block_summary(block_n)
        N, dev = self.n, self.device
        r0 = torch.arange(0, N, block_m, device=dev).view(-1, 1)
        r1 = (r0 + block_m).clamp(max=N)
        c0 = torch.arange(0, N, block_n, device=dev).view(1, -1)
        c1 = (c0 + block_n).clamp(max=N)

        def per_tile(t: Tensor) -> Tensor:
            return t.unsqueeze(-2)  # (B, H, 1, nk) against rows (nq, 1)

        masked = (r0 >= per_tile(s.lts_max)) & (r1 <= per_tile(s.lte_min))
        masked |= (r0 >= per_tile(s.uts_max)) & (r1 <= per_tile(s.ute_min))
        free = (r1 <= per_tile(s.lts_min)) | (r0 >= per_tile(s.lte_max))
        free &= (r1 <= per_tile(s.uts_min)) | (r0 >= per_tile(s.ute_max))
        if self.causal:
            masked |= r1 <= c0  # the whole tile lies above the diagonal
            free &= r0 >= c1 - 1  # the whole tile lies on or below the diagonal
        labels = torch.full(masked.shape, PARTIAL, dtype=torch.int8, device=dev)
        labels[free] = FULL
        labels[masked] = SKIP
        return labels


def _check_block(name: str, value: int) -> None:
    check_int(name, value, 1)


def exact_tile_labels(allowed: Tensor, block_m: int, block_n: int) -> Tensor:
    """Tile labels from a dense mask: SKIP if no element may attend, FULL if all may, else PARTIAL.

    This is what FlexAttention's `create_block_mask` computes (from all N^2 pairs); FlashMask's
    `classify` must agree with it or be more conservative.

    Shapes: allowed (..., N, N) bool -> int8 (..., ceil(N / block_m), ceil(N / block_n)).
    """
    N = allowed.shape[-1]
    nq, nk = -(-N // block_m), -(-N // block_n)
    a = allowed.to(torch.int32)
    a = torch.nn.functional.pad(a, (0, nk * block_n - N, 0, nq * block_m - N))
    counts = a.view(*a.shape[:-2], nq, block_m, nk, block_n).sum((-3, -1))
    rows = (torch.arange(nq) * block_m).clamp(max=N)
    sizes = ((rows + block_m).clamp(max=N) - rows).view(-1, 1) * (
        ((torch.arange(nk) * block_n + block_n).clamp(max=N) - torch.arange(nk) * block_n).view(
            1, -1
        )
    )
    labels = torch.full(counts.shape, PARTIAL, dtype=torch.int8)
    labels[counts == sizes.to(counts.device)] = FULL
    labels[counts == 0] = SKIP
    return labels


# ====================================================================== builders


def _lengths(name: str, lengths: Sequence[int]) -> list[int]:
    out = [int(x) for x in lengths]
    if not out or any(x < 1 for x in out) or any(int(x) != x for x in lengths):
        raise ValueError(f"{name}={list(lengths)!r} must be a non-empty list of ints >= 1")
    if sum(out) > MAX_N:
        raise ValueError(
            f"{name} sums to N={sum(out)}: allowed is N <= {MAX_N} (the bounds are int32)"
        )
    return out


def _spans(name: str, lengths: Sequence[int]) -> tuple[Tensor, Tensor, int]:
    """Per column, the start and end of its segment; and N."""
    lens = _lengths(name, lengths)
    ends = torch.tensor(lens).cumsum(0)
    starts = ends - torch.tensor(lens)
    reps = torch.tensor(lens)
    return starts.repeat_interleave(reps), ends.repeat_interleave(reps), int(ends[-1])


def _positive(name: str, value: int, minimum: int = 1) -> int:
    return check_int(name, value, minimum)


def _seq_len(n: int) -> int:
    """`n` as a sequence length in [1, MAX_N], checked before any tensor of length n is built."""
    return check_int("n", n, 1, MAX_N)


def full(n: int) -> MaskSpec:
    """Every row sees every column (no interval)."""
    return MaskSpec(n=_seq_len(n))


def causal(n: int) -> MaskSpec:
    """Row i sees columns j <= i."""
    return MaskSpec(n=_seq_len(n), causal=True)


def sliding_window(n: int, window: int) -> MaskSpec:
    """Causal sliding window: row i sees columns j with i - window <= j <= i.

    `window` counts the keys before the query itself, so each row sees at most window + 1 keys;
    column j is masked for rows i > j + window, i.e. LTS_j = min(j + window + 1, N) (Paddle's
    `window_size` convention).
    """
    n, window = _seq_len(n), _positive("window", window, 0)
    window = min(window, n)  # a wider window means the same mask; keeps j + window in int64
    j = torch.arange(n)
    return MaskSpec(lts=(j + window + 1).clamp(max=n), causal=True)


def causal_document(doc_lens: Sequence[int]) -> MaskSpec:
    """Packed documents, causal inside each document: LTS_j = end of j's document."""
    _, ends, _ = _spans("doc_lens", doc_lens)
    return MaskSpec(lts=ends, causal=True)


def document(doc_lens: Sequence[int]) -> MaskSpec:
    """Packed documents, bidirectional inside each: LTS_j = end, UTE_j = start of j's document."""
    starts, ends, _ = _spans("doc_lens", doc_lens)
    return MaskSpec(lts=ends, ute=starts)


def shared_question(samples: Sequence[Sequence[int]]) -> MaskSpec:
    """Shared-question packing (reward modelling / DPO): per sample a question then answers.

    Each sample is `[question_len, answer1_len, answer2_len, ...]`. Causal; every answer sees
    its sample's question and itself but not the other answers; samples do not see each other.
    Question columns: LTS = end of the sample. Answer columns: LTS = end of that answer.
    """
    if not samples:
        raise ValueError("samples=[] must hold at least one [question_len, answer_len, ...]")
    checked = []
    for k, sample in enumerate(samples):
        parts = _lengths(f"samples[{k}]", sample)
        if len(parts) < 2:
            raise ValueError(f"samples[{k}]={list(sample)!r} needs a question and >= 1 answer")
        checked.append(parts)
    total = sum(map(sum, checked))
    if total > MAX_N:  # checked before the (N,) list is built
        raise ValueError(
            f"samples sum to N={total}: allowed is N <= {MAX_N} (the bounds are int32)"
        )
    lts = []
    offset = 0
    for parts in checked:
        end = offset + sum(parts)
        lts += [end] * parts[0]
        pos = offset + parts[0]
        for a in parts[1:]:
            lts += [pos + a] * a
            pos += a
        offset = end
    return MaskSpec(lts=lts, causal=True)


def causal_blockwise(block_lens: Sequence[int]) -> MaskSpec:
    """Causal inside blocks; blocks do not see each other except the last block, which sees all.

    LTS_j = end of j's block, LTE_j = start of the last block (empty for the last block itself).
    """
    _, ends, n = _spans("block_lens", block_lens)
    last = n - _lengths("block_lens", block_lens)[-1]
    return MaskSpec(lts=ends, lte=torch.maximum(ends, torch.full_like(ends, last)), causal=True)


def prefix_lm_causal(n: int, prefix: int) -> MaskSpec:
    """Prefix LM: the first `prefix` tokens see each other bidirectionally; the rest is causal.

    Non-causal flag; prefix columns are free; column j >= prefix has UT = [0, j).
    """
    n, prefix = _seq_len(n), _positive("prefix", prefix, 0)
    if prefix > n:
        raise ValueError(f"prefix={prefix} must be <= n={n}")
    j = torch.arange(n)
    return MaskSpec(ute=torch.where(j < prefix, 0, j))


def prefix_lm_document(doc_lens: Sequence[int], prefix_lens: Sequence[int]) -> MaskSpec:
    """Packed prefix-LM documents: bidirectional prefix, causal rest, nothing across documents.

    Per document d over [s_d, e_d) with prefix p_d: LTS_j = e_d; UTE_j = s_d for prefix columns
    and j for the others (UTS = 0).
    """
    starts, ends, _ = _spans("doc_lens", doc_lens)
    lens = _lengths("doc_lens", doc_lens)
    prefix = [int(p) for p in prefix_lens]
    if len(prefix) != len(lens) or any(p < 0 or p > d for p, d in zip(prefix, lens)):
        raise ValueError(
            f"prefix_lens={list(prefix_lens)!r} needs one int in [0, doc_len] per document "
            f"(doc_lens={lens})"
        )
    j = torch.arange(len(starts))
    plen = torch.tensor(prefix).repeat_interleave(torch.tensor(lens))
    return MaskSpec(lts=ends, ute=torch.where(j < starts + plen, starts, j))


def global_sliding_window(n: int, num_global: int, window: int) -> MaskSpec:
    """Bidirectional sliding window plus global tokens (Longformer/BigBird style).

    Row i sees column j iff |i - j| <= window, or i < num_global, or j < num_global. Columns
    j >= num_global: LT = [min(j + window + 1, N), N), UT = [num_global, max(num_global,
    j - window)).
    """
    n = _seq_len(n)
    g, window = _positive("num_global", num_global, 0), _positive("window", window, 0)
    window = min(window, n)  # a wider window means the same mask; keeps j + window in int64
    if g > n:
        raise ValueError(f"num_global={g} must be <= n={n}")
    j = torch.arange(n)
    is_global = j < g
    lts = torch.where(is_global, n, (j + window + 1).clamp(max=n))
    ute = torch.where(is_global, 0, (j - window).clamp(min=g))
    uts = torch.where(is_global, 0, g)
    return MaskSpec(lts=lts, lte=torch.full_like(j, n), uts=uts, ute=ute)


def qk_sparse(n: int, drop_rows: tuple[int, int], drop_cols: tuple[int, int]) -> MaskSpec:
    """Causal attention with a contiguous span of queries and one of keys dropped.

    Dropped key columns [c0, c1) are masked for every row; dropped query rows [r0, r1) are
    masked in every column, so they are fully masked rows (zero output and zero gradient).
    """
    # DEVIATION: the paper's figure also shows a QK-sparse mask (noted from memory, not checked
    # against the PDF); we build it for one contiguous span of dropped queries and of keys, the
    # shape two intervals per column can hold.
    n = _seq_len(n)
    (r0, r1), (c0, c1) = drop_rows, drop_cols
    if not (0 <= r0 <= r1 <= n):
        raise ValueError(f"drop_rows={drop_rows!r} must satisfy 0 <= start <= end <= n={n}")
    if not (0 <= c0 <= c1 <= n):
        raise ValueError(f"drop_cols={drop_cols!r} must satisfy 0 <= start <= end <= n={n}")
    j = torch.arange(n)
    dropped = (j >= c0) & (j < c1)
    # kept columns: rows [max(r0, j), r1) (rows < j are masked by causality anyway), empty
    # ([j, j)) once j >= r1; dropped columns: every row from the diagonal on
    lts = torch.where(dropped, j, j.clamp(min=r0))
    lte = torch.where(dropped, n, lts.clamp(min=r1))
    return MaskSpec(lts=lts, lte=lte, causal=True)


def random_eviction(evict_rows: Tensor | Sequence[int]) -> MaskSpec:
    """Causal attention where key j is evicted from the cache from row `evict_rows[j]` on.

    Column j is masked for rows >= evict_rows[j] (LTS_j = evict_rows[j], which must lie in
    [j + 1, N]; N means never evicted).
    """
    # DEVIATION: the random-eviction mask of the paper's figure is noted from memory; we take
    # the eviction row per key as an input (data.py draws it at random).
    t = _as_vector("evict_rows", evict_rows)
    bad = t < torch.arange(1, t.shape[-1] + 1)
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"evict_rows[{idx[-1]}]={int(t[idx])} must be >= {idx[-1] + 1} (a key is evicted "
            "only after its own row has seen it)"
        )
    return MaskSpec(lts=t, causal=True)


def stack(masks: Sequence[MaskSpec], dim: int = 0) -> MaskSpec:
    """Stack single-entry masks along the batch (dim=0) or head (dim=1) axis.

    Every mask must have the same N and causal flag and one entry along `dim`.
    """
    if not masks:
        raise ValueError("masks=[] must hold at least one MaskSpec")
    if dim not in (0, 1):
        raise ValueError(f"dim={dim!r}: allowed are 0 (batch) or 1 (heads)")
    flags = {m.causal for m in masks}
    ns = {m.n for m in masks}
    if len(flags) > 1 or len(ns) > 1:
        raise ValueError(f"masks differ in causal flags {flags} or lengths {ns}")
    vecs = [torch.cat([m.vectors()[k] for m in masks], dim=dim) for k in range(4)]
    return MaskSpec(*vecs, causal=masks[0].causal)
