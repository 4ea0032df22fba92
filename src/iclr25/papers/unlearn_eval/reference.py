"""Slow, obviously-correct references for the tests.

- `es_linear_scan`: the smallest prefix length m in [l, r) whose greedy completion reproduces the
  rest (r when none does), one item at a time: what the official bisection finds when the
  match is monotone in m.
- `lcs_recursive`: the longest common subsequence by the textbook recursion.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence


def es_linear_scan(low: int, high: int, matches: Callable[[int], bool]) -> int:
    """The first m = low, low + 1, ... < high with matches(m), else high."""
    for m in range(low, high):
        if matches(m):
            return m
    return high


def lcs_recursive(a: Sequence, b: Sequence) -> int:
    """LCS length by memoised recursion on the last elements."""

    @functools.cache
    def f(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return 0
        if a[i - 1] == b[j - 1]:
            return f(i - 1, j - 1) + 1
        return max(f(i - 1, j), f(i, j - 1))

    return f(len(a), len(b))
