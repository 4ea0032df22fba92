"""Figures of the speed experiment, drawn from stored results only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import figure_path, pyplot, save

_KEY = re.compile(
    r"^(?P<method>[a-z_]+)/(?P<what>ms|peak_mb|active_frac)_(?P<kind>[a-z_]+)_n(?P<n>\d+)$"
)


def _series(results: Sequence[Any], method: str, what: str) -> dict[str, dict[int, float]]:
    """{kind: {N: median over seeds}} of `<method>/<what>_<kind>_n<N>`."""
    acc: dict[tuple[str, int], list[float]] = {}
    for r in results:
        for key, val in r.metrics.items():
            m = _KEY.match(key)
            if m and m["method"] == method and m["what"] == what and val is not None:
                acc.setdefault((m["kind"], int(m["n"])), []).append(float(val))
    out: dict[str, dict[int, float]] = {}
    for (kind, n), vals in acc.items():
        out.setdefault(kind, {})[n] = float(np.median(vals))
    return out


def speed_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Time and peak memory against N per mask; time against active tiles."""
    plt = pyplot()
    if not results:
        return []
    paths = []
    for what, label, name in (
        ("ms", "forward time (ms, median)", "time"),
        ("peak_mb", "peak memory of one forward (MiB)", "memory"),
    ):
        fig, ax = plt.subplots(figsize=(6, 3.8))
        styles = (("flashmask", "-o"), ("gather", "-.x"), ("numba", "-.x"))
        for method, style in (*styles, ("dense", "--s"), ("flex", ":^")):
            for i, (kind, pts) in enumerate(sorted(_series(results, method, what).items())):
                ns = sorted(pts)
                ax.loglog(ns, [pts[n] for n in ns], style, color=f"C{i}", label=f"{method} {kind}")
        ax.set_xlabel("sequence length N")
        ax.set_ylabel(label)
        ax.legend(fontsize=6, ncol=2)
        paths.append(save(fig, figure_path(out_dir, "flashmask.speed", name)))
    # time against active tiles, every timed method on one plot (colour: method, marker: mask)
    frac = _series(results, "flashmask", "active_frac")
    backend = results[0].config.get("backend", "gather")
    other = "gather" if backend == "numba" else "numba"
    names = {"flashmask": f"FlashMask ({backend})", other: f"FlashMask ({other})"}
    names |= {"dense": "dense-mask SDPA", "flex": "FlexAttention (compiled)"}
    markers = dict(zip(sorted(frac), "osD^v<>"))
    fig, ax = plt.subplots(figsize=(6, 4))
    for c, (method, name) in enumerate(names.items()):
        ms = _series(results, method, "ms")
        for kind in sorted(ms):
            ns = sorted(n for n in ms[kind] if n in frac.get(kind, {}))
            tiles = [frac[kind][n] * n * n for n in ns]
            ax.loglog(tiles, [ms[kind][n] for n in ns], markers.get(kind, "o"), color=f"C{c}",
                      alpha=0.8)  # fmt: skip
        if ms:
            ax.plot([], [], "o", color=f"C{c}", label=name)
    for kind, mk in markers.items():
        ax.plot([], [], mk, color="0.5", label=kind)
    ax.set_xlabel("active tile area (active fraction x N^2)")
    ax.set_ylabel("forward ms (median over seeds)")
    ax.legend(fontsize=6, ncol=2)
    paths.append(save(fig, figure_path(out_dir, "flashmask.speed", "active_tiles")))
    return paths
