"""The `iclr25` command line.

Verbs: list, show, run, reproduce, report, validate, env, new, bench. `reproduce` is the main job:
every paper's experiments at the quick (or full) preset, then the HTML report, then a verdict
table. Bad input exits with code 2 and one line on stderr, before anything is written.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from iclr25.core.errors import UsageError

log = logging.getLogger("iclr25")

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _papers_arg(text: str | None) -> list[str] | None:
    from iclr25.core.registry import check_slug

    if text is None:
        return None
    slugs = [s.strip() for s in text.split(",") if s.strip()]
    if not slugs:
        raise UsageError(f"--papers {text!r}: the list is empty")
    return [check_slug(s) for s in slugs]


# ---------------------------------------------------------------- verbs


def cmd_list(args: argparse.Namespace) -> int:
    from iclr25.papers import PAPERS

    rows = [
        (
            f"{slug}.{exp}" + (" *" if i == 0 else ""),
            entry.title if i == 0 else "",
            ",".join(entry.extras) or "-",
        )
        for slug, entry in PAPERS.items()
        for i, exp in enumerate(entry.experiments)
    ]
    print(_table(rows, ("experiment (* = headline)", "paper", "extras")))
    print("\npresets: smoke (<= 3 s), quick (<= 60 s), full (<= 30 min) on 2 idle cores")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from iclr25.core import registry
    from iclr25.core.config import describe

    exp = registry.get_experiment(args.experiment)
    cfg = exp.preset(args.preset)
    paper = registry.get_paper(exp.slug)
    print(f"{paper.title}\n{paper.authors}. {paper.venue}. {paper.url}")
    if paper.code:
        print(f"official code: {paper.code}")
    if paper.summary:
        print(f"\n{paper.summary}")
    print(f"\nexperiment {exp.name}: {exp.summary}")
    print(f"seeds per preset: {dict(exp.seeds)}")
    if exp.claims:
        print("\nclaims:")
        for c in exp.claims:
            ctrl = c.control if isinstance(c.control, int | float) else c.control_key
            how = (
                f"|diff| < {c.margin:g}"
                if c.kind == "equivalent"
                else f"{c.direction} by >= {c.min_effect:g}"
            )
            print(
                f"  {c.id}: {c.statement}\n    {c.treatment_key} vs {ctrl} ({how}); "
                f"paper: {c.paper_value or '-'}"
            )
    print(f"\nconfig ({args.preset} preset):")
    rows = [(k, t, repr(v), d) for k, t, v, d in describe(cfg)]
    print(_table(rows, ("key", "type", "value", "meaning")))
    return 0


def _print_verdicts(groups) -> None:
    from iclr25.core.report import verdict_table

    rows = verdict_table(groups)
    if rows:
        print(_table(rows, ("experiment", "run", "claim", "ours", "n", "verdict")))


def _run_args(args: argparse.Namespace) -> dict:
    return dict(
        jobs=args.jobs,
        backend=args.backend,
        address=args.address,
        threads=args.threads,
        out=args.out,
    )


def cmd_run(args: argparse.Namespace) -> int:
    from iclr25.core.report import RunGroup
    from iclr25.core.runner import prestart_workers, run_experiment

    if args.backend == "local":
        prestart_workers([args.experiment], args.jobs, args.threads)
    rep = run_experiment(
        args.experiment,
        preset=args.preset,
        seeds=args.seeds,
        overrides=args.overrides,
        resume=not args.no_resume,
        **_run_args(args),
    )
    print(f"results: {rep.plan.folder}")
    group = RunGroup(rep.plan.experiment, rep.plan.variant, rep.results)
    print(
        _table(
            [(k, d, iv.fmt(), iv.n) for k, d, iv in group.metric_table()],
            ("metric", "better", "mean ± 95% CI", "n"),
        )
    )
    if rep.plan.experiment.claims:
        print()
        _print_verdicts([group])
    return 1 if rep.failed else 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from iclr25.core import registry
    from iclr25.core.report import RunGroup, build_html
    from iclr25.core.results import check_out_dir
    from iclr25.core.runner import plan_run, prestart_workers, run_experiment

    slugs = _papers_arg(args.papers) or registry.slugs()
    names = [n for s in slugs for n in registry.experiment_names(s)]
    if args.backend == "local":
        prestart_workers(names, args.jobs, args.threads)
    for n in names:  # validate everything before running anything
        plan_run(n, args.preset, out=args.out)
    report = Path(args.out) / "report" if args.report is None else args.report
    check_out_dir(report, "--report", below=_REPORT_DEEPEST)
    groups, failed = [], 0
    for n in names:
        log.info("== %s [%s]", n, args.preset)
        rep = run_experiment(n, preset=args.preset, **_run_args(args))
        failed += len(rep.failed)
        groups.append(RunGroup(rep.plan.experiment, rep.plan.variant, rep.results))
    out = Path(args.report) if args.report else Path(args.out) / "report"
    index = build_html(Path(args.out), out, slugs, published=Path(args.published))
    print()
    _print_verdicts(groups)
    print(f"\nHTML report: {index}")
    if failed:
        print(f"{failed} seed(s) failed: see the result files for tracebacks", file=sys.stderr)
    return 1 if failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    from iclr25.core.report import build_html, canonical, check_results, collect, update_docs

    slugs = _papers_arg(args.papers)
    root = Path(getattr(args, "from"))
    if not root.is_dir():
        raise UsageError(f"--from {str(root)!r}: no such folder of results")
    docs = Path(args.docs)
    if args.check:
        problems = check_results(root)
        for p in problems:
            print(f"result: {p}")
        if problems:
            print(
                "regenerate these results from a clean checkout of a commit on main: "
                "`iclr25 reproduce --preset full --out results`",
                file=sys.stderr,
            )
        stale = update_docs(root, docs, check=True, slugs=slugs)
        for p in stale:
            print(f"stale: {p}")
        if stale:
            print("run `iclr25 report` to regenerate", file=sys.stderr)
        return 1 if stale or problems else 0
    out = Path(args.out) if args.out else root / "report"
    index = build_html(root, out, slugs, published=Path(args.published))
    print(f"HTML report: {index}")
    if docs.is_dir():
        for p in update_docs(root, docs, slugs=slugs):
            print(f"updated: {p}")
    _print_verdicts(list(canonical(collect(root, slugs)).values()))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from iclr25.core import registry
    from iclr25.core.config import from_dict, to_dict
    from iclr25.core.experiment import PRESETS

    problems = 0
    for name in registry.experiment_names():
        try:
            exp = registry.get_experiment(name)
            for p in PRESETS:
                cfg = exp.preset(p)
                if from_dict(exp.config, to_dict(cfg)) != cfg:
                    raise ValueError(f"preset {p} does not survive a JSON round trip")
            print(f"ok      {name}")
        except Exception as err:
            problems += 1
            print(f"FAILED  {name}: {err}")
    return 1 if problems else 0


def cmd_new(args: argparse.Namespace) -> int:
    from iclr25.core.scaffold import new_paper

    for path in new_paper(args.slug, args.title, args.root):
        print(f"wrote {path}")
    print(
        f"next: docs/contributing.md; check with `make test` (the toy claim {args.slug}.toy passes)"
    )
    return 0


def cmd_env(args: argparse.Namespace) -> int:
    from iclr25.core.envinfo import envinfo

    print(json.dumps(envinfo(), indent=1))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import importlib.util

    path = Path(args.benchmarks) / f"bench_{args.name}.py"
    if not path.exists():
        have = sorted(
            p.stem.removeprefix("bench_") for p in Path(args.benchmarks).glob("bench_*.py")
        )
        raise UsageError(f"unknown benchmark {args.name!r} (valid: {', '.join(have) or 'none'})")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    result = module.main(args.args)
    print(json.dumps(result, indent=1))
    return 0


# ---------------------------------------------------------------- parser


_REPORT_DEEPEST = "figures/" + "x" * 120 + ".png"
"""A generous stand-in for the longest path the HTML report writes under its folder."""


def _nonempty(text: str) -> str:
    """A path argument that is not '' (which would silently mean the current folder)."""
    if not text:
        raise argparse.ArgumentTypeError("'' is not a path")
    return text


def _report_out(text: str) -> str:
    """`report --out`: a folder that can hold the report (checked before anything runs)."""
    from iclr25.core.results import check_out_dir

    try:
        check_out_dir(text, "folder", below=_REPORT_DEEPEST)
    except UsageError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(EXIT_USAGE, f"iclr25: error: {message} (see `{self.prog} --help`)\n")


def _add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="runs", help="root folder of the result store")
    p.add_argument("--jobs", type=int, default=1, help="seeds run in parallel")
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--address", default=None, help="Ray cluster address (with --backend ray)")
    p.add_argument("--threads", type=int, default=None, help="torch threads per job")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `iclr25`."""
    from iclr25 import __version__

    parser = _Parser(prog="iclr25", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings on stderr")
    sub = parser.add_subparsers(dest="verb", required=True, parser_class=_Parser)

    sub.add_parser("list", help="papers and experiments").set_defaults(fn=cmd_list)

    p = sub.add_parser("show", help="paper card, claims and resolved config")
    p.add_argument("experiment")
    p.add_argument("--preset", default="quick")
    p.set_defaults(fn=cmd_show)

    p = sub.add_parser("run", help="run one experiment over seeds")
    p.add_argument("experiment")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    p.add_argument("--preset", default="quick")
    p.add_argument("--seeds", default=None, help="e.g. 0-4 or 0,3,7 (default: the preset's)")
    p.add_argument("--no-resume", action="store_true", help="rerun seeds that already have results")
    _add_backend(p)
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("reproduce", help="THE main job: every paper, then the report")
    p.add_argument("--preset", default="quick", choices=("smoke", "quick", "full"))
    p.add_argument("--papers", default=None, help="comma-separated slugs (default: all)")
    p.add_argument("--report", default=None, help="report folder (default: <out>/report)")
    p.add_argument(
        "--published", default="results", help="committed results shown beside this run's"
    )
    _add_backend(p)
    p.set_defaults(fn=cmd_reproduce)

    p = sub.add_parser("report", help="HTML report and docs tables from stored results")
    p.add_argument("--from", default="results", type=_nonempty, help="result store to read")
    p.add_argument(
        "--out", default=None, type=_report_out, help="report folder (default: <from>/report)"
    )
    p.add_argument("--docs", default="docs", help="docs folder whose pages get the tables")
    p.add_argument("--papers", default=None)
    p.add_argument("--published", default="results", help="committed results shown beside these")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if the docs pages are stale or a stored result does not match the current "
        "preset, a commit on this branch and a clean tree",
    )
    p.set_defaults(fn=cmd_report)

    sub.add_parser("validate", help="every preset of every experiment builds").set_defaults(
        fn=cmd_validate
    )
    sub.add_parser("env", help="versions, threads, git state").set_defaults(fn=cmd_env)

    p = sub.add_parser("new", help="skeleton of a new paper (package, experiment, tests, docs)")
    p.add_argument("slug", help="lower snake case, e.g. robust_sfm")
    p.add_argument("--title", default="", help="the paper's title")
    p.add_argument("--root", default=".", help="the checkout to write into")
    p.set_defaults(fn=cmd_new)

    p = sub.add_parser("bench", help="run benchmarks/bench_<name>.py")
    p.add_argument("name")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.add_argument("--benchmarks", default="benchmarks", help="folder of benchmark scripts")
    p.set_defaults(fn=cmd_bench)
    return parser


def _sigterm(signum, frame):  # a kill becomes a clean interrupt: finished seeds stay
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `iclr25` command; returns the exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # `run exp --preset smoke a=1`: overrides after an option arrive as extras
    if args.verb == "run" and all("=" in e and not e.startswith("-") for e in extra):
        args.overrides = [*args.overrides, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(message)s",
        stream=sys.stderr,
    )
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        return args.fn(args)
    except UsageError as err:
        print(f"iclr25: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("iclr25: interrupted; finished seeds are kept, rerun to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)
