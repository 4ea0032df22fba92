"""ChroKnowPrompt: the traversal order and spans, the model's own answers as shots, the
candidate line and system prompts, total- vs previous-span scoring, the skip rule, the
downsampled run, bad input."""

import re

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.chroknow import (
    Prompt,
    chroknow_prompt,
    run_chroknow_prompt,
    score_item,
)
from iclr25.papers.chroknow.method import (
    SYSTEM_CANDIDATE,
    SYSTEM_NO_CANDIDATE,
    clean_chrono_answers,
    extract_chrono_answer,
    most_common_answer,
)

pytestmark = needs("rapidfuzz")

YEARS = list(range(2010, 2017))
GOLD = {y: "Dorvan" if y < 2013 else "Melkis" for y in YEARS}
RECORD = {"subject": "Kesi Varlon", "relation": "employer", "distractor": ["Pa", "Po", "Pu"]}
for _y in YEARS:
    RECORD[f"objects_{_y}"] = [[GOLD[_y]]]
    RECORD[f"release_date_{_y}"] = f"{_y}-01-01"

# greedy and sampled outputs per year: C C X C P1 X C
OUTPUTS = {
    2010: (["A. Dorvan"] * 5, ["A. Dorvan"] * 5),
    2011: (["A. Dorvan"] * 5, ["A. Wrongo"] * 5),
    2012: (["A. Wrongo"] * 5, ["A. Wrongo"] * 5),
    2013: (["A. Melkis"] * 5, ["A. Melkis"] * 5),
    2014: (["A. Melkis"] * 2 + ["A. Wrongo"] * 3, ["A. Melkis"] * 5),
    2015: (["A. Tarvos"] * 5, ["A. Tarvos"] * 3 + ["A. Pilo"] * 2),
    2016: (["A. Melkis"] * 5, ["A. Melkis"] * 5),
}


def checked(outputs=OUTPUTS, record=RECORD):
    prompts = {y: [Prompt("p", y)] * 5 for y in outputs}
    return score_item(
        record,
        prompts,
        {y: g for y, (g, _) in outputs.items()},
        {y: s for y, (_, s) in outputs.items()},
    )


def target_of(text: str) -> int:
    return int(re.search(r"Q\. In (\d{4}), [^\n]*\nCandidate A\. ", text).group(1))


def test_the_fixture_item_is_partial_known():
    res = checked()
    cats = [res.by_year[y].category for y in YEARS]
    assert cats == [
        "correct",
        "correct",
        "incorrect",
        "correct",
        "partial_correct1",
        "incorrect",
        "correct",
    ]
    assert res.category == "partial_known"


def test_traversal_order_spans_shots_and_candidate_line(scripted):
    lm = scripted(lambda p, t: f"A. {GOLD[target_of(p)]}")
    out = chroknow_prompt(lm, RECORD, checked())
    # incorrect years first (chronologically), then partial_correct1
    assert list(out.steps) == [2012, 2015, 2014]
    plan = {y: [(s.year, s.direction) for s in steps] for y, steps in out.steps.items()}
    assert plan[2012] == [
        (2011, "previous"),
        (2010, "previous"),
        (2013, "next"),
        (2014, "next"),
        (2015, "next"),
    ]
    assert plan[2015] == [
        (2014, "previous"),
        (2013, "previous"),
        (2012, "previous"),
        (2016, "next"),
    ]
    assert plan[2014] == [
        (2013, "previous"),
        (2012, "previous"),
        (2011, "previous"),
        (2015, "next"),
        (2016, "next"),
    ]
    shots = {y: {s.year: s.shot for s in steps} for y, steps in out.steps.items()}
    # the model's own answers, lower-cased: greedy for a correct year, sampled otherwise
    assert shots[2012][2011] == "dorvan" and shots[2012][2014] == "melkis"
    assert shots[2012][2015] == "tarvos"  # not yet revisited: its most frequent sampled answer
    assert shots[2015][2012] == "dorvan"  # revisited before: its tentative answers
    first, second = out.steps[2012][0], out.steps[2012][1]
    assert first.prompt.startswith(SYSTEM_NO_CANDIDATE + "\n\n")
    assert "Candidate A. [Object]\n" in first.prompt
    assert second.prompt.startswith(SYSTEM_CANDIDATE + "\n\n")
    assert "Q. In 2012, Kesi Varlon, employer, [Object]\nCandidate A. Dorvan\n" in second.prompt
    last = out.steps[2012][-1].prompt
    where = [last.index(f"Q. In {y}, ") for y in range(2010, 2016)]
    assert where == sorted(where)  # shots in chronological order around the target
    assert "Q. In 2011, Kesi Varlon, employer, [Object]\nA. dorvan\n" in last
    assert out.answers[2012] == ("Dorvan",) * 5
    assert [c["temperature"] for c in lm.calls] == [0.0] * 14
    assert all(c["max_new_tokens"] == 50 and c["stop"] == ("\n",) for c in lm.calls)
    assert out.category == out.category_previous == "known"
    assert {out.year_categories[y] for y in (2012, 2014, 2015)} == {"chrono_known"}


def test_cased_shots_keep_the_answers_casing_and_change_nothing_else(scripted):
    lm = scripted(lambda p, t: f"A. {GOLD[target_of(p)]}")
    lower = chroknow_prompt(lm, RECORD, checked())
    cased = chroknow_prompt(lm, RECORD, checked(), lowercase_shots=False)
    assert cased.steps[2012][0].shot == "Dorvan" and lower.steps[2012][0].shot == "dorvan"
    assert "A. Dorvan\n" in cased.steps[2012][-1].prompt
    for a, b in zip(lower.steps.values(), cased.steps.values(), strict=True):
        assert [s.prompt.lower() for s in a] == [s.prompt.lower() for s in b]
    assert cased.year_categories == lower.year_categories


def test_total_span_and_previous_span_differ_when_forward_steps_go_wrong(scripted):
    def answer(p, t):
        forward = not p.rstrip("\n").split("\n\n")[-1].startswith(f"Q. In {target_of(p)}")
        return "A. Wrongo" if forward else f"A. {GOLD[target_of(p)]}"

    out = chroknow_prompt(scripted(answer), RECORD, checked())
    assert out.answers[2012][-1] == "Wrongo" and out.answers[2012][1] == "Dorvan"
    assert out.category == "partial_known" and out.category_previous == "known"
    assert out.year_categories[2012] == "incorrect"
    assert out.year_categories_previous[2012] == "chrono_known"


def test_spans_are_respected_and_years_without_a_reference_are_skipped(scripted):
    lm = scripted(lambda p, t: f"A. {GOLD[target_of(p)]}")
    out = chroknow_prompt(lm, RECORD, checked(), prev_span=1, next_span=0)
    assert {y: [s.year for s in v] for y, v in out.steps.items()} == {
        2012: [2011],
        2015: [2014],
        2014: [2013],
    }
    wrong = {y: (["A. Nope"] * 5, ["A. Nope"] * 5) for y in YEARS}
    lm = scripted(lambda p, t: "A. Dorvan")
    out = chroknow_prompt(lm, RECORD, checked(wrong))
    assert out.steps == {} and lm.calls == [] and out.category == "unknown"
    # only the first year known: every later year has a reference before it, none after
    one = {**wrong, 2010: OUTPUTS[2010]}
    out = chroknow_prompt(scripted(lambda p, t: "A. x"), RECORD, checked(one))
    assert all(s.direction == "previous" for v in out.steps.values() for s in v)
    assert list(out.steps) == YEARS[1:]


def test_answer_extraction_cleaning_and_most_common():
    assert extract_chrono_answer("Candidate A. Dorvan") == "Dorvan"
    assert extract_chrono_answer("A. Dorvan ") == "Dorvan"
    assert extract_chrono_answer("I think the answer is Dorvan") == "Dorvan"
    assert extract_chrono_answer("Answer: Dorvan") == "Dorvan"
    assert extract_chrono_answer("Dorvan") is None
    assert clean_chrono_answers(["Sure, Dorvan", " Melkis ", "okay", "No."]) == ["Melkis"]
    # a whole word only: names that begin with a filler word stay
    assert clean_chrono_answers(["Nobrel", "Okada", "Yesterday"]) == [
        "Nobrel",
        "Okada",
        "Yesterday",
    ]
    assert most_common_answer(["B", "a", "b", "A"]) == "b"  # ties: the first seen
    assert most_common_answer(["Tarvos", "pilo", "tarvos"]) == "tarvos"
    assert most_common_answer([]) == "None"
    # counted case-insensitively either way; lowercase=False keeps the first occurrence's casing
    assert most_common_answer(["Tarvos", "pilo", "tarvos"], lowercase=False) == "Tarvos"
    assert most_common_answer(["B", "a", "b", "A"], lowercase=False) == "B"


def test_filler_replies_never_make_a_year_known(scripted):
    out = chroknow_prompt(scripted(lambda p, t: "Sure, Dorvan"), RECORD, checked())
    assert out.answers[2012][-1] == "Sure, Dorvan"
    assert out.year_categories[2012] == "incorrect" and out.category == "partial_known"


def test_run_downsamples_and_reports_the_known_gain(scripted):
    known = {y: (["A. " + GOLD[y]] * 5, ["A. " + GOLD[y]] * 5) for y in YEARS}
    results = [checked(known)] * 20 + [checked()] * 10
    records = [RECORD] * 30
    lm = scripted(lambda p, t: f"A. {GOLD[target_of(p)]}")
    run = run_chroknow_prompt(lm, records, results, np.random.default_rng(0))
    assert {k: len(v) for k, v in run.sample.items()} == {"known": 2, "partial_known": 1}
    assert list(run.prompted) == run.sample["partial_known"]
    assert run.known_before == pytest.approx(2 / 3)
    assert run.known_total_span == run.known_previous_span == pytest.approx(1.0)


def test_bad_input_is_refused(scripted):
    lm = scripted(lambda p, t: "A. x")
    with pytest.raises(ValueError, match="time-variant"):
        chroknow_prompt(lm, {"subject": "a", "relation": "b", "objects": ["c"]}, checked())
    with pytest.raises(ValueError, match="prev_span=-1"):
        chroknow_prompt(lm, RECORD, checked(), prev_span=-1)
    with pytest.raises(TypeError, match="LanguageModel"):
        chroknow_prompt("model", RECORD, checked())
    with pytest.raises(ValueError, match=r"len\(records\)=1 != len\(results\)=2"):
        run_chroknow_prompt(lm, [RECORD], [checked()] * 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="fraction=0"):
        run_chroknow_prompt(lm, [RECORD], [checked()], np.random.default_rng(0), fraction=0)
