"""self_recognition's judge: seconds per judged prompt, batched against one prompt at a time, and
the cost of the interventions (output steering, colouring, projection ablation).

Rows (medians of interleaved repetitions, `core.bench.interleaved_medians`), one per cell, on
the same `--prompts` individual prompts (half own, half human texts of `--tokens` tokens):

* `margin_batched`: the Yes-No margins of all prompts in one `answer_margin` call (the hf
  backend's chunks), what every experiment does;
* `margin_single`: one call per prompt;
* `margin_whole_prompts`: the hf backend's `next_token_logits` before its prefix reuse
  (each chunk's whole prompts left-padded in one pass), reproduced here;
* `steer`: output steering (k v added at every position of one block) of all prompts;
* `colour`: colouring (k v added at the judged text's tokens only);
* `ablate`: a direction projected out at one block.

The direction is a random unit vector (the cost does not depend on which). Each row gives
seconds per prompt, prompts per second and the ratio to `margin_batched`. One torch thread
(`--threads`), as the experiments run; run it on an idle machine (load under
0.5): the load average before and after is recorded.

    iclr25 bench self_recognition    # or: python benchmarks/bench_self_recognition.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows

OUT = Path(__file__).resolve().parent / "results" / "self_recognition.json"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_self_recognition", description=__doc__.split("\n\n")[0])
    p.add_argument("--prompts", type=int, default=12, help="judged prompts (half own, half human)")
    p.add_argument("--tokens", type=int, default=48, help="tokens of each judged text")
    p.add_argument("--layer", type=int, default=15, help="block steered, coloured and ablated")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions (median reported)")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the judge")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="the random tiny judge, one repetition")
    args = p.parse_args(argv)
    from iclr25.papers.self_recognition import method as M
    from iclr25.papers.self_recognition.pipeline import prepare
    from iclr25.papers.self_recognition.prompts import answer_margin, prompt_token_ids

    load_before = load_average()
    judge = "tiny" if args.smoke else "smollm2"
    n, tokens, layer = (2, 8, 0) if args.smoke else (args.prompts // 2, args.tokens, args.layer)
    reps = 1 if args.smoke else args.reps
    lm, probs = prepare(judge, ("own", "human"), n, tokens, np.random.default_rng(0), args.threads)
    prompts = M.individual_prompts(probs, "own") + M.individual_prompts(probs, "human")
    texts = [q.texts["own"] for q in probs] + [q.texts["human"] for q in probs]
    v = np.random.default_rng(1).standard_normal(int(lm.model.config.hidden_size))
    unit = {layer: v / np.linalg.norm(v)}
    torch.set_num_threads(args.threads)  # the judge's own calls set it too; whole_prompts not

    def ablated():
        with M.project_out(lm, unit):
            answer_margin(lm, prompts, "individual")

    def whole_prompts():
        seqs = [lm._prompt_ids(q) for q in prompts]
        for sl in lm._chunks(len(seqs)):
            lm._logits(seqs[sl], last_only=True)

    calls = {
        "margin_batched": lambda: answer_margin(lm, prompts, "individual"),
        "margin_single": lambda: [answer_margin(lm, [q], "individual") for q in prompts],
        "margin_whole_prompts": whole_prompts,
        "steer": lambda: M.steered_margins(lm, prompts, "individual", unit, [1.0]),
        "colour": lambda: M.coloured_margins(lm, prompts, texts, "individual", unit, [1.0]),
        "ablate": ablated,
    }
    med = interleaved_medians(calls, reps=reps)
    rows = [
        {
            "cell": name,
            "s_per_prompt": round(s / len(prompts), 4),
            "prompts_per_s": round(len(prompts) / s, 3),
            "ratio": round(s / med["margin_batched"], 3),
        }
        for name, s in med.items()
    ]
    settings = {
        "judge": judge,
        "prompts": len(prompts),
        "text_tokens": tokens,
        "prompt_tokens": sorted(len(prompt_token_ids(lm, q)) for q in prompts),
        "layer": layer,
        "threads": args.threads,
        "reps": reps,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    return bench_result(
        "self_recognition_judge",
        "margin_batched: all prompts in one answer_margin call",
        settings,
        rows,
        out=args.out or None,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main())
