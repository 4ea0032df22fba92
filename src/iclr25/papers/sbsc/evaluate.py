"""Evaluate SBSC and the baselines with a real language model, on CHAMP or generated problems.

The paper's comparisons need a model that can do competition math (Claude-3.5-Sonnet, GPT-4o);
reach one through any OpenAI-compatible server with the `openai` backend of `iclr25.core.lm`:

    python -m iclr25.papers.sbsc.evaluate --data champ --url http://127.0.0.1:8000 \\
        --model my-model --chat --out runs/sbsc-champ

which writes `summary.json` (accuracy, executions, program errors and sandbox failures per
method) and `transcripts.jsonl` (every run, replayable with `ReplayLM`). Nothing here is part
of the offline reproduction: no model that does olympiad math runs on a laptop.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.core.checks import check_choice, check_int
from iclr25.papers.sbsc.baselines import COT, PAL, TIR, self_consistency
from iclr25.papers.sbsc.data import Problem, easy_problems, load_champ, load_problems
from iclr25.papers.sbsc.method import MAX_TURNS, SBSC, Transcript
from iclr25.papers.sbsc.sandbox import DEFAULT_PREIMPORT, Executor, Sandbox

METHODS = ("sbsc", "tir", "pal", "pot", "cot")


def build(method: str, lm: Any, executor: Executor, temperature: float = 0.0, **kw: Any):
    """The solver of `method` ("sbsc", "tir", "pal", "pot", "cot") with the given options.

    Args:
        method: Which solver.
        lm: The language model.
        executor: The sandbox.
        temperature: 0 for greedy decoding.
        **kw: max_turns, max_new_tokens, answer_kind (those a solver does not take are
            dropped).
    """
    check_choice("method", method, METHODS)
    common = {k: kw[k] for k in ("max_new_tokens", "answer_kind") if k in kw}
    if method in ("sbsc", "tir"):
        multi = {k: kw[k] for k in ("max_turns", "max_executions", "execution") if k in kw}
        cls = SBSC if method == "sbsc" else TIR
        return cls(lm, executor, temperature=temperature, **common, **multi)
    if method in ("pal", "pot"):
        return PAL(lm, executor, style=method, temperature=temperature, **common)
    return COT(lm, temperature=temperature, **common)


def evaluate(
    lm: Any,
    problems: Sequence[Problem],
    executor: Executor,
    methods: Sequence[str] = ("sbsc", "tir", "pal", "cot"),
    sc_k: int = 0,
    temperature: float = 0.7,
    **kw: Any,
) -> tuple[dict[str, dict[str, float]], list[Transcript]]:
    """Accuracy of each method (greedy; with `sc_k` > 0 also SC@k) on `problems`.

    Args:
        lm: The language model.
        problems: Problems with answers.
        executor: The sandbox.
        methods: Solvers to run.
        sc_k: Self-consistency samples (0: none).
        temperature: Temperature of the SC@k samples.
        **kw: Solver options (max_turns, max_new_tokens, answer_kind, ...).

    Returns:
        (summary, transcripts): per method (and "<method>_sc") accuracy, mean executions,
        program errors and sandbox failures; every transcript.
    """
    check_int("sc_k", sc_k, low=0)
    texts, truth = [p.text for p in problems], [p.answer for p in problems]
    summary: dict[str, dict[str, float]] = {}
    every: list[Transcript] = []
    for m in methods:
        runs = [[t] for t in build(m, lm, executor, **kw).solve_many(texts)]
        answers = [r[0].answer for r in runs]
        variants = [(m, answers, runs)]
        if sc_k:
            solver = build(m, lm, executor, temperature=temperature, **kw)
            votes, sc_runs = self_consistency(solver.solve_many, texts, sc_k)
            variants.append((f"{m}_sc", votes, sc_runs))
        for name, ans, rs in variants:
            n = max(len(problems), 1)
            summary[name] = {
                "accuracy": sum(a == t for a, t in zip(ans, truth)) / n,
                "executions": sum(t.executions for r in rs for t in r) / n,
                "program_errors": sum(t.program_errors for r in rs for t in r) / n,
                "sandbox_failures": float(sum(t.sandbox_failures for r in rs for t in r)),
            }
            every += [t for r in rs for t in r]
    return summary, every


def main(argv: Sequence[str] | None = None) -> dict:
    """Command line: evaluate over an OpenAI-compatible server (or a local hf model)."""
    ap = argparse.ArgumentParser(prog="python -m iclr25.papers.sbsc.evaluate")
    ap.add_argument("--data", choices=("champ", "generated", "easy"), default="champ")
    ap.add_argument("--backend", choices=("openai", "hf"), default="openai")
    ap.add_argument("--url", default="")
    ap.add_argument("--model", default="")
    ap.add_argument("--path", default="", help="hf: model folder, .gguf, or 'smollm2'")
    ap.add_argument("--chat", action="store_true")
    ap.add_argument("--methods", default="sbsc,tir,pal,cot")
    ap.add_argument("--limit", type=int, default=0, help="first N problems (0: all)")
    ap.add_argument("--max-turns", type=int, default=MAX_TURNS)
    ap.add_argument("--max-new-tokens", type=int, default=1024)
    ap.add_argument("--sc-k", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="hf: torch threads (0: default)")
    ap.add_argument("--out", default="runs/sbsc-eval")
    a = ap.parse_args(argv)
    from iclr25.core.lm import LMConfig, load_lm

    cfg = LMConfig(
        backend=a.backend, url=a.url, model=a.model, path=a.path, chat=a.chat, threads=a.threads
    )
    lm = load_lm(cfg)
    problems = {"champ": load_champ, "generated": load_problems, "easy": easy_problems}[a.data]()
    if a.limit:
        problems = problems[: a.limit]
    kind = "integer" if a.data == "champ" else "aime"
    with Sandbox(preimport=(*DEFAULT_PREIMPORT, "sympy", "numpy")) as sb:
        summary, trs = evaluate(
            lm,
            problems,
            sb,
            methods=a.methods.split(","),
            sc_k=a.sc_k,
            max_turns=a.max_turns,
            max_new_tokens=a.max_new_tokens,
            answer_kind=kind,
        )
        summary["sandbox"] = sb.info
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "transcripts.jsonl").write_text("".join(t.to_json() + "\n" for t in trs))
    return summary


if __name__ == "__main__":
    import sys

    sys.stdout.write(json.dumps(main(), indent=1) + "\n")
