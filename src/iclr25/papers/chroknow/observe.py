"""An observation, not a claim: the ChroKnowledge check and ChroKnowPrompt of a real model on
the shipped real facts (`data.real_facts()`: officeholders and CEOs on 1 July, 2015-2023),
through any `iclr25.core.lm` backend; by default the packaged SmolLM2-135M-Instruct through hf.

    PYTHONPATH=src python -m iclr25.papers.chroknow.observe --threads 2 \\
        --out benchmarks/results/chroknow_smollm2.json

The knowledge check sends its few-shot prompts as raw completions; ChroKnowPrompt sends each
step as one user message through the model's chat template, as the official code does. The
packaged SmolLM2's template injects its own system prompt when the conversation has none; the
run records that text (`injected_system_prompt`), because it precedes ChroKnowPrompt's own
instructions, which open the user message (the protocol has no system role).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence

import numpy as np

from iclr25.core.envinfo import envinfo
from iclr25.papers.chroknow.data import real_facts
from iclr25.papers.chroknow.method import knowledge_check, run_chroknow_prompt, summarize


def injected_system_prompt(lm) -> str:
    """The text an hf model's chat template puts before a lone user message ("" if none or not
    an hf model)."""
    tok = getattr(lm, "tokenizer", None)
    if tok is None or getattr(tok, "chat_template", None) is None:
        return ""
    marker = "<<user message>>"
    text = tok.apply_chat_template([{"role": "user", "content": marker}], tokenize=False)
    return text.split(marker)[0]


def observe(
    lm, chat_lm, *, n_sets: int = 5, max_new_tokens: int = 50, seed: int = 0
) -> dict[str, object]:
    """The check (on `lm`) and ChroKnowPrompt with the official 10 % downsample and with every
    item (on `chat_lm`) over both splits of `real_facts()`.

    Returns:
        Shares per split (`summarize`), ChroKnowPrompt's Known before and after, and a few
        of the model's answers.
    """
    bench = real_facts()
    out: dict[str, object] = {}
    for state in ("dynamic", "static"):
        recs = bench.split("General", state)
        res = knowledge_check(
            lm,
            recs,
            bench.pool("General"),
            domain="General",
            n_sets=n_sets,
            max_new_tokens=max_new_tokens,
            seed=seed,
        )
        row: dict[str, object] = {"check": summarize(res), "items": len(recs)}
        for name, fraction in (("prompt_official_10pct", 0.1), ("prompt_all_items", 1.0)):
            run = run_chroknow_prompt(
                chat_lm, recs, res, np.random.default_rng(seed), fraction=fraction
            )
            row[name] = {
                "sampled_items": sum(len(v) for v in run.sample.values()),
                "prompted_items": len(run.prompted),
                "known_before": run.known_before,
                "known_total_span": run.known_total_span,
                "known_previous_span": run.known_previous_span,
            }
        row["greedy_answers"] = {
            f"{r.get('subject')} ({r.get('relation')})": {
                str(y): list(yr.greedy[:1]) for y, yr in ir.by_year.items()
            }
            for r, ir in list(zip(recs, res, strict=True))[:3]
        }
        out[state] = row
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    """Command line: load the model, run `observe`, write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default="smollm2", help="hf: model folder, .gguf or 'smollm2'")
    ap.add_argument("--n-sets", type=int, default=5)
    ap.add_argument("--max-new-tokens", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    from iclr25.core.lm import HFLM, LMConfig, load_lm

    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    lm = load_lm(LMConfig(backend="hf", path=args.path, threads=args.threads))
    chat_lm = HFLM(lm.model, lm.tokenizer, name=f"{lm.name}+chat", chat=True)
    result = {
        "model": lm.name,
        "injected_system_prompt": injected_system_prompt(lm),
        "n_sets": args.n_sets,
        "max_new_tokens": args.max_new_tokens,
        **observe(lm, chat_lm, n_sets=args.n_sets, max_new_tokens=args.max_new_tokens),
        "seconds": round(time.perf_counter() - t0, 1),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "env": envinfo(),
    }
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(main(), indent=1, default=str))
