"""The control prompt (same steps and shot count, unrelated items' shots), the shipped real
facts, fact lines and their copies, the ChroKnowPrompt-format training examples and tiny-LM
training end to end through the check and ChroKnowPrompt."""

import json
import re

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.chroknow import chroknow_prompt, knowledge_check, make_bench, score_item
from iclr25.papers.chroknow.data import (
    REAL_FACTS,
    first_object,
    is_dynamic,
    real_facts,
    record_years,
)
from iclr25.papers.chroknow.method import SYSTEM_CANDIDATE, SYSTEM_NO_CANDIDATE, Prompt
from iclr25.papers.chroknow.training import (
    build_tokenizer,
    fact_line,
    probe_examples,
    reps,
    timeline_examples,
    train_probe_lm,
)

pytestmark = needs("rapidfuzz")

YEARS = list(range(2010, 2017))


def record(subject, gold):
    r = {"subject": subject, "relation": "employer", "distractor": ["Pa", "Po", "Pu"]}
    for y in YEARS:
        r[f"objects_{y}"] = [[gold[y]]]
        r[f"release_date_{y}"] = f"{y}-01-01"
    return r


GOLD = {y: "Dorvan" if y < 2013 else "Melkis" for y in YEARS}
ITEM = record("Kesi Varlon", GOLD)
OTHERS = [record(f"Other{i}", dict.fromkeys(YEARS, f"Zorb{i}")) for i in range(3)]
# greedy outputs per year: C C X C P1 X C (as in test_prompting)
OUT = {
    2010: ["A. Dorvan"] * 5,
    2011: ["A. Dorvan"] * 5,
    2012: ["A. Wrongo"] * 5,
    2013: ["A. Melkis"] * 5,
    2014: ["A. Melkis"] * 2 + ["A. Wrongo"] * 3,
    2015: ["A. Tarvos"] * 5,
    2016: ["A. Melkis"] * 5,
}


def checked(rec, outputs):
    prompts = {y: [Prompt("p", y)] * 5 for y in outputs}
    return score_item(rec, prompts, outputs, outputs)


def test_control_has_the_same_steps_but_unrelated_shots(scripted):
    res = checked(ITEM, OUT)
    others = [
        (r, checked(r, {y: [f"A. Zorb{i}"] * 5 for y in YEARS})) for i, r in enumerate(OTHERS)
    ]
    lm = scripted(lambda p, t: "A. Dorvan")
    real = chroknow_prompt(lm, ITEM, res)
    ctl = chroknow_prompt(lm, ITEM, res, control=others, rng=np.random.default_rng(0))
    assert list(ctl.steps) == list(real.steps)
    for y in real.steps:
        assert [(s.year, s.direction) for s in ctl.steps[y]] == [
            (s.year, s.direction) for s in real.steps[y]
        ]
        for s in ctl.steps[y]:
            # every shot is another item's question with that item's own answer
            shots = re.findall(
                r"Q\. In (\d{4}), (\w+), employer, \[Object\]\nA\. (\w+)\n", s.prompt
            )
            assert shots and all(sub.startswith("Other") for _, sub, _ in shots)
            assert all(ans == "zorb" + sub[-1] for _, sub, ans in shots)
            assert "Kesi Varlon" in s.prompt  # the target question is the item's own
            n_real = next(r for r in real.steps[y] if r.year == s.year).prompt.count("\nA. ")
            assert s.prompt.count("\nA. ") == n_real


def test_control_bad_input(scripted):
    lm = scripted(lambda p, t: "A. x")
    res = checked(ITEM, OUT)
    with pytest.raises(ValueError, match="control is empty"):
        chroknow_prompt(lm, ITEM, res, control=[], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng=None"):
        chroknow_prompt(lm, ITEM, res, control=[(OTHERS[0], res)])


def test_real_facts_are_consistent_and_licensed():
    bench = real_facts()
    assert bench.years == tuple(range(2015, 2024))
    items = bench.split("General", "dynamic") + bench.split("General", "static")
    assert len(items) == 16 and len(bench.pool("General")) == 8
    assert all(is_dynamic(r) for r in bench.split("General", "dynamic"))
    assert not any(is_dynamic(r) for r in bench.split("General", "static"))
    subjects = [r["subject"] for r in items + bench.pool("General")]
    assert len(set(subjects)) == len(subjects) == 24
    for r in items + bench.pool("General"):
        assert record_years(r) == list(bench.years)
        gold = {o[0] for y in bench.years for o in r[f"objects_{y}"]}
        assert not gold & set(r["distractor"]) and len(r["distractor"]) == 3
    readme = (REAL_FACTS.parent / "README.md").read_text()
    assert "CC0" in readme
    # spot checks of well-known facts (the holder on 1 July)
    line = {json.loads(x)["subject"]: json.loads(x) for x in REAL_FACTS.read_text().splitlines()}
    assert line["President of the United States"]["objects_2017"] == [["Donald Trump"]]
    assert line["Chancellor of Germany"]["objects_2021"] == [["Angela Merkel"]]


def test_fact_lines_and_frequency_fall_to_the_cutoff():
    bench = make_bench(seed=3, n_general=8, n_legal=3, years=(2014, 2021), cutoff=2019)
    rec = bench.split("General", "dynamic")[0]
    s, r = rec["subject"], rec["relation"]
    assert fact_line(rec, 2015, "triple").startswith(f"In 2015, {s}, {r}, ")
    assert fact_line(rec, 2015, "structured") == fact_line(rec, 2015, "qa")
    prose = fact_line(rec, 2015, "prose")
    assert prose.startswith("In 2015, ") and s in prose and f"{s}, {r}" not in prose
    assert fact_line(rec, 2015, "qa").startswith(f"Q. In 2015, {s}, {r}, [Object]\nA. ")
    legal = bench.split("Legal", "static")[0]
    assert "____" not in fact_line(legal, 2015, "structured")
    assert [reps(y, 2014, 2019, 4) for y in range(2014, 2022)] == [4, 3, 3, 2, 1, 1, 0, 0]
    with pytest.raises(ValueError, match="fmt='table'"):
        fact_line(rec, 2015, "table")


def test_timeline_examples_are_chroknow_prompt_steps_over_facts_up_to_the_cutoff():
    bench = make_bench(seed=3, n_general=8, n_legal=3, years=(2014, 2021), cutoff=2019)

    def by_subject(recs):
        return {str(r.get("subject", r.get("question"))): r for r in recs}

    pool = by_subject(r for d in ("General", "Legal") for r in bench.fewshot[d])
    items = by_subject(r for (d, _), v in bench.items.items() if d != "Math" for r in v)
    only_pool = timeline_examples(bench, 40, np.random.default_rng(0), items=False)
    assert {e.key[2] for e in only_pool} <= set(pool)
    for lower in (True, False):
        ex = timeline_examples(bench, 60, np.random.default_rng(0), lowercase_shots=lower)
        assert len(ex) == 60 and all(e.bridge for e in ex)
        assert {e.key[2] for e in ex} & set(items) and {e.key[2] for e in ex} & set(pool)
        for e in ex:
            rec, year = (pool | items)[e.key[2]], e.key[1]
            assert 2014 <= year <= 2019 and "In 2020," not in e.context
            assert e.target == f"A. {first_object(rec, year)}\n"
            shots = [int(y) for y in re.findall(r"Q\. In (\d{4}),", e.context)]
            assert year in shots and 2 <= len(shots) <= 7  # the target and 1-6 neighbours
            written = re.findall(r"Q\. In (\d{4}), [^\n]*\nA\. (.+)\n", e.context)
            assert len(written) == len(shots) - 1  # every shot but the target has its answer
            for y, a in written:
                gold = first_object(rec, int(y))  # the neighbour's gold object, as written
                assert a == (gold.lower() if lower else gold)
            head = e.context.split("\n\n", 1)[0]  # the system prompt chrono_text writes
            assert head == (
                SYSTEM_NO_CANDIDATE if "Candidate A. [Object]\n" in e.context else SYSTEM_CANDIDATE
            )
    with pytest.raises(ValueError, match="n=-1"):
        timeline_examples(bench, -1, np.random.default_rng(0))


def test_tiny_lm_trains_and_runs_the_check_and_prompt_end_to_end():
    bench = make_bench(seed=5, n_general=8, n_legal=3, years=(2016, 2021), cutoff=2019)
    rng = np.random.default_rng(0)
    examples = probe_examples(bench, "structured", rng) + timeline_examples(bench, 10, rng)
    tok = build_tokenizer([e.context + e.target for e in examples])
    lm = train_probe_lm(examples, tok, seed=0, d_model=16, epochs=1, batch_size=64, max_len=256)
    recs = bench.split("General", "dynamic")[:2]
    res = knowledge_check(
        lm, recs, bench.pool("General"), domain="General", n_sets=1, max_new_tokens=4
    )
    assert [r.years for r in res] == [tuple(range(2016, 2022))] * 2
    out = chroknow_prompt(lm, recs[0], res[0], max_new_tokens=4)
    assert out.category in ("known", "partial_known", "cut_off", "unknown")


def test_elicitation_smoke_runs_both_formats_and_is_deterministic():
    from iclr25.core.context import RunContext
    from iclr25.papers.chroknow.experiments.elicitation import PRESETS, run

    a = run(PRESETS["smoke"], RunContext(seed=0, preset="smoke"))
    b = run(PRESETS["smoke"], RunContext(seed=0, preset="smoke"))
    assert a == b
    for fmt in ("structured", "prose"):
        shares = [a[f"{fmt}/{c}"] for c in ("known", "partial_known", "cut_off", "unknown")]
        assert sum(shares) == pytest.approx(1.0)
        assert 0 <= a[f"{fmt}_dynamic_post/year_correct"] <= 1


def test_prompting_smoke_runs_check_prompt_and_control():
    from iclr25.core.context import RunContext
    from iclr25.papers.chroknow.experiments.prompting import PRESETS, run

    out = run(PRESETS["smoke"], RunContext(seed=0, preset="smoke"))
    for key in ("general", "legal", "general_dynamic", "legal_static"):
        for m in ("check", "prompt", "prompt_prev", "control", "prompt_lowercase"):
            assert 0 <= out[f"{m}@{key}/known"] <= 1
        assert out[f"gain@{key}/known"] == pytest.approx(
            out[f"prompt@{key}/known"] - out[f"check@{key}/known"]
        )
