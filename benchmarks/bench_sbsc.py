"""sbsc's sandbox: start-up and per-execution overhead, forkserver against a fresh interpreter.

Rows (medians of interleaved repetitions, `core.bench.interleaved_medians`):

* `startup`: seconds to start a forkserver and have it ready, without and with sympy
  pre-imported (the cost a fresh interpreter pays for every program that imports sympy).
* `exec`: seconds per program and programs per second, for a trivial program (`print(1)`) and
  one that uses sympy, in the forkserver (sympy pre-imported before the seccomp filter) and in a
  fresh interpreter per program (`mode="fresh"`); the ratio is fresh / forkserver.

The programs run single-threaded in a child process; the parent only waits, so the thread
setting is 1. Run it on an idle machine (load under 0.5): the load average is recorded.

    iclr25 bench sbsc          # or: python benchmarks/bench_sbsc.py [--reps 7]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows

OUT = Path(__file__).resolve().parent / "results" / "sbsc.json"
PROGRAMS = {
    "print": "print(1)",
    "sympy": "import sympy\nprint(sympy.factorint(2**32 + 1))",
}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_sbsc", description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=7, help="timed repetitions (median reported)")
    p.add_argument("--per-rep", type=int, default=10, help="programs per timed call")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="one repetition, no sympy")
    args = p.parse_args(argv)
    from iclr25.papers.sbsc.sandbox import DEFAULT_PREIMPORT, Sandbox

    load_before = load_average()
    programs = {"print": PROGRAMS["print"]} if args.smoke else PROGRAMS
    reps, per = (1, 2) if args.smoke else (args.reps, args.per_rep)
    heavy = () if args.smoke else ("sympy",)
    rows = []

    def start(pre):
        def fn():
            with Sandbox(preimport=(*DEFAULT_PREIMPORT, *pre)) as sb:
                assert sb.run("print(1)").ok

        return fn

    t = interleaved_medians({"plain": start(()), "sympy": start(heavy)}, reps=reps)
    for name, s in t.items():
        rows.append({"cell": "startup", "mode": "forkserver", "preimport": name, "s": round(s, 4)})

    fork = Sandbox(preimport=(*DEFAULT_PREIMPORT, *heavy))
    fresh = Sandbox(mode="fresh")
    try:
        for prog, code in programs.items():
            for sb in (fork, fresh):
                assert sb.run(code).ok, (prog, sb.mode)

            def many(sb, code=code):
                return lambda: [sb.run(code) for _ in range(per)]

            med = interleaved_medians({"forkserver": many(fork), "fresh": many(fresh)}, reps=reps)
            for mode, s in med.items():
                rows.append(
                    {
                        "cell": "exec",
                        "mode": mode,
                        "program": prog,
                        "s_per_exec": round(s / per, 5),
                        "per_s": round(per / s, 2),
                        "ratio": round(med["fresh"] / med[mode], 2),
                    }
                )
    finally:
        fork.close()
        fresh.close()
    settings = {
        "threads": 1,
        "reps": reps,
        "programs_per_call": per,
        "seccomp": True,
        "bwrap": fork.info["bwrap"],
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    return bench_result(
        "sbsc_sandbox",
        "a fresh interpreter per program (mode='fresh'), same limits and filter",
        settings,
        rows,
        out=args.out or None,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main())
