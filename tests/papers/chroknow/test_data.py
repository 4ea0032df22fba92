"""ChroKnowBench-mini: determinism, the official schema, dynamic vs static, the few-shot pool,
fuzzy-distinct names, the file layout, bad input."""

import json
import os

import pytest

from iclr25.core.testing import needs
from iclr25.papers.chroknow.data import (
    BLANK,
    GENERAL_RELATIONS,
    INVARIANT_YEARS,
    LEGAL_TYPES,
    first_object,
    gold_objects,
    is_dynamic,
    load_bench,
    make_bench,
    n_changes,
    record_years,
    save_bench,
)

pytestmark = needs("rapidfuzz")

SMALL = dict(n_general=16, n_legal=9, n_math=9)


@pytest.fixture(scope="module")
def bench():
    return make_bench(int(os.environ.get("ICLR25_TEST_SEED", "0")), **SMALL)


def test_same_seed_same_bench_other_seed_other_bench(seed):
    a, b = make_bench(seed, **SMALL), make_bench(seed, **SMALL)
    c = make_bench(seed + 1, **SMALL)
    dump = lambda x: json.dumps([sorted(x.items.items()), sorted(x.fewshot.items())])  # noqa: E731
    assert dump(a) == dump(b)
    assert dump(a) != dump(c)


def test_splits_sizes_and_years(bench):
    assert set(bench.items) == {
        ("General", "dynamic"),
        ("General", "static"),
        ("Legal", "dynamic"),
        ("Legal", "static"),
        ("Math", "invariant"),
        ("CommonSense", "invariant"),
    }
    assert len(bench.split("General", "dynamic")) == len(bench.split("General", "static")) == 16
    assert len(bench.split("Legal", "static")) == 9 and len(bench.split("Math", "invariant")) == 9
    assert bench.years == tuple(range(2010, 2024)) and bench.cutoff == 2020
    for rec in bench.split("General", "static"):
        assert record_years(rec) == list(range(2010, 2024))
    assert record_years(bench.split("Math", "invariant")[0]) == list(INVARIANT_YEARS)
    with pytest.raises(KeyError, match="General/invariant"):
        bench.split("General", "invariant")


def test_general_records_follow_the_official_schema(bench):
    for state in ("dynamic", "static"):
        for rec in bench.split("General", state):
            assert rec["relation"] in GENERAL_RELATIONS
            assert isinstance(rec["subject"], str) and rec["subject"]
            for y in bench.years:
                objs = rec[f"objects_{y}"]
                assert isinstance(objs, list) and all(isinstance(o, list) for o in objs)
                assert rec[f"release_date_{y}"][:4] == str(y)
                assert gold_objects(rec, y) == {objs[0][0]} and first_object(rec, y) == objs[0][0]
            assert len(rec["distractor"]) == 3


def test_legal_and_invariant_records_follow_the_official_schema(bench):
    for rec in bench.split("Legal", "dynamic") + bench.split("Legal", "static"):
        assert BLANK in rec["question"] and rec["question_type"] in LEGAL_TYPES
        assert all(f"answers_{y}" in rec and f"release_date_{y}" in rec for y in bench.years)
        assert "subject" not in rec and len(rec["distractor"]) == 3
    for dom in ("Math", "CommonSense"):
        for rec in bench.split(dom, "invariant"):
            assert set(rec) == {"subject", "relation", "objects", "distractor"}
            assert gold_objects(rec, 2022) == set(rec["objects"])
            assert set(rec["distractor"]).isdisjoint(rec["objects"])
    a, b = map(int, bench.split("Math", "invariant")[0]["subject"].split(" and "))
    rec = bench.split("Math", "invariant")[0]
    expect = {"sum with": a + b, "product with": a * b, "difference from": a - b}
    assert rec["objects"] == [str(expect[rec["relation"]])]


def test_dynamic_items_change_and_static_items_never_do(bench):
    for dom, most in (("General", 4), ("Legal", 2)):
        for rec in bench.split(dom, "dynamic"):
            assert is_dynamic(rec) and 1 <= n_changes(rec) <= most
        for rec in bench.split(dom, "static"):
            assert not is_dynamic(rec) and n_changes(rec) == 0
    # the first year never changes (a change needs a year before it)
    for rec in bench.split("General", "dynamic"):
        assert n_changes(rec) == len({first_object(rec, y) for y in bench.years}) - 1


def test_fewshot_pool_is_separate_and_covers_every_relation_and_year(bench):
    pool = bench.pool("General")
    items = bench.split("General", "dynamic") + bench.split("General", "static")
    assert {r["subject"] for r in pool}.isdisjoint({r["subject"] for r in items})
    for rel in GENERAL_RELATIONS:
        assert sum(r["relation"] == rel for r in pool) >= 4
    legal = bench.pool("Legal")
    for qt in LEGAL_TYPES:
        assert sum(r["question_type"] == qt for r in legal) >= 4
    questions = {r["question"] for r in bench.split("Legal", "dynamic")}
    assert questions.isdisjoint({r["question"] for r in legal})
    cs_items = {(r["subject"], r["relation"]) for r in bench.split("CommonSense", "invariant")}
    assert cs_items.isdisjoint({(r["subject"], r["relation"]) for r in bench.pool("CommonSense")})


def test_distractors_never_pass_the_fuzzy_match(bench):
    from rapidfuzz import fuzz

    for key in bench.items:
        for rec in bench.items[key]:
            golds = set().union(*(gold_objects(rec, y) for y in record_years(rec)))
            for d in rec["distractor"]:
                assert all(fuzz.token_set_ratio(d.lower(), g.lower()) < 70 for g in golds), (
                    d,
                    golds,
                )


def test_save_and_load_round_trip_in_the_official_layout(bench, tmp_path):
    save_bench(bench, tmp_path)
    assert (tmp_path / "TimeVariant_General_Dynamic.jsonl").exists()
    assert (tmp_path / "TimeInvariant_Math.jsonl").exists()
    assert (tmp_path / "Fewshots" / "Fewshot_Legal.jsonl").exists()
    back = load_bench(tmp_path)
    assert back.years == bench.years and back.cutoff == bench.cutoff
    assert {k: list(v) for k, v in back.items.items()} == {
        k: list(v) for k, v in bench.items.items()
    }
    assert back.pool("General") == bench.pool("General")
    (tmp_path / "meta.json").unlink()  # the real benchmark has none: years come from the data
    bare = load_bench(tmp_path)
    assert bare.years == bench.years and bare.cutoff is None


def test_bad_input_is_refused_with_the_value_named(tmp_path):
    with pytest.raises(ValueError, match="n_fewshot=3"):
        make_bench(0, n_fewshot=3)
    with pytest.raises(ValueError, match="cutoff=2030"):
        make_bench(0, cutoff=2030)
    with pytest.raises(ValueError, match=r"years\[1\]=2011"):
        make_bench(0, years=(2010, 2011))
    with pytest.raises(ValueError, match="years="):
        make_bench(0, years=2010)
    with pytest.raises(TypeError, match=r"seed=1\.5"):
        make_bench(1.5)
    with pytest.raises(ValueError, match="n_general=0"):
        make_bench(0, n_general=0)
    with pytest.raises(ValueError, match="domain='Sports'"):
        make_bench(0, **SMALL).split("Sports", "dynamic")
    with pytest.raises(ValueError, match="not a ChroKnowBench record"):
        record_years({"subject": "x", "relation": "y"})
    with pytest.raises(ValueError, match="no objects or answers for year 1999"):
        gold_objects({"objects_2010": [["a"]], "release_date_2010": "2010"}, 1999)
    with pytest.raises(FileNotFoundError, match="no ChroKnowBench split file"):
        load_bench(tmp_path)
    (tmp_path / "TimeInvariant_Math.jsonl").write_text('{"subject": 1}\nnot json\n')
    with pytest.raises(ValueError, match=r"TimeInvariant_Math\.jsonl:2"):
        load_bench(tmp_path)
