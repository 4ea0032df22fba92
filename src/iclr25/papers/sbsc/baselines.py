"""The paper's baselines (section 4.2): TIR-ToRA, PAL/POT, chain of thought, self-consistency.

* `TIR`: tool-integrated reasoning (ToRA, Gou et al. 2024): a rationale and a program for the
  whole problem, its output fed back, a new whole program after an error; the same loop as SBSC
  (`MultiTurnSolver`) with ToRA's prompt.
* `PAL` (Gao et al. 2023) and POT (Chen et al. 2023, `PAL(style="pot")`): one program, whose
  last printed line is the answer; no feedback.
* `COT`: text only, a boxed answer.
* `self_consistency`: SC@k, k sampled runs and a majority vote over their answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.sbsc import prompts as P
from iclr25.papers.sbsc.answers import extract_boxed, majority_vote, normalize
from iclr25.papers.sbsc.method import (
    MultiTurnSolver,
    Transcript,
    Turn,
    check_batch,
    format_feedback,
    last_code_block,
)
from iclr25.papers.sbsc.sandbox import Executor


class TIR(MultiTurnSolver):
    """TIR-ToRA: whole-problem programs with execution feedback and retries (section 4.2).

    Args:
        lm: Any object with the `LanguageModel.generate` method.
        executor: Runs programs (a `Sandbox`).
        **kwargs: `MultiTurnSolver` options; `system` and `exemplars` default to ToRA's format.
    """

    def __init__(self, lm: Any, executor: Executor, **kwargs: Any) -> None:
        kwargs.setdefault("system", P.TIR_SYSTEM)
        kwargs.setdefault("exemplars", P.TIR_EXEMPLARS)
        kwargs.setdefault("method", "tir")
        super().__init__(lm, executor, **kwargs)


class PAL:
    """PAL / POT: one program per problem; its last printed line is the answer, one execution.

    Args:
        lm: Any object with the `LanguageModel.generate` method.
        executor: Runs programs (a `Sandbox`).
        style: "pal" or "pot" (which exemplars).
        max_new_tokens: Tokens of the program.
        temperature: 0 for greedy decoding.
        answer_kind: "aime", "integer" or "amc".
    """

    def __init__(
        self,
        lm: Any,
        executor: Executor,
        *,
        style: str = "pal",
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        answer_kind: str = "aime",
    ) -> None:
        self.lm, self.executor = lm, executor
        self.method = check_choice("style", style, ("pal", "pot"))
        self.exemplars = P.PAL_EXEMPLARS if style == "pal" else P.POT_EXEMPLARS
        self.max_new_tokens = check_int("max_new_tokens", max_new_tokens, low=1)
        self.temperature = check_float("temperature", temperature, low=0)
        self.answer_kind = check_choice("answer_kind", answer_kind, ("aime", "integer", "amc"))

    def solve(self, problem: str, seed: int = 0, choices: Mapping[str, str] | None = None):
        """Solve one problem (see `solve_many`)."""
        return self.solve_many([problem], seed=seed, choices=[choices])[0]

    def solve_many(
        self,
        problems: Sequence[str],
        seed: int = 0,
        choices: Sequence[Mapping[str, str] | None] | None = None,
    ) -> list[Transcript]:
        """One batched generation, then one execution per problem.

        Returns:
            One transcript per problem (stop "single").
        """
        check_int("seed", seed, low=0)
        problems, choices = check_batch(problems, choices, self.answer_kind)
        trs = [
            Transcript(
                self.method,
                p,
                P.build_prompt(P.PAL_SYSTEM, self.exemplars, p) + "```python\n",
                seed=seed,
                temperature=self.temperature,
                stop="single",
            )
            for p in problems
        ]
        gens = self.lm.generate(
            [t.prompt for t in trs],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            stop=("```\n", "```"),
            seed=seed,
        )
        for tr, gen, ch in zip(trs, gens, choices):
            code = last_code_block("```python\n" + gen)
            turn = Turn(gen, code=code)
            tr.turns.append(turn)
            if not code:
                continue
            res = self.executor.run(code)
            turn.executed, turn.status, turn.error_type = code, res.status, res.error_type
            turn.feedback = format_feedback(res)
            if res.ok:
                lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
                if lines:
                    tr.raw_answer = lines[-1].strip()
                    tr.answer = normalize(tr.raw_answer, self.answer_kind, ch)
        return trs


class COT:
    """Chain of thought: reasoning in text, a boxed answer, no execution.

    Args:
        lm: Any object with the `LanguageModel.generate` method.
        max_new_tokens: Tokens of the solution.
        temperature: 0 for greedy decoding.
        answer_kind: "aime", "integer" or "amc".
    """

    method = "cot"

    def __init__(
        self, lm: Any, *, max_new_tokens: int = 1024, temperature: float = 0.0, answer_kind="aime"
    ) -> None:
        self.lm = lm
        self.max_new_tokens = check_int("max_new_tokens", max_new_tokens, low=1)
        self.temperature = check_float("temperature", temperature, low=0)
        self.answer_kind = check_choice("answer_kind", answer_kind, ("aime", "integer", "amc"))

    def solve(self, problem: str, seed: int = 0, choices: Mapping[str, str] | None = None):
        """Solve one problem (see `solve_many`)."""
        return self.solve_many([problem], seed=seed, choices=[choices])[0]

    def solve_many(self, problems, seed: int = 0, choices=None) -> list[Transcript]:
        """One batched generation; the answer is the last boxed value."""
        check_int("seed", seed, low=0)
        problems, choices = check_batch(problems, choices, self.answer_kind)
        trs = [
            Transcript(
                "cot",
                p,
                P.build_prompt(P.COT_SYSTEM, P.COT_EXEMPLARS, p),
                seed=seed,
                temperature=self.temperature,
                stop="single",
            )
            for p in problems
        ]
        gens = self.lm.generate(
            [t.prompt for t in trs],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            stop=("### Problem",),
            seed=seed,
        )
        for tr, gen, ch in zip(trs, gens, choices):
            tr.turns.append(Turn(gen))
            tr.raw_answer = extract_boxed(gen)
            tr.answer = normalize(tr.raw_answer, self.answer_kind, ch)
        return trs


def self_consistency(
    solve_many: Callable[..., list[Transcript]],
    problems: Sequence[str],
    k: int,
    seeds: Sequence[int] | None = None,
    **kwargs: Any,
) -> tuple[list[str | None], list[list[Transcript]]]:
    """SC@k: k sampled runs per problem (seeds 1..k by default, so none equals the greedy
    run's seed 0) and a majority vote of their answers.

    Args:
        solve_many: A solver's `solve_many` (built with temperature > 0).
        problems: Problem texts.
        k: Samples per problem, >= 1.
        seeds: The k generation seeds.
        **kwargs: Passed to `solve_many` (e.g. choices).

    Returns:
        The voted answer per problem, and the k transcripts per problem.
    """
    k = check_int("k", k, low=1)
    if isinstance(problems, (str, bytes)):
        raise TypeError("problems is one text: self_consistency takes a list of problem texts")
    seeds = list(range(1, k + 1)) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != k:
        raise ValueError(f"seeds has {len(seeds)} entries: must have k={k}")
    runs = [solve_many(problems, seed=s, **kwargs) for s in seeds]
    per_problem = [list(col) for col in zip(*runs)]
    return [majority_vote([t.answer for t in col]) for col in per_problem], per_problem
