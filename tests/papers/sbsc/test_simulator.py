"""The generated problems and the scripted noisy solver, against closed-form probabilities."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest

pytest.importorskip("pyseccomp", reason="the sandbox tests need the extra 'sandbox'")

from iclr25.papers.sbsc.baselines import PAL, TIR
from iclr25.papers.sbsc.data import (
    ASSET,
    STEPS,
    generate_problems,
    load_champ,
    load_problems,
    make_problem,
    save_problems,
)
from iclr25.papers.sbsc.method import SBSC
from iclr25.papers.sbsc.sandbox import CachedExecutor, Sandbox
from iclr25.papers.sbsc.simulator import (
    NoisySolver,
    inject,
    p_pal,
    p_sbsc,
    p_tir,
    plan,
)

pytestmark = pytest.mark.xdist_group("sbsc_sandbox")


@pytest.fixture(scope="module")
def ex():
    with Sandbox(wall_s=5.0) as s:
        yield CachedExecutor(s)


def test_shipped_problems_equal_regeneration(tmp_path):
    path = tmp_path / "p.json"
    save_problems(generate_problems(15, seed=0), path)
    assert json.loads(path.read_text()) == json.loads(ASSET.read_text())
    probs = load_problems()
    assert len(probs) == 60 and len({p.id for p in probs}) == 60
    assert all(0 <= int(p.answer) <= 999 for p in probs)


def test_brute_force_truth_on_small_cases():
    assert make_problem("lattice", {"R": 1}, "x").answer == "5"  # origin and 4 axis points
    assert make_problem("lattice", {"R": 2}, "x").answer == "13"
    # {1,2,3},{1,2,6}... by hand for n=4, m=3: sums 6,7,8,9 -> {1,2,3} and {2,3,4}
    assert make_problem("subsets", {"n": 4, "m": 3}, "x").answer == "2"
    assert make_problem("divisors", {"A": 12, "B": 30}, "x").answer == "36"
    p = {"a": 3, "b": 100, "c": 7, "d": 50, "e": 10, "f": 3}
    assert make_problem("modtail", p, "x").answer == str((3**100 + 7**50 + 1000) % 1000)


def test_correct_plans_solve_every_problem(ex):
    probs = load_problems()
    lm = NoisySolver(probs)
    for solver in (SBSC(lm, ex, max_turns=9, max_executions=8), TIR(lm, ex), PAL(lm, ex)):
        trs = solver.solve_many([p.text for p in probs])
        assert [t.answer for t in trs] == [p.answer for p in probs]
    sbsc = SBSC(lm, ex).solve_many([p.text for p in probs])
    assert [t.executions for t in sbsc] == [STEPS[p.family] for p in probs]


def test_bug_injection():
    assert inject("sum(d for d in range(3))", "detect") == "sum_(d for d in range(3))"
    assert inject("(4 * q + 1) % 1000", "detect") == "(4 * q_ + 1) % 1000"
    assert inject("c % 1000", "silent") == "(c % 1000) + 1"
    for p in load_problems()[:4]:
        steps, _ = plan(p)
        assert len(steps) == STEPS[p.family]


def test_closed_forms_by_hand():
    assert p_pal(0.5, 2) == 0.25
    assert p_tir(0.5, 2, 2) == pytest.approx(1 - 0.75**2)
    # SBSC, S=2, B=3: both right first (q^2) or one failure among the first two tries (2 e q^2)
    assert p_sbsc(0.5, 2, 3) == pytest.approx(0.25 + 2 * 0.5 * 0.25)
    assert p_sbsc(0.3, 3, 2) == 0.0  # budget below the number of steps
    assert p_sbsc(0.3, 3, 50) == pytest.approx(1.0)
    q = 0.7
    assert p_sbsc(0.3, 4, 6) == pytest.approx(sum(comb(3 + f, f) * q**4 * 0.3**f for f in range(3)))


def _rates(ex, probs, eps_d, eps_s, budget, worlds):
    texts = [p.text for p in probs]
    hits = {"pal": [], "tir": [], "sbsc": []}
    multi = {"max_turns": budget + 1, "max_executions": budget}
    for w in worlds:
        lm = NoisySolver(probs, eps_detect=eps_d, eps_silent=eps_s, world=w)
        for m, solver in (
            ("pal", PAL(lm, ex)),
            ("tir", TIR(lm, ex, **multi)),
            ("sbsc", SBSC(lm, ex, **multi)),
        ):
            hits[m] += [t.answer == p.answer for t, p in zip(solver.solve_many(texts), probs)]
    return {m: np.mean(v) for m, v in hits.items()}


@pytest.mark.parametrize(("family", "eps", "budget"), [("divisors", 0.4, 5), ("modtail", 0.3, 6)])
def test_simulator_matches_closed_form_detectable(ex, family, eps, budget):
    # one problem, many worlds: each world is an independent draw of every bug
    prob = next(p for p in load_problems() if p.family == family)
    S, n = STEPS[family], 400
    got = _rates(ex, [prob], eps, 0.0, budget, range(n))
    want = {"pal": p_pal(eps, S), "tir": p_tir(eps, S, budget), "sbsc": p_sbsc(eps, S, budget)}
    for m in want:
        sd = np.sqrt(want[m] * (1 - want[m]) / n)
        assert abs(got[m] - want[m]) <= 4 * sd + 1e-9, (m, got[m], want[m])


def test_budget_crossover_in_closed_form():
    # per execution a whole program is cheaper: at a tight budget TIR wins; with room for
    # retries SBSC's failure tail (eps^(B-S)) falls faster than TIR's ((1-(1-eps)^S)^B)
    assert p_tir(0.4, 3, 5) > p_sbsc(0.4, 3, 5)
    assert p_sbsc(0.4, 3, 8) > p_tir(0.4, 3, 8)
    assert p_sbsc(0.5, 4, 8) - p_tir(0.5, 4, 8) > p_sbsc(0.1, 4, 8) - p_tir(0.1, 4, 8)


def test_simulator_matches_closed_form_silent(ex):
    prob = next(p for p in load_problems() if p.family == "divisors")
    n, eps = 300, 0.3
    got = _rates(ex, [prob], 0.0, eps, 8, range(n))
    want = (1 - eps) ** 3
    sd = np.sqrt(want * (1 - want) / n)
    for m in got:
        assert abs(got[m] - want) <= 4 * sd, (m, got[m], want)
    assert got["sbsc"] == got["tir"] == got["pal"]  # common random numbers: same first draws


def test_noisy_solver_bad_input():
    probs = load_problems()[:2]
    with pytest.raises(ValueError, match=r"eps_detect=1\.5 is not allowed"):
        NoisySolver(probs, eps_detect=1.5)
    with pytest.raises(ValueError, match=r"eps_silent=0\.6 is not allowed"):
        NoisySolver(probs, eps_detect=0.5, eps_silent=0.6)
    with pytest.raises(KeyError, match="unknown problem"):
        NoisySolver(probs).generate([SBSC.__module__ and "x\n\n### Problem\nnot known\n\n"])
    with pytest.raises(ValueError, match="family='geometry' is not allowed"):
        make_problem("geometry", {}, "x")
    with pytest.raises(ValueError, match=r"params=\{\} is not allowed: lattice takes the keys"):
        make_problem("lattice", {}, "x")
    with pytest.raises(ValueError, match="the values must be ints >= 1"):
        make_problem("subsets", {"n": 10, "m": 0}, "x")
    with pytest.raises(ValueError, match="n_per_family=0 is not allowed"):
        generate_problems(0)


def test_load_problems_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"problems": [{"id": "a", "text": "t"}]}))
    with pytest.raises(ValueError, match="lacks"):
        load_problems(bad)
    bad.write_text("[]")
    with pytest.raises(ValueError, match="'problems' list"):
        load_problems(bad)


def test_champ_integer_subset():
    pytest.importorskip("champ_dataset", reason="champ-dataset is not installed")
    probs = load_champ()
    assert len(probs) == 79
    assert all(p.answer.lstrip("-").isdigit() for p in probs)
