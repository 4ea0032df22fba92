"""Our NRGBoost against the official `nrgboost` package (PyPI 0.0.3): fit time, sampling
throughput and held-out quality, same data and settings, side by side in one process.

Both fit with the official defaults except the sizes below (trees, leaves, pool); one thread
each (OMP_NUM_THREADS=1 for the official C/OpenMP sampler, which is also given
num_threads=1; our kernels are single-threaded). Each repetition fits both, in alternating
order, with the repetition's seed; medians over repetitions are reported. A warm-up fit of each
runs first, so first-time compilation is excluded; the official package still rebuilds (and
numba-compiles) its split-finder closures inside every fit, which is part of its fit time.

Fit time at every size in `--trees` (default 50, 100 and 200). Held-out quality, the same
estimator for both models:

- every table: the pseudo-log-likelihood, the mean over test rows of sum_d log p(x_d | rest),
  each conditional exact by either package's slice inference, over the columns on which both
  packages use the same bins (`pll_columns`; the official package puts a bin on every integer
  from a column's min to its max, ours only on the values seen);
- moons (a 2-D toy on the 64x64 grid): also the exact held-out log-likelihood of both models
  (the official model's energies are normalised by enumerating its grid);
- digits (65 columns): also the held-out accuracy of predicting the digit;
- diabetes: a table no experiment uses ("unseen"), every column coded as integers by its
  training quantiles (at most QUANT_BINS codes) so that both packages share the grid.

    iclr25 bench nrgboost                   # or: python benchmarks/bench_nrgboost.py
    iclr25 bench nrgboost --reps 5 --trees 50,100,200
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before the official package loads OpenMP

import argparse
import contextlib
import io
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.papers.nrgboost import NRGBoost, load_table, sample_toy, toy_pmf

OUT = Path(__file__).resolve().parent / "results" / "nrgboost.json"
QUANT_BINS = 32
"""Quantile bins per column of the coded diabetes table."""


def _official():
    try:
        import nrgboost
    except ImportError:
        return None
    return nrgboost


@contextlib.contextmanager
def _quiet():
    """The official package prints progress bars and warnings."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        with contextlib.redirect_stdout(io.StringIO()):
            yield


def _split(X, rng):
    """A random 80/20 train/test split of a DataFrame."""
    idx = rng.permutation(len(X))
    k = len(idx) // 5
    return X.iloc[idx[k:]].reset_index(drop=True), X.iloc[idx[:k]].reset_index(drop=True)


def _data(name: str, rng):
    import pandas as pd

    if name == "moons":
        pmf = toy_pmf("moons")
        train, test = sample_toy(pmf, 5000, rng), sample_toy(pmf, 2000, rng)
        cols = ["x0", "x1"]
        return pd.DataFrame(train.astype(int), columns=cols), pd.DataFrame(
            test.astype(int), columns=cols
        )
    if name == "digits":
        return _split(load_table("digits").X, rng)
    if name == "diabetes":
        # every column (target too) coded as integers by its training quantiles, so that both
        # packages put one bin on each integer and share the grid
        train, test = _split(load_table("diabetes").X, rng)
        out_train, out_test = {}, {}
        for c in train.columns:
            edges = np.unique(np.quantile(train[c], np.linspace(0, 1, QUANT_BINS + 1)[1:-1]))
            a = np.searchsorted(edges, train[c].to_numpy(), side="right")
            b = np.searchsorted(edges, test[c].to_numpy(), side="right")
            used = np.unique(a)  # drop empty intervals (tied values): no gaps in the codes
            out_train[c] = np.searchsorted(used, a)
            out_test[c] = np.minimum(np.searchsorted(used, b), used.size - 1)
        return pd.DataFrame(out_train), pd.DataFrame(out_test)
    raise SystemExit(f"--datasets: {name!r} is unknown; choose from moons, digits, diabetes")


def _ours(train, settings, seed):
    model = NRGBoost(
        n_trees=settings["trees"],
        max_leaves=settings["leaves"],
        n_model_samples=settings["pool"],
        burn_in=settings["burn_in"],
        n_chains=16,
        random_state=seed,
    )
    return model.fit(train)


def _theirs(official, train, settings, seed):
    params = {
        "num_trees": settings["trees"],
        "max_leaves": settings["leaves"],
        "num_model_samples": settings["pool"],
        "burn_in": settings["burn_in"],
        "num_chains": 16,
        "shrinkage": 0.15,
        "max_ratio_in_leaf": 2,
        "p_refresh": 0.1,
        "num_threads": 1,
    }
    with _quiet():
        return official.NRGBooster.fit(official.Dataset(train), params, seed=seed)


def _their_loglik(model, train, test) -> float:
    """Exact held-out log-likelihood of an official model on a 2-column integer grid."""
    import pandas as pd
    from scipy.special import logsumexp

    axes = [np.arange(train[c].min(), train[c].max() + 1) for c in train.columns]
    grid = pd.DataFrame(
        np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(axes)),
        columns=train.columns,
    )
    with _quiet():
        logz = logsumexp(model.predict(grid))
        return float(np.mean(model.predict(test)) - logz)


def _their_accuracy(model, test) -> float:
    with _quiet():
        logits = model.predict(test, "target")
    classes = test["target"].cat.categories
    return float(np.mean(np.asarray(classes[np.argmax(logits, 1)]) == test["target"].to_numpy()))


def _shared_columns(ours, theirs, test) -> np.ndarray:
    """Columns on which both packages use the same bins and code every test row alike.

    Both put one bin on every integer of a column, but the official package spans min..max
    of the training values and ours only the values seen (a gap in a column's values is one
    bin less for us), so the conditional pmfs of such columns live on different grids.
    """
    with _quiet():
        their_codes = theirs.transform(test)
        their_cards = np.array([d.cardinality for d in theirs.booster.domain])
    our_codes = ours.discretizer_.transform(test)
    same = (their_cards == ours.domain_.cards) & np.all(their_codes == our_codes, axis=0)
    return np.flatnonzero(same)


def _our_pll(model, test, cols) -> float:
    """Held-out pseudo-log-likelihood: mean over test rows of sum_{d in cols} log p(x_d | rest)."""
    codes = model.discretizer_.transform(test)
    rows = np.arange(codes.shape[0])
    total = np.zeros(codes.shape[0])
    for d in cols:
        logits = model._slice(codes, int(d))[-1]
        total += logits[rows, codes[:, d]] - logsumexp(logits, axis=1)
    return float(np.mean(total))


def _their_pll(model, test, cols) -> float:
    """The same for an official model, from its normalised slice predictions."""
    with _quiet():
        codes = model.transform(test)
        rows = np.arange(codes.shape[0])
        total = np.zeros(codes.shape[0])
        for d in cols:
            logp = model.booster.predict(codes, slice_dims=[int(d)], normalize=True)
            total += logp[rows, codes[:, d]]
    return float(np.mean(total))


def _tree_list(text: str) -> list[int]:
    try:
        trees = [int(t) for t in text.split(",")]
    except ValueError:
        trees = []
    if not trees or min(trees) < 1:
        raise SystemExit(f"--trees={text!r}: give positive tree counts separated by commas")
    return trees


def _quality(name: str, model, train, test, who: str, cols) -> dict:
    """Held-out quality of one fitted model: pseudo-log-likelihood on the shared columns, and
    the exact log-likelihood (moons) or the digit accuracy (digits)."""
    ours = who == "ours"
    out = {"pll": _our_pll(model, test, cols) if ours else _their_pll(model, test, cols)}
    if name == "moons":
        out["quality"] = model.log_likelihood(test) if ours else _their_loglik(model, train, test)
    elif name == "digits":
        if ours:
            pred = model.predict(test, "target")
            out["quality"] = float(np.mean(pred == test["target"].to_numpy()))
        else:
            out["quality"] = _their_accuracy(model, test)
    return out


QUALITY = {"moons": "heldout_loglik", "digits": "heldout_accuracy"}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_nrgboost", description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="moons,digits,diabetes")
    p.add_argument("--trees", default="50,100,200", help="boosting rounds, comma-separated")
    p.add_argument("--leaves", type=int, default=32, help="max leaves per tree")
    p.add_argument("--pool", type=int, default=20_000, help="model-sample pool size")
    p.add_argument("--burn-in", type=int, default=100)
    p.add_argument("--reps", type=int, default=3, help="repetitions (median reported)")
    p.add_argument("--samples", type=int, default=500, help="rows drawn when timing sampling")
    p.add_argument("--steps", type=int, default=100, help="Gibbs sweeps per drawn row")
    p.add_argument("--threads", type=int, default=1, help="threads (set explicitly; 1)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size, our side only")
    args = p.parse_args(argv)
    load_before = load_average()
    if args.threads != 1:
        raise SystemExit("--threads: only 1 is supported (both implementations single-threaded)")
    if args.smoke:
        args.datasets, args.trees, args.leaves, args.pool, args.reps = "moons", "3", 8, 1000, 1
        args.burn_in, args.samples, args.steps = 10, 20, 5
    tree_counts = _tree_list(args.trees)
    official = None if args.smoke else _official()
    base = {"leaves": args.leaves, "pool": args.pool, "burn_in": args.burn_in}
    rows = []
    for name in args.datasets.split(","):
        train, test = _data(name, np.random.default_rng(0))
        warm = {**base, "trees": 2, "pool": 500}
        warm_ours = _ours(train, warm, 0)
        cols = np.arange(train.shape[1])
        if official is not None:
            cols = _shared_columns(warm_ours, _theirs(official, train, warm, 0), test)
        for n_trees in tree_counts:
            settings = {**base, "trees": n_trees}
            res = {who: {"fit": [], "pll": [], "quality": [], "sample": []} for who in WHO}
            for rep in range(args.reps):
                order = WHO if rep % 2 == 0 else WHO[::-1]
                for who in order:
                    if who == "official" and official is None:
                        continue
                    t0 = time.perf_counter()
                    if who == "ours":
                        model = _ours(train, settings, rep)
                    else:
                        model = _theirs(official, train, settings, rep)
                    res[who]["fit"].append(time.perf_counter() - t0)
                    for key, value in _quality(name, model, train, test, who, cols).items():
                        res[who][key].append(value)
                    if args.samples:
                        t0 = time.perf_counter()
                        if who == "ours":
                            model.sample(args.samples, random_state=rep, n_steps=args.steps)
                        else:
                            with _quiet():
                                model.sample(
                                    args.samples, num_steps=args.steps, num_threads=1, seed=rep
                                )
                        res[who]["sample"].append(args.samples / (time.perf_counter() - t0))
            rows.append(_row(name, n_trees, len(cols), res))
    return bench_result(
        "nrgboost_vs_official",
        "official nrgboost 0.0.3 (PyPI), same data and settings"
        + (" (skipped in --smoke)" if official is None else ""),
        {**vars(args), "threads": 1},
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


WHO = ("ours", "official")


def _row(name: str, n_trees: int, n_cols: int, res: dict) -> dict:
    row = {
        "dataset": name,
        "trees": n_trees,
        "pll_columns": n_cols,
        "quality": QUALITY.get(name, "-"),
    }
    for who in WHO:
        r = res[who]
        if not r["fit"]:
            continue
        row[f"{who}_fit_s"] = round(float(np.median(r["fit"])), 3)
        row[f"{who}_pll"] = round(float(np.mean(r["pll"])), 4)
        row[f"{who}_pll_sd"] = round(float(np.std(r["pll"])), 4)
        if r["quality"]:
            row[f"{who}_quality"] = round(float(np.mean(r["quality"])), 4)
            row[f"{who}_quality_sd"] = round(float(np.std(r["quality"])), 4)
        if r["sample"]:
            row[f"{who}_samples_per_s"] = round(float(np.median(r["sample"])), 1)
    if res["official"]["fit"]:
        row["fit_speedup"] = round(row["official_fit_s"] / row["ours_fit_s"], 2)
        if res["official"]["sample"]:
            row["sampling_speedup"] = round(
                row["ours_samples_per_s"] / row["official_samples_per_s"], 2
            )
    return row


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
