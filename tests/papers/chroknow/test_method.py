"""The ChroKnowledge knowledge check: the "A. " parse rule, fuzzy vs exact matching, the
per-year and per-item category tables, scripted models end to end, template debiasing, the
downsample, bad input."""

import re

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.chroknow import (
    ITEM_CATEGORIES,
    classify_item,
    classify_year,
    downsample,
    exact_match,
    first_object,
    fuzzy_match,
    item_prompts,
    knowledge_check,
    make_bench,
    parse_answer,
    score_item,
    summarize,
)
from iclr25.papers.chroknow.method import strip_option_tag, tf_verdict

pytestmark = needs("rapidfuzz")

YEARS = tuple(range(2010, 2024))


@pytest.fixture(scope="module")
def bench():
    return make_bench(0, n_general=8, n_legal=6, n_math=6)


def last_block(prompt: str) -> str:
    return prompt.rstrip("\n").split("\n\n")[-1]


def query_of(prompt: str) -> tuple[int, str]:
    """(year, subject) of a generation prompt's query."""
    m = re.fullmatch(r"Q\. In (\d{4}), ([^,]+), .+, \[Object\]", last_block(prompt))
    assert m, last_block(prompt)
    return int(m.group(1)), m.group(2)


# ---------------------------------------------------------------- parsing and matching


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("A. Kovan", "Kovan"),
        ("A.  Kovan Labs  ", "Kovan Labs"),
        ("A. Kovan\nQ. In 2011, x", "Kovan"),
        ("A. ", ""),  # kept, and it matches nothing
        (" A. Kovan", None),
        ("a. Kovan", None),
        ("A.Kovan", None),
        ("Answer: Kovan", None),
        ("Kovan", None),
        ("", None),
    ],
)
def test_only_outputs_starting_with_A_dot_space_are_parsed(text, answer):
    assert parse_answer(text) == answer


def test_fuzzy_match_is_token_set_ratio_at_70_and_exact_match_is_strict():
    gold = frozenset({"Kovan Labs"})
    assert fuzzy_match("kovan labs", gold) and not exact_match("kovan labs", gold)
    # a subset of the gold words scores 100: the inflation the notes warn about
    assert fuzzy_match("Kovan", gold) and not exact_match("Kovan", gold)
    assert fuzzy_match("Labs Kovan", gold)  # word order is ignored
    assert exact_match("Kovan Labs", gold)
    assert not fuzzy_match("abc", {"abd"})  # 66.7 < 70
    assert fuzzy_match("abc", {"abd"}, threshold=60)
    assert fuzzy_match("kelo", {"kelu"})  # 75 >= 70
    assert not fuzzy_match("", {"x"}) and not fuzzy_match("anything", set())
    assert fuzzy_match("(b) Kovan Labs", gold)
    assert strip_option_tag("(b) Kovan Labs") == "Kovan Labs"
    assert strip_option_tag("( d) Kovan") == "Kovan"  # how the tiny tokenizer writes "(d)"
    assert strip_option_tag("Kovan (d)") == "Kovan (d)"
    assert [tf_verdict(a) for a in ("true", "False.", "TRUE or false", "maybe")] == [
        True,
        False,
        True,
        None,
    ]


# ---------------------------------------------------------------- categories


@pytest.mark.parametrize(
    ("greedy", "sampled", "category"),
    [
        ([True] * 5, [False] * 5, "correct"),
        ([True], [], "correct"),  # dropped greedy outputs do not count against "correct"
        ([True, False, True], [True], "partial_correct1"),
        ([False] * 5, [False, True], "partial_correct2"),
        ([], [True], "partial_correct2"),
        ([], [], "incorrect"),
        ([False] * 5, [False] * 5, "incorrect"),
    ],
)
def test_year_category_table(greedy, sampled, category):
    assert classify_year(greedy, sampled) == category


C, P1, P2, X = "correct", "partial_correct1", "partial_correct2", "incorrect"


@pytest.mark.parametrize(
    ("years", "category"),
    [
        ([C] * 14, "known"),
        ([X] * 14, "unknown"),
        ([C] * 11 + [X] * 3, "cut_off"),  # known until a boundary, then lost
        ([C, P1, P2, X, X], "cut_off"),  # partial years count as known-ish
        ([X, X, P2, C, C], "cut_off"),  # the switch may go the other way
        ([C, X, C], "partial_known"),
        ([X, C, X], "partial_known"),
        ([C, X, X, P1], "partial_known"),
        ([P1] * 5, "partial_known"),  # never incorrect, never all correct
        ([C, C, P2], "partial_known"),
        ([P1], "partial_known"),
        ([C], "known"),
    ],
)
def test_item_category_table(years, category):
    assert classify_item(years) == category


def test_downsample_keeps_a_tenth_of_each_category_and_at_least_one():
    cats = ["known"] * 35 + ["partial_known"] * 9 + ["unknown"] * 120
    a = downsample(cats, np.random.default_rng(0))
    assert {k: len(v) for k, v in a.items()} == {"known": 3, "partial_known": 1, "unknown": 12}
    assert all(cats[i] == k for k, v in a.items() for i in v)
    assert a == downsample(cats, np.random.default_rng(0))
    assert len(downsample(cats, np.random.default_rng(0), fraction=1.0)["unknown"]) == 120


# ---------------------------------------------------------------- end to end


def test_scripted_model_lands_in_each_category(bench, scripted):
    recs = bench.split("General", "dynamic")[:6]
    gold = {(r["subject"], y): first_object(r, y) for r in recs for y in YEARS}
    role = {r["subject"]: i for i, r in enumerate(recs)}

    def answer(prompt, temperature):
        year, subj = query_of(prompt)
        g, i, greedy = gold[(subj, year)], role[subj], temperature == 0
        return {
            0: f"A. {g}",  # knows every year
            1: f"A. {g}" if year <= 2020 else "A. Nobody",  # cut off after 2020
            2: "A. Nobody",  # knows nothing
            3: "A. Nobody" if greedy else f"A. {g}",  # only sampling finds it
            4: f"The answer is {g}" if greedy else "A. Nobody",  # right but unparseable
            5: f"A. {g.lower()}",  # right up to case: fuzzy yes, exact no
        }[i]

    lm = scripted(answer)
    res = knowledge_check(lm, recs, bench.pool("General"), domain="General")
    assert [r.category for r in res] == [
        "known",
        "cut_off",
        "unknown",
        "partial_known",
        "unknown",
        "known",
    ]
    assert [r.category_exact for r in res][5] == "unknown"
    assert {r.by_year[2015].category for r in res[3:4]} == {"partial_correct2"}
    assert res[4].by_year[2015].greedy == () and res[4].by_year[2015].sampled == ("Nobody",) * 5
    assert (
        res[1].by_year[2021].category == "incorrect" and res[1].by_year[2020].category == "correct"
    )
    s = summarize(res)
    assert s["known"] == pytest.approx(2 / 6) and s["exact_known"] == pytest.approx(1 / 6)
    assert sum(s[c] for c in ITEM_CATEGORIES) == pytest.approx(1.0)
    # two batched calls: greedy, then sampled at 0.7, with the official limits
    assert [c["temperature"] for c in lm.calls] == [0.0, 0.7]
    assert all(c["max_new_tokens"] == 50 and c["stop"] == ("\n",) for c in lm.calls)
    assert lm.calls[0]["prompts"] == lm.calls[1]["prompts"]
    assert len(lm.calls[0]["prompts"]) == 6 * 14 * 5


def test_prompts_are_deterministic_for_a_seed_and_differ_across_seeds(bench, scripted, seed):
    recs, pool = bench.split("General", "static")[:2], bench.pool("General")
    runs = []
    for s in (seed, seed, seed + 1):
        lm = scripted(lambda p, t: "A. x")
        knowledge_check(lm, recs, pool, domain="General", template="MCQA", seed=s)
        runs.append(lm.calls[0]["prompts"])
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert lm.calls[1]["seed"] == seed + 1
    # the 5 prompts of an item-year use different exemplar sets
    assert len(set(runs[0][:5])) == 5


def test_generation_prompt_format(bench):
    rec = bench.split("General", "dynamic")[0]
    p = item_prompts(rec, "General", bench.pool("General"), np.random.default_rng(0))[2013][0]
    blocks = p.text.split("\n\n")
    assert len(blocks) == 5 and p.text.endswith(
        f"Q. In 2013, {rec['subject']}, {rec['relation']}, [Object]\n"
    )
    for b in blocks[:4]:
        q, a = b.split("\n")
        assert q.startswith("Q. In 2013, ") and q.endswith(f", {rec['relation']}, [Object]")
        assert a.startswith("A. ")
    legal = bench.split("Legal", "static")[0]
    p = item_prompts(legal, "Legal", bench.pool("Legal"), np.random.default_rng(0))[2019][0]
    assert p.text.endswith(f"Q. In 2019, {legal['question']}\n")
    math = bench.split("Math", "invariant")[0]
    ps = item_prompts(math, "Math", bench.pool("Math"), np.random.default_rng(0))
    assert sorted(ps) == [2020, 2021, 2022, 2023, 2024]


# ---------------------------------------------------------------- template debiasing


def test_mcqa_debiasing_balances_gold_positions(bench):
    rng = np.random.default_rng(1)
    for rec in bench.split("General", "dynamic")[:3]:
        ps = item_prompts(rec, "General", bench.pool("General"), rng, template="MCQA")
        flat = [p for y in ps for p in ps[y]]
        counts = np.bincount([p.gold_position for p in flat], minlength=4)
        assert counts.max() - counts.min() <= 1 and counts.sum() == 70
        for p in flat:
            assert sorted(p.shot_positions) == [0, 1, 2, 3]
            assert p.options[p.gold_position] == first_object(rec, p.year)
            assert sorted(p.options) == sorted([first_object(rec, p.year), *rec["distractor"]])
        orig = item_prompts(
            rec, "General", bench.pool("General"), rng, template="MCQA", debias=False
        )
        assert {p.gold_position for y in orig for p in orig[y]} == {3}
        assert {p.shot_positions for y in orig for p in orig[y]} == {(0, 2, 2, 3)}


def test_tf_debiasing_balances_true_and_false(bench):
    rng = np.random.default_rng(2)
    for rec in bench.split("General", "static")[:3]:
        ps = item_prompts(rec, "General", bench.pool("General"), rng, template="TF")
        flat = [p for y in ps for p in ps[y]]
        n_true = sum(p.label for p in flat)
        assert abs(2 * n_true - len(flat)) <= 1
        for plist in ps.values():
            assert {p.label for p in plist} == {True, False}  # every year asks both
        for p in flat:
            assert sorted(p.shot_labels) == [False, False, True, True]
            assert last_block(p.text).endswith(f" {first_object(rec, p.year)}.") == p.label
        orig = item_prompts(rec, "General", bench.pool("General"), rng, template="TF", debias=False)
        assert {p.label for y in orig for p in orig[y]} == {True}
        assert {p.shot_labels for y in orig for p in orig[y]} == {(False, False, False, True)}


def _option_d(prompt):
    return re.search(r"\(d\) (.*)$", last_block(prompt)).group(1)


@pytest.mark.parametrize(
    ("template", "always"),
    [("MCQA", lambda p, t: f"(d) {_option_d(p)}"), ("TF", lambda p, t: "A. true")],
)
def test_a_biased_model_is_known_under_the_official_templates_only(
    bench, scripted, template, always
):
    recs, pool = bench.split("General", "dynamic")[:4], bench.pool("General")
    lm = scripted(always)
    orig = knowledge_check(lm, recs, pool, domain="General", template=template, debias=False)
    assert [r.category for r in orig] == ["known"] * 4
    fixed = knowledge_check(lm, recs, pool, domain="General", template=template)
    assert [r.category for r in fixed] == ["partial_known"] * 4
    assert all(y.category == "partial_correct1" for r in fixed for y in r.by_year.values())


def test_a_truthful_model_is_known_under_both_templates(bench, scripted):
    recs, pool = bench.split("General", "dynamic")[:3], bench.pool("General")
    gold = {(r["subject"], y): first_object(r, y) for r in recs for y in YEARS}

    def mcqa(prompt, t):
        q = last_block(prompt).split("\n")[0]
        year = int(q[3:7])
        subj = next(s for (s, y) in gold if y == year and s in q)
        return f"(x) {gold[(subj, year)]}"

    def tf(prompt, t):
        q = last_block(prompt)
        year = int(q[6:10])
        subj = next(s for (s, y) in gold if y == year and s in q)
        return "A. true" if q.endswith(f" {gold[(subj, year)]}.") else "A. false"

    for template, fn in (("MCQA", mcqa), ("TF", tf)):
        for debias in (True, False):
            res = knowledge_check(
                scripted(fn), recs, pool, domain="General", template=template, debias=debias
            )
            assert [r.category for r in res] == ["known"] * 3, (template, debias)


# ---------------------------------------------------------------- bad input


def test_bad_input_is_refused_with_the_value_named(bench, scripted):
    recs, pool = bench.split("General", "dynamic")[:1], bench.pool("General")
    lm = scripted(lambda p, t: "A. x")
    kw = dict(domain="General")
    with pytest.raises(ValueError, match="template='QA'"):
        knowledge_check(lm, recs, pool, template="QA", **kw)
    with pytest.raises(ValueError, match="n_sets=0"):
        knowledge_check(lm, recs, pool, n_sets=0, **kw)
    with pytest.raises(ValueError, match="threshold=101"):
        knowledge_check(lm, recs, pool, threshold=101, **kw)
    with pytest.raises(ValueError, match="threshold=nan"):
        fuzzy_match("a", {"a"}, threshold=float("nan"))
    with pytest.raises(ValueError, match="temperature=0"):
        knowledge_check(lm, recs, pool, temperature=0, **kw)
    with pytest.raises(ValueError, match="records is empty"):
        knowledge_check(lm, [], pool, **kw)
    with pytest.raises(TypeError, match=r"records\[0\]"):
        knowledge_check(lm, ["not a record"], pool, **kw)
    with pytest.raises(ValueError, match="domain='general'"):
        knowledge_check(lm, recs, pool, domain="general")
    with pytest.raises(TypeError, match="LanguageModel"):
        knowledge_check(object(), recs, pool, **kw)
    with pytest.raises(ValueError, match="need at least 4"):
        knowledge_check(lm, recs, pool[:3], **kw)
    with pytest.raises(ValueError, match="at least 3 distractors"):
        knowledge_check(lm, [dict(recs[0], distractor=["a"])], pool, template="TF", **kw)
    with pytest.raises(ValueError, match="category='maybe'"):
        classify_item(["correct", "maybe"])
    with pytest.raises(ValueError, match="empty"):
        classify_item([])
    with pytest.raises(TypeError, match="must be a string"):
        parse_answer(None)
    ps = item_prompts(recs[0], "General", pool, np.random.default_rng(0))
    outs = {y: ["A. x"] * 5 for y in ps}
    with pytest.raises(ValueError, match=r"greedy\[2010\] has 4 output"):
        score_item(recs[0], ps, {**outs, 2010: ["A. x"] * 4}, outs)
    with pytest.raises(ValueError, match="sampled has no entry for year 2023"):
        score_item(recs[0], ps, outs, {y: v for y, v in outs.items() if y != 2023})
