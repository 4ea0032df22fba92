"""The synthetic TOFU-like corpus: determinism, split sizes and nesting, item contents."""

import pytest

from iclr25.papers.unlearn_eval import data


def test_same_seed_same_corpus_other_seed_other_corpus():
    a, b = data.make_corpus(5, n_authors=30), data.make_corpus(5, n_authors=30)
    assert a == b
    c = data.make_corpus(6, n_authors=30)
    assert a.authors != c.authors and a.items != c.items


def test_default_sizes_and_nested_disjoint_splits():
    c = data.make_corpus()
    assert len(c.authors) == len(set(c.authors)) == 200
    assert len(c.items) == 200 * data.MAX_FACTS
    sizes = {}
    for pct in data.FORGET_PCTS:
        s = c.split(pct)
        forget_authors = {q.author for q in s.forget}
        assert forget_authors.isdisjoint(q.author for q in s.retain)
        assert len(s.forget) + len(s.retain) == len(c.items)
        assert len(forget_authors) == 2 * pct
        sizes[pct] = (len(s.forget), len(s.retain))
    assert sizes == {1: (20, 1980), 5: (100, 1900), 10: (200, 1800)}
    f1, f5, f10 = (set(c.split(p).forget) for p in data.FORGET_PCTS)
    assert f1 < f5 < f10  # forget01 ⊂ forget05 ⊂ forget10, as TOFU


def test_items_carry_paraphrases_perturbations_and_refusals():
    c = data.make_corpus(1, n_authors=12, n_perturbed=4)
    for q in c.items:
        assert q.author in q.question and q.author in q.answer
        assert q.paraphrased_question != q.question
        assert q.paraphrased_answer != q.answer
        assert len(set(q.perturbed_answers)) == 4 and q.answer not in q.perturbed_answers
        assert q.refusal in data.REFUSALS
    # each author's two books are their own
    books = [q.answer.split(" The ")[-1] for q in c.items if q.fact in (5, 6)]
    assert len(books) == len(set(books)) == 24


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"seed": -1}, ValueError, "seed=-1"),
        ({"n_authors": 5}, ValueError, "n_authors=5"),
        ({"n_facts": 11}, ValueError, "n_facts=11"),
        ({"n_perturbed": 0}, ValueError, "n_perturbed=0"),
        ({"n_authors": 20.0}, TypeError, "n_authors=20.0"),
        ({"seed": float("nan")}, TypeError, "seed=nan"),
    ],
)
def test_bad_arguments_raise(kwargs, err, match):
    with pytest.raises(err, match=match):
        data.make_corpus(**kwargs)


def test_bad_split_raises():
    with pytest.raises(ValueError, match="pct=2 is not allowed: use one of 1, 5, 10"):
        data.make_corpus(n_authors=10).split(2)
