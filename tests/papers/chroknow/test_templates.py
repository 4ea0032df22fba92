"""The template audit: the constant responders, MCQA/TF training examples and the experiment's
smoke run (the official layouts hand a constant responder every year)."""

import re

import numpy as np
import pytest

from iclr25.core.lm import LanguageModel
from iclr25.core.testing import needs
from iclr25.papers.chroknow import knowledge_check, make_bench
from iclr25.papers.chroknow.baselines import ConstantResponder
from iclr25.papers.chroknow.data import first_object
from iclr25.papers.chroknow.training import reps, template_examples

pytestmark = needs("rapidfuzz")


def test_constant_responder_picks_its_option_or_gives_its_answer():
    lm = ConstantResponder("(b)", "A. false")
    assert isinstance(lm, LanguageModel)
    mcqa = (
        "Q1\n(a) X (b) Y (c) Z (d) W\n\n(b) Y\n\n"
        "In 2019, which team?\n(a) Kor Vel (b) Ta (c) Mu (d) Pi\n\n"
    )
    assert lm.generate([mcqa, "Q. In 2019, s held p.\n"], stop=("\n",)) == ["(b) Ta", "A. false"]
    assert ConstantResponder().generate([mcqa], temperature=0.7, seed=3) == ["(d) Pi"]
    assert ConstantResponder("(a)").generate([mcqa]) == ["(a) Kor Vel"]
    with pytest.raises(ValueError, match="position='\\(e\\)'"):
        ConstantResponder("(e)")
    with pytest.raises(TypeError, match="answer=3"):
        ConstantResponder("(d)", 3)
    with pytest.raises(NotImplementedError):
        lm.score(["a"], ["b"])


def test_official_layouts_give_a_constant_responder_every_year_and_debiased_ones_do_not():
    bench = make_bench(seed=2, n_general=8, n_legal=1, years=(2016, 2021), cutoff=2019)
    recs = bench.split("General", "dynamic")
    lm = ConstantResponder("(d)", "A. true")
    for template in ("MCQA", "TF"):
        args = dict(domain="General", template=template, n_sets=4)
        official = knowledge_check(lm, recs, bench.pool("General"), debias=False, **args)
        debiased = knowledge_check(lm, recs, bench.pool("General"), **args)
        assert all(r.category == "known" for r in official)
        # 4 prompts a year: the debiased query's gold cycles over (a)-(d) / true and false, so
        # the responder is right on 1 (MCQA) or 2 (TF) of them: never a correct year
        cats = {yr.category for r in debiased for yr in r.by_year.values()}
        assert "correct" not in cats and cats <= {"partial_correct1", "partial_correct2"}


def test_template_examples_answer_as_the_check_expects_and_never_show_the_record_itself():
    bench = make_bench(seed=3, n_general=8, n_legal=1, years=(2014, 2021), cutoff=2019)
    pool = bench.pool("General")
    subjects = {r["subject"] for r in pool}
    by_subject = {
        r["subject"]: r
        for r in [*pool, *bench.split("General", "dynamic"), *bench.split("General", "static")]
    }
    for template in ("MCQA", "TF"):
        ex = template_examples(bench, template, np.random.default_rng(0), copies=2, max_reps=3)
        assert {e.key[1] for e in ex} == set(range(2014, 2020))  # up to the cut-off only
        for e in ex:
            question = e.context.rstrip("\n").split("\n\n")[-1]
            assert e.key[2] in question
            shots = e.context.rstrip("\n").rsplit("\n\n", 1)[0]
            shown = [s for s in subjects if s in shots]
            assert e.key[2] not in shown or not e.bridge  # a pool record is not its own shot
            if template == "MCQA":
                options = re.findall(r"\(([abcd])\) ", question.split("\n")[-1])
                assert options == list("abcd")
                tag, obj = e.target.rstrip("\n").split(" ", 1)
                assert f"{tag} {obj}" in question  # the gold option, at its place
                gold = first_object(by_subject[e.key[2]], e.key[1])
                assert obj == gold
            else:
                assert e.target in ("A. true\n", "A. false\n")
        # pool facts: 2 copies a year; items: reps(year) copies
        rec = bench.split("General", "static")[0]
        n = sum(e.key[2] == rec["subject"] for e in ex)
        assert n == sum(reps(y, 2014, 2019, 3) for y in range(2014, 2020))
        assert sum(e.key[2] == pool[0]["subject"] for e in ex) == 2 * 6
        mcqa_gold = {e.key: e.target for e in ex if not e.bridge}
        assert (
            all(
                first_object(rec, k[1]) in t for k, t in mcqa_gold.items() if k[2] == rec["subject"]
            )
            or template == "TF"
        )
    with pytest.raises(ValueError, match="template='generation'"):
        template_examples(bench, "generation", np.random.default_rng(0))


def test_templates_smoke_runs_every_check_for_both_models():
    from iclr25.core.context import RunContext
    from iclr25.papers.chroknow.experiments.templates import CHECKS, PRESETS, run

    out = run(PRESETS["smoke"], RunContext(seed=0, preset="smoke"))
    for who in ("lm", "const"):
        for name, _, _ in CHECKS:
            for part in ("", "_pre", "_post"):
                assert 0 <= out[f"{who}@{name}/year_correct{part}"] <= 1
    assert out["const@mcqa_official/year_correct"] == out["const@tf_official/year_correct"] == 1.0


def test_observe_runs_the_check_and_prompt_on_the_real_facts(scripted):
    from iclr25.papers.chroknow.observe import injected_system_prompt, observe

    lm = scripted(lambda p, t: "A. Angela Merkel")
    out = observe(lm, lm, n_sets=1, max_new_tokens=8)
    assert out["dynamic"]["items"] + out["static"]["items"] == 16
    for state in ("dynamic", "static"):
        assert 0 <= out[state]["check"]["known"] <= 1
        run = out[state]["prompt_all_items"]
        assert run["known_before"] <= run["known_total_span"] <= 1
    assert injected_system_prompt(lm) == ""  # no tokenizer, no template


def test_correct_share_counts_correct_item_years_over_the_kept_years():
    from iclr25.papers.chroknow.method import correct_share, score_item

    rec = {"subject": "s", "relation": "employer", "distractor": ["a", "b", "c"]}
    for y in (2018, 2019, 2020):
        rec[f"objects_{y}"] = [["Dorvan"]]
        rec[f"release_date_{y}"] = f"{y}-01-01"
    answer = {2018: "A. Dorvan", 2019: "A. Dorvan", 2020: "A. Melkis"}
    prompts = {y: [None] for y in answer}
    res = score_item(
        rec, prompts, {y: [a] for y, a in answer.items()}, {y: [a] for y, a in answer.items()}
    )
    assert correct_share([res]) == pytest.approx(2 / 3)
    assert correct_share([res], lambda y: y >= 2020) == 0.0
    with pytest.raises(ValueError, match="no item-year"):
        correct_share([res], lambda y: y > 2030)
