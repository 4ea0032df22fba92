"""A scripted noisy solver: a stand-in language model that decomposes problems and writes
real code with injected bugs, and the closed-form success probabilities it must match.

`NoisySolver` implements `generate` of the `LanguageModel` protocol. It reads the prompt the
harness built (SBSC's, TIR-ToRA's or PAL's, told apart by their instructions), finds the problem
(one of its known `Problem`s) and the state of the run from the output blocks in the prompt,
and writes the next turn exactly as a model would: a sub-task and a self-contained program
(SBSC), a rationale and a whole program (TIR), one program (PAL), or the boxed answer. Each
program for sub-step j of a problem is written correctly, or with a *detectable* bug (a
misspelt name: NameError) with probability `eps_detect`, or with a *silent* bug (an off-by-one
that prints a wrong value) with probability `eps_silent`. The programs run in the real sandbox.

Draws use common random numbers: the bug of sub-step j at attempt a of a problem is the same
draw for every method (keyed by world seed, sample seed, problem, j, a), so SBSC, TIR and PAL
face the same bugs on their first attempts and differ only in what they do after an error.
Under greedy decoding (temperature 0) the sample seed is ignored, as for a real model.

Closed forms for a problem with S sub-steps and detectable-only errors at rate e (tested
against the simulator in tests/papers/sbsc/test_simulator.py):

* PAL (one program): (1 - e)^S.
* TIR with a budget of B executions (a whole program each): 1 - (1 - (1 - e)^S)^B.
* SBSC with B executions (one sub-step each; a failed step is retried): the negative binomial
  P(at most B - S failures before S successes) = sum_{f=0}^{B-S} C(S-1+f, f) (1-e)^S e^f.
* SC@k of independent runs that each succeed with p (errors abstain): 1 - (1 - p)^k.

Silent errors at rate e: no method can see them, all succeed with (1 - e)^S (a silent bug
always changes the final answer: every step's value enters the final sum with a positive
coefficient below 1000/S).
"""

from __future__ import annotations

import hashlib
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from iclr25.core.checks import check_float, check_int
from iclr25.papers.sbsc import prompts as P
from iclr25.papers.sbsc.data import STEPS, Problem


@dataclass(frozen=True)
class Step:
    """One sub-step of a plan: `var = expr`, with the earlier variables it reads."""

    var: str
    desc: str
    expr: str
    deps: tuple[str, ...] = ()


def plan(problem: Problem) -> tuple[list[Step], str]:
    """The scripted decomposition of a generated problem: its steps and the imports they need.

    Args:
        problem: A generated problem (family lattice, subsets, divisors or modtail).

    Returns:
        (steps, header): 2-4 steps whose last computes the answer, and import lines.
    """
    p, fam = problem.params, problem.family
    if fam == "lattice":
        R = p["R"]
        steps = [
            Step(
                "q",
                "count the lattice points with x > 0 and y >= 0 inside the circle",
                f"sum(1 for x in range(1, {R} + 1) for y in range(0, {R} + 1) "
                f"if x * x + y * y <= {R} * {R})",
            ),
            Step(
                "ans",
                "the total 4q + 1 (four quadrants and the origin) mod 1000",
                "(4 * q + 1) % 1000",
                ("q",),
            ),
        ]
        return steps, ""
    if fam == "subsets":
        steps = [
            Step(
                "c",
                f"count the 3-element subsets of 1..{p['n']} with sum divisible by {p['m']}",
                f"sum(1 for s in itertools.combinations(range(1, {p['n']} + 1), 3) "
                f"if sum(s) % {p['m']} == 0)",
            ),
            Step("ans", "that count mod 1000", "c % 1000", ("c",)),
        ]
        return steps, "import itertools"
    if fam == "divisors":
        A, B = p["A"], p["B"]
        steps = [
            Step(
                "s",
                f"the sum of the positive divisors of {A}",
                f"sum(d for d in range(1, {A} + 1) if {A} % d == 0)",
            ),
            Step(
                "t",
                f"the number of positive divisors of {B}",
                f"len([d for d in range(1, {B} + 1) if {B} % d == 0])",
            ),
            Step("ans", "(s + t) mod 1000", "(s + t) % 1000", ("s", "t")),
        ]
        return steps, ""
    if fam == "modtail":
        steps = [
            Step(f"x{i + 1}", f"{p[a]}^{p[b]} mod 1000", f"pow({p[a]}, {p[b]}, 1000)")
            for i, (a, b) in enumerate((("a", "b"), ("c", "d"), ("e", "f")))
        ]
        steps.append(
            Step("ans", "(x1 + x2 + x3) mod 1000", "(x1 + x2 + x3) % 1000", ("x1", "x2", "x3"))
        )
        return steps, ""
    raise ValueError(f"problem {problem.id}: family={fam!r} has no scripted plan")


def inject(expr: str, bug: str) -> str:
    """`expr` with a bug: "detect" misspells its first name (NameError when run), "silent"
    adds an off-by-one, "none" leaves it."""
    if bug == "none":
        return expr
    if bug == "silent":
        return f"({expr}) + 1"
    for m in re.finditer(r"\b[A-Za-z_]\w*\b", expr):
        if not keyword.iskeyword(m.group()):
            return expr[: m.start()] + m.group() + "_" + expr[m.end() :]
    raise ValueError(f"no name to misspell in {expr!r}")


def _uniform(*key) -> float:
    h = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64


_OUT = re.compile(r"```output\n(.*?)\n```", re.S)


class NoisySolver:
    """A scripted language model with injected bugs (see the module docstring).

    Args:
        problems: The problems it knows (it solves only these, by their text).
        eps_detect: Probability that a sub-step's program has a detectable bug, in [0, 1].
        eps_silent: Probability of a silent bug, in [0, 1 - eps_detect].
        world: Seed of the bug draws (one "model").
    """

    name = "noisy-solver"

    def __init__(
        self,
        problems: Sequence[Problem],
        eps_detect: float = 0.0,
        eps_silent: float = 0.0,
        world: int = 0,
    ) -> None:
        self.eps_detect = check_float("eps_detect", eps_detect, 0, 1)
        self.eps_silent = check_float("eps_silent", eps_silent, 0, 1 - self.eps_detect)
        self.world = check_int("world", world, low=0)
        self._by_text = {p.text.strip(): p for p in problems}
        self._plans = {p.id: plan(p) for p in problems}
        self.calls = 0

    def bug(self, pid: str, step: int, attempt: int, sample: int) -> str:
        """The bug ("none", "detect", "silent") of sub-step `step` at `attempt`."""
        u = _uniform(self.world, sample, pid, step, attempt)
        if u < self.eps_detect:
            return "detect"
        return "silent" if u < self.eps_detect + self.eps_silent else "none"

    def _problem(self, prompt: str) -> tuple[Problem, str]:
        _head, sep, rest = prompt.rpartition("### Problem\n")
        if not sep:
            raise ValueError("prompt has no '### Problem' section")
        text, _, tail = rest.partition("\n\n")
        prob = self._by_text.get(text.strip())
        if prob is None:
            raise KeyError(f"unknown problem: {text[:60]!r}")
        return prob, tail

    def _step_code(self, st: Step, header: str, bug: str, values: dict[str, int]) -> str:
        lines = [header] if header else []
        lines += [f"{d} = {values[d]}" for d in st.deps]
        lines += [f"{st.var} = {inject(st.expr, bug)}", f"print({st.var})"]
        return "\n".join(lines)

    def _sbsc(self, prob: Problem, tail: str, sample: int) -> str:
        steps, header = self._plans[prob.id]
        values: dict[str, int] = {}
        done, attempt = 0, 0
        for out in _OUT.findall(tail):
            if re.fullmatch(r"-?\d+", out.strip()):
                values[steps[done].var] = int(out)
                done, attempt = done + 1, 0
            else:
                attempt += 1
        if done == len(steps):
            return f"### Final answer\n\\boxed{{{values[steps[-1].var]}}}\n"
        st = steps[done]
        code = self._step_code(st, header, self.bug(prob.id, done, attempt, sample), values)
        return f"### Step {done + 1}\nSub-task: {st.desc}.\n```python\n{code}\n```\n"

    def _program(self, prob: Problem, attempt: int, sample: int) -> str:
        steps, header = self._plans[prob.id]
        lines = [header] if header else []
        for j, st in enumerate(steps):
            lines.append(f"{st.var} = {inject(st.expr, self.bug(prob.id, j, attempt, sample))}")
        lines.append(f"print({steps[-1].var})")
        return "\n".join(lines)

    def _tir(self, prob: Problem, tail: str, sample: int) -> str:
        outs = _OUT.findall(tail)
        if outs and re.fullmatch(r"-?\d+", outs[-1].strip()):
            return f"The answer is \\boxed{{{int(outs[-1])}}}.\n"
        rationale = "Rationale: compute each sub-quantity, then combine them."
        if outs:
            rationale = "The program failed; here is a corrected program for the whole problem."
        code = self._program(prob, len(outs), sample)
        return f"{rationale}\n```python\n{code}\n```\n"

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """The next turn for each prompt (see the class docstring); `max_new_tokens` and
        `stop` are accepted for the protocol (the scripted turns end before any stop string)."""
        check_float("temperature", temperature, low=0)
        sample = int(seed) if temperature > 0 else -1
        out = []
        for prompt in prompts:
            self.calls += 1
            prob, tail = self._problem(prompt)
            if prompt.startswith(P.SBSC_SYSTEM):
                out.append(self._sbsc(prob, tail, sample))
            elif prompt.startswith(P.TIR_SYSTEM):
                out.append(self._tir(prob, tail, sample))
            elif prompt.startswith(P.PAL_SYSTEM):
                out.append(self._program(prob, 0, sample))
            else:
                raise ValueError("NoisySolver plays SBSC, TIR and PAL prompts only")
        return out


def p_pal(eps: float, steps: int) -> float:
    """P(success) of one whole program with per-step detectable error rate `eps`."""
    return (1.0 - eps) ** steps


def p_tir(eps: float, steps: int, budget: int) -> float:
    """P(success) of whole-program retries within `budget` executions."""
    return 1.0 - (1.0 - p_pal(eps, steps)) ** budget


def p_sbsc(eps: float, steps: int, budget: int) -> float:
    """P(success) of per-step retries within `budget` executions (negative binomial)."""
    q = 1.0 - eps
    return sum(comb(steps - 1 + f, f) * q**steps * eps**f for f in range(budget - steps + 1))


def p_sc(p: float, k: int) -> float:
    """P(success) of SC@k over independent runs succeeding with `p` whose failures abstain."""
    return 1.0 - (1.0 - p) ** k


def expected_accuracy(
    problems: Sequence[Problem], eps: float, budget: int, k: int
) -> dict[str, float]:
    """Closed-form accuracies of pal, tir, sbsc, pal_sc and tir_sc under detectable errors."""
    rows = []
    for pr in problems:
        S = STEPS[pr.family]
        tir = p_tir(eps, S, budget)
        rows.append(
            (p_pal(eps, S), tir, p_sbsc(eps, S, budget), p_sc(p_pal(eps, S), k), p_sc(tir, k))
        )
    n = len(rows)
    names = ("pal", "tir", "sbsc", "pal_sc", "tir_sc")
    return {m: sum(r[i] for r in rows) / n for i, m in enumerate(names)}
