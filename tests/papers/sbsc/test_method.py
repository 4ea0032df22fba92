"""SBSC's loop, the baselines, answers and voting, on scripted models and the real sandbox."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("pyseccomp", reason="the sandbox tests need the extra 'sandbox'")

from iclr25.papers.sbsc import prompts as P
from iclr25.papers.sbsc.answers import (
    extract_boxed,
    majority_vote,
    normalize,
    normalize_aime,
    normalize_amc,
)
from iclr25.papers.sbsc.baselines import COT, PAL, TIR, self_consistency
from iclr25.papers.sbsc.method import (
    SBSC,
    ReplayLM,
    Transcript,
    Turn,
    format_feedback,
    last_code_block,
)
from iclr25.papers.sbsc.sandbox import PROGRAM_FAILURES, ExecResult, Sandbox

pytestmark = pytest.mark.xdist_group("sbsc_sandbox")


@pytest.fixture(scope="module")
def sb():
    with Sandbox(wall_s=5.0) as s:
        yield s


class ScriptedLM:
    """Returns the next scripted turn for each call; records every prompt it sees."""

    def __init__(self, turns):
        self.turns = list(turns)
        self.prompts = []

    def generate(self, prompts, max_new_tokens=32, temperature=0.0, stop=(), seed=0):
        self.prompts.extend(prompts)
        return [self.turns.pop(0) for _ in prompts]


STEP1 = "### Step 1\nSub-task: 2^10.\n```python\nprint(2 ** 10)\n```\n"
BAD2 = "### Step 2\nSub-task: mod.\n```python\nprint(x % 1000)\n```\n"
GOOD2 = "### Step 2\nSub-task: mod.\n```python\nx = 1024\nprint(x % 1000)\n```\n"
FINAL = "### Final answer\n\\boxed{24}\n"


def test_sbsc_loop_feeds_back_outputs_and_errors(sb):
    lm = ScriptedLM([STEP1, BAD2, GOOD2, FINAL])
    tr = SBSC(lm, sb).solve("What is 2^10 mod 1000?")
    assert tr.answer == "24" and tr.stop == "answer"
    assert tr.executions == 3 and tr.program_errors == 1 and tr.sandbox_failures == 0
    assert [t.status for t in tr.turns] == ["ok", "error", "ok", ""]
    # turn 3 saw the problem, the first output and the error's last traceback lines
    p3 = lm.prompts[2]
    assert p3.startswith(P.SBSC_SYSTEM) and "### Problem\nWhat is 2^10 mod 1000?" in p3
    assert p3.endswith("NameError: name 'x' is not defined\n```\n")
    assert p3.rsplit("```output\n", 1)[1].count("\n") == 5  # the last 4 traceback lines
    assert "```output\n1024\n```" in p3
    assert lm.prompts == tr.prompts()


def test_turn_cap_counts_error_turns(sb):
    lm = ScriptedLM([BAD2] * 10)
    tr = SBSC(lm, sb, max_turns=3).solve("What is 2^10 mod 1000?")
    assert tr.stop == "turn_cap" and len(tr.turns) == 3 and tr.answer is None
    assert tr.program_errors == 3


def test_execution_budget(sb):
    lm = ScriptedLM([BAD2] * 10)
    tr = SBSC(lm, sb, max_turns=10, max_executions=2).solve("p")
    assert tr.stop == "budget" and tr.executions == 2 and len(tr.turns) == 3


def test_no_code_no_answer_ends_the_run(sb):
    tr = SBSC(ScriptedLM(["I am not sure."]), sb).solve("p")
    assert tr.stop == "no_progress" and tr.answer is None and tr.executions == 0


def test_cumulative_execution_reruns_earlier_steps(sb):
    s1 = "### Step 1\n```python\nx = 2 ** 10\nprint(x)\n```\n"
    s2 = "### Step 2\n```python\nprint(x % 1000)\n```\n"  # uses x from step 1
    stateless = SBSC(ScriptedLM([s1, s2, FINAL]), sb).solve("p")
    assert stateless.turns[1].status == "error"
    cumul = SBSC(ScriptedLM([s1, s2, FINAL]), sb, execution="cumulative").solve("p")
    assert cumul.turns[1].status == "ok" and cumul.turns[1].feedback == "24"
    assert "x = 2 ** 10" in cumul.turns[1].executed


def test_replay_reproduces_transcript_and_rejects_divergence(sb):
    tr = SBSC(ScriptedLM([STEP1, BAD2, GOOD2, FINAL]), sb).solve("What is 2^10 mod 1000?")
    stored = Transcript.from_json(tr.to_json())
    assert stored == tr
    replay = ReplayLM([stored])
    again = SBSC(replay, sb).solve("What is 2^10 mod 1000?")
    assert again == tr and replay.calls == 4
    with pytest.raises(KeyError, match="no stored generation"):
        SBSC(ReplayLM([stored]), sb).solve("another problem")


def test_batched_runs_equal_single_runs(sb):
    from iclr25.papers.sbsc.data import load_problems
    from iclr25.papers.sbsc.simulator import NoisySolver

    probs = load_problems()[:6]
    lm = NoisySolver(probs, eps_detect=0.4, world=3)
    many = SBSC(lm, sb, max_turns=9, max_executions=8).solve_many([p.text for p in probs])
    one = [SBSC(lm, sb, max_turns=9, max_executions=8).solve(p.text) for p in probs]
    assert many == one


def test_tir_retries_whole_program(sb):
    bad = "Rationale.\n```python\nprint(undefined)\n```\n"
    good = "Fixed.\n```python\nprint((2 ** 10) % 1000)\n```\n"
    tr = TIR(ScriptedLM([bad, good, "The answer is \\boxed{24}."]), sb).solve("p")
    assert tr.answer == "24" and tr.executions == 2 and tr.program_errors == 1
    assert tr.prompt.startswith(P.TIR_SYSTEM)


def test_pal_single_program_last_line(sb):
    lm = ScriptedLM(["x = 7\nprint('working')\nprint(x * 6)\n"])
    tr = PAL(lm, sb).solve("p")
    assert tr.answer == "42" and tr.executions == 1 and tr.stop == "single"
    assert lm.prompts[0].endswith("```python\n")
    tr = PAL(ScriptedLM(["raise ValueError('no')\n"]), sb).solve("p")
    assert tr.answer is None and tr.program_errors == 1


def test_cot_reads_boxed_answer():
    tr = COT(ScriptedLM(["2^10 = 1024, so \\boxed{24}."])).solve("p")
    assert tr.answer == "24" and tr.executions == 0


def test_self_consistency_votes_over_seeds(sb):
    class BySeed:
        def generate(self, prompts, max_new_tokens=32, temperature=0.0, stop=(), seed=0):
            return [f"print({[0, 5, 5, 7, 5][seed - 1]})" for _ in prompts]

    votes, runs = self_consistency(PAL(BySeed(), sb, temperature=0.7).solve_many, ["p", "q"], 5)
    assert votes == ["5", "5"] and [t.seed for t in runs[0]] == [1, 2, 3, 4, 5]


def test_exemplar_programs_print_what_they_show(sb):
    # every program in the few-shot prompts, run in the sandbox, prints its shown output
    for ex in (*P.SBSC_EXEMPLARS, *P.TIR_EXEMPLARS):
        pairs = re.findall(r"```python\n(.*?)```\n```output\n(.*?)\n```", ex, re.S)
        assert pairs
        for code, shown in pairs:
            assert sb.run(code).stdout.strip() == shown.strip()
        boxed = extract_boxed(ex)
        assert boxed == pairs[-1][1].strip()
    for ex in (*P.PAL_EXEMPLARS, *P.POT_EXEMPLARS):
        assert sb.run(last_code_block(ex)).stdout.strip() == "36"


def test_every_program_failure_counts_and_sandbox_failures_apart():
    # the transcript's counts follow the sandbox's split of statuses, "killed" included
    tr = Transcript("sbsc", "p", "prompt")
    for status in ("ok", "error", "timeout", "output_limit", "killed", "sandbox_error", ""):
        tr.turns.append(Turn("gen", status=status))
    assert tr.program_errors == 4 and tr.sandbox_failures == 1 and tr.executions == 6
    assert tr.program_errors == sum(ExecResult(s).program_failed for s in PROGRAM_FAILURES)


def test_feedback_truncation_and_traceback_tail():
    long = ExecResult("ok", stdout="x" * 5000)
    assert format_feedback(long, output_chars=100).endswith("[output truncated]")
    tb = "Traceback (most recent call last):\n  a\n  b\n  c\n  d\nValueError: bad"
    fb = format_feedback(ExecResult("error", stderr=tb), traceback_lines=2)
    assert fb == "  d\nValueError: bad"
    assert "Timeout" in format_feedback(ExecResult("timeout"))
    assert "Sandbox" in format_feedback(ExecResult("sandbox_error"))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("\\boxed{42}", "42"),
        ("the answer is $\\boxed{042}$.", "42"),
        ("\\boxed{\\frac{1}{2}} then \\boxed{7}", "7"),
        ("12.0", "12"),
        ("1000", None),
        ("-3", None),
        ("x", None),
        ("\\boxed{ 999 }", "999"),
    ],
)
def test_normalize_aime(text, want):
    assert normalize_aime(text) == want


def test_boxed_braces_and_absence():
    assert extract_boxed("\\boxed{\\frac{a}{b}}") == "\\frac{a}{b}"
    assert extract_boxed("no box") is None
    assert extract_boxed("\\boxed{unclosed") is None


def test_normalize_amc_letter_and_value():
    ch = {"A": "10", "B": "12", "C": "\\frac{1}{2}", "D": "15", "E": "20"}
    assert normalize_amc("(C)", ch) == "C"
    assert normalize_amc("\\textbf{(B)}", ch) == "B"
    assert normalize_amc("\\boxed{15}", ch) == "D"
    assert normalize_amc("\\frac{1}{2}", ch) == "C"
    assert normalize_amc("13", ch) is None
    assert normalize("E", "amc", ch) == "E"
    with pytest.raises(ValueError, match="needs choices"):
        normalize("E", "amc")
    with pytest.raises(ValueError, match="choices letter='F' is not allowed"):
        normalize_amc("A", {"F": "1"})


def test_majority_vote_ties_and_abstentions():
    assert majority_vote(["3", None, "5", "5", "3"]) == "3"
    assert majority_vote([None, None]) is None
    assert majority_vote(["1", "2", "2"]) == "2"


def test_bad_input_names_the_value(sb):
    lm = ScriptedLM([])
    with pytest.raises(ValueError, match="max_turns=0 is not allowed"):
        SBSC(lm, sb, max_turns=0)
    with pytest.raises(ValueError, match="execution='persistent' is not allowed"):
        SBSC(lm, sb, execution="persistent")
    with pytest.raises(ValueError, match="temperature=nan is not allowed"):
        PAL(lm, sb, temperature=float("nan"))
    with pytest.raises(ValueError, match="answer_kind='aimee' is not allowed"):
        TIR(lm, sb, answer_kind="aimee")
    with pytest.raises(ValueError, match="style='pol' is not allowed"):
        PAL(lm, sb, style="pol")
    with pytest.raises(ValueError, match="problem='' is not allowed"):
        SBSC(lm, sb).solve("")
    with pytest.raises(ValueError, match="k=0 is not allowed"):
        self_consistency(PAL(lm, sb).solve_many, ["p"], 0)
    with pytest.raises(TypeError, match="bool"):
        normalize_aime(True)


def test_bad_batches_are_refused_before_any_model_call(sb):
    lm = ScriptedLM([])  # no turns: a model call would fail with IndexError
    for solver in (SBSC(lm, sb), TIR(lm, sb), PAL(lm, sb), COT(lm)):
        with pytest.raises(TypeError, match="is one text: solve_many takes a list"):
            solver.solve_many("What is 2 + 2?")  # not split into 14 one-character problems
        with pytest.raises(ValueError, match="choices has 1 entries for 2 problems"):
            solver.solve_many(["p", "q"], choices=[None])
        with pytest.raises(TypeError, match="choices is one mapping"):
            solver.solve_many(["p"], choices={"A": "1"})
    amc = (
        SBSC(lm, sb, answer_kind="amc"),
        PAL(lm, sb, answer_kind="amc"),
        COT(lm, answer_kind="amc"),
    )
    for solver in amc:
        with pytest.raises(ValueError, match=r"needs choices .* problems \[1\] have none"):
            solver.solve_many(["p", "q"], choices=[{"A": "1"}, None])
    with pytest.raises(TypeError, match="list of problem texts"):
        self_consistency(PAL(lm, sb).solve_many, "p", 2)
    with pytest.raises(TypeError, match="is one answer"):
        majority_vote("35")
    assert lm.prompts == []
    assert normalize(-12, "integer") == "-12" and normalize("\\boxed{-12}", "integer") == "-12"


def test_evaluate_end_to_end_and_transcripts_replay(sb, tmp_path):
    from iclr25.papers.sbsc.data import load_problems
    from iclr25.papers.sbsc.evaluate import evaluate
    from iclr25.papers.sbsc.simulator import NoisySolver

    probs = load_problems()[:4]
    lm = NoisySolver(probs)
    summary, trs = evaluate(lm, probs, sb, methods=("sbsc", "tir", "pal"), sc_k=2)
    assert {k: v["accuracy"] for k, v in summary.items()} == dict.fromkeys(
        ("sbsc", "sbsc_sc", "tir", "tir_sc", "pal", "pal_sc"), 1.0
    )
    assert summary["sbsc"]["sandbox_failures"] == 0.0
    sbsc = [t for t in trs if t.method == "sbsc" and t.seed == 0]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(t.to_json() + "\n" for t in sbsc))
    stored = [Transcript.from_json(line) for line in path.read_text().splitlines()]
    again = SBSC(ReplayLM(stored), sb).solve_many([p.text for p in probs])
    assert again == stored
    with pytest.raises(ValueError, match="method='gpt' is not allowed"):
        evaluate(lm, probs, sb, methods=("gpt",))
