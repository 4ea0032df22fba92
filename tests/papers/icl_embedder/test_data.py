"""The attribute world: vocabulary, exactly-one-shared groups, no in-batch false negatives,
held-out tasks, evaluation filtering, fixed examples, errors."""

import numpy as np
import pytest

from iclr25.papers.icl_embedder.data import (
    ATTRIBUTES,
    HELDOUT,
    INSTRUCTION_WORDS,
    SEEN,
    VALUES,
    World,
    eval_set,
    fixed_examples,
    instruction,
    render,
    task_batch,
    training_stream,
)

WORD = {w: (a, v) for a, ws in enumerate(VALUES) for v, w in enumerate(ws)}


def entity_of(text):
    """The entity a document renders (each attribute exactly once)."""
    pairs = sorted(WORD[w] for w in text.split())
    assert [a for a, _ in pairs] == list(range(len(pairs)))
    return np.array([v for _, v in pairs])


def shared(a, b):
    return set(np.flatnonzero(np.asarray(a) == np.asarray(b)).tolist())


def test_vocabulary_is_unique_and_clean():
    assert len(ATTRIBUTES) == 8 and all(len(v) == 20 for v in VALUES)
    words = [w for ws in VALUES for w in ws]
    assert len(set(words)) == 160
    reserved = set(ATTRIBUTES) | set(INSTRUCTION_WORDS) | {"<pad>", "<unk>", "<s>", "</s>"}
    assert not set(words) & reserved
    assert all(w.isalpha() and w.islower() for w in words)
    assert SEEN == (0, 1, 2, 3, 4, 5) and HELDOUT == (6, 7)
    assert World().seen == SEEN and len(World().words) == 160


def test_render_shuffles_the_entity_words():
    e = np.array([0, 1, 2, 3, 4, 5, 6, 7])
    a = render(e, np.random.default_rng(0))
    assert a == render(e, np.random.default_rng(0))
    assert np.array_equal(entity_of(a), e)
    orders = {render(e, np.random.default_rng(s)) for s in range(20)}
    assert len(orders) > 10


def test_instructions():
    assert instruction("retrieval", 0, "specific") == "match colour"
    assert instruction("retrieval", 7, "ambiguous") == "match item"
    assert instruction("class", 7, "specific") == "label vehicle"
    assert instruction("class", 2, "ambiguous") == "label item"


@pytest.mark.parametrize("avoid", [True, False])
@pytest.mark.parametrize("task", [0, 3, 7])
def test_retrieval_groups_share_exactly_the_stated_attribute(task, avoid):
    b = task_batch(
        World(),
        kind="retrieval",
        task=task,
        form="specific",
        rng=np.random.default_rng(task),
        group_size=8,
        avoid_false_negatives=avoid,
    )
    assert b.in_batch_negatives and len(b.queries) == 16 and len(b.passages) == 128
    assert b.instructions == [instruction("retrieval", task, "specific")] * 16
    for i, q in enumerate(b.query_entities):
        assert np.array_equal(entity_of(b.queries[i]), q)
        assert b.answers[i] == VALUES[task][q[task]]
        group = b.passage_entities[i * 8 : (i + 1) * 8]
        assert shared(q, group[0]) == {task}  # the positive
        negs = [shared(q, p) for p in group[1:]]
        assert all(len(s) == 1 for s in negs)
        assert sorted(s.pop() for s in negs) == [a for a in range(8) if a != task]
        for j, p in enumerate(group):
            assert np.array_equal(entity_of(b.passages[i * 8 + j]), p)
    assert b.pool == list(zip(b.queries, b.passages[::8], strict=True))


def test_no_in_batch_false_negatives_when_avoided():
    w = World()
    for seed in range(10):
        b = task_batch(
            w,
            kind="retrieval",
            task=seed % 6,
            form="ambiguous",
            rng=np.random.default_rng(seed),
            batch_size=19,
            group_size=8,
        )
        k, g = b.task, b.group_size
        for i, q in enumerate(b.query_entities):
            relevant = b.passage_entities[:, k] == q[k]
            assert np.flatnonzero(relevant).tolist() == [i * g]


def test_official_like_batches_do_have_false_negatives():
    hits = 0
    for seed in range(5):
        b = task_batch(
            World(),
            kind="retrieval",
            task=1,
            form="specific",
            rng=np.random.default_rng(seed),
            avoid_false_negatives=False,
        )
        for q in b.query_entities:
            hits += int((b.passage_entities[:, 1] == q[1]).sum()) - 1
    assert hits > 0


def test_class_batches_use_the_query_values_as_labels():
    b = task_batch(
        World(), kind="class", task=5, form="ambiguous", rng=np.random.default_rng(1), group_size=6
    )
    assert not b.in_batch_negatives and b.passage_entities is None
    assert b.instructions[0] == "label item" and len(b.passages) == 16 * 6
    for i, q in enumerate(b.queries):
        group = b.passages[i * 6 : (i + 1) * 6]
        assert group[0] == b.answers[i] == VALUES[5][b.query_entities[i, 5]]
        assert len(set(group)) == 6 and set(group) <= set(q.split())
    assert [d for _, d in b.pool] == b.answers


def test_training_stream_never_trains_on_heldout_tasks():
    w = World()
    stream = training_stream(w, rng=np.random.default_rng(0), batch_size=4, group_size=3)
    batches = [next(stream) for _ in range(300)]
    assert {b.task for b in batches} == set(SEEN)
    assert {b.form for b in batches} == {"specific", "ambiguous"}
    assert 0.15 < np.mean([b.kind == "class" for b in batches]) < 0.35
    assert all(len(set(b.instructions)) == 1 for b in batches)
    again = training_stream(w, rng=np.random.default_rng(0), batch_size=4, group_size=3)
    assert [next(again).queries for _ in range(5)] == [b.queries for b in batches[:5]]
    only = training_stream(w, rng=np.random.default_rng(1), tasks=(6,), class_fraction=0.0)
    assert {next(only).kind for _ in range(5)} == {"retrieval"}


def test_eval_set_filtering_and_candidates():
    w = World()
    es = eval_set(w, tasks=(0, 6), n_per_task=5, n_random=40, rng=np.random.default_rng(3))
    q_n, n = 10, 10 * 8 + 40
    assert len(es.queries) == q_n and len(es.corpus) == n and es.exclude.shape == (q_n, n)
    assert es.tasks.tolist() == [0] * 5 + [6] * 5
    for i in range(q_n):
        k, q = es.tasks[i], es.query_entities[i]
        assert np.array_equal(entity_of(es.queries[i]), q)
        assert shared(q, es.corpus_entities[es.pos[i]]) == {k}
        for j, d in enumerate(es.corpus_entities):
            assert es.exclude[i, j] == (j != es.pos[i] and d[k] == q[k])
            assert not np.array_equal(d, q)
        assert np.array_equal(entity_of(es.corpus[es.pos[i]]), es.corpus_entities[es.pos[i]])
        assert es.class_candidates[i][k] == VALUES[k][q[k]]
        assert sorted(es.class_candidates[i]) == sorted(es.queries[i].split())
    assert es.exclude.any()  # random documents do share values


def test_fixed_examples_are_fixed_and_disjoint_from_the_test_set():
    w = World()
    es = eval_set(w, tasks=(2,), n_per_task=20, n_random=0, rng=np.random.default_rng(4))
    ex = fixed_examples(w, task=2, rng=np.random.default_rng(9), avoid=es.query_entities)
    assert ex == fixed_examples(w, task=2, rng=np.random.default_rng(9), avoid=es.query_entities)
    assert len(ex) == 3 and not {q for q, _ in ex} & set(es.queries)
    for q, d in ex:
        assert shared(entity_of(q), entity_of(d)) == {2}
    labels = fixed_examples(w, task=2, rng=np.random.default_rng(9), kind="class", n=4)
    assert all(VALUES[2][entity_of(q)[2]] == d for q, d in labels)
    # a tiny world where three of the four entities are test queries: every example is the 4th
    tiny = World(n_attributes=2, n_values=2, heldout=(1,))
    avoid = np.array([[0, 0], [0, 1], [1, 0]])
    for q, _ in fixed_examples(tiny, task=0, rng=np.random.default_rng(0), n=5, avoid=avoid):
        assert np.array_equal(entity_of(q), [1, 1])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda r: World(n_attributes=9), ValueError, "n_attributes=9 is not allowed"),
        (lambda r: World(n_values=1), ValueError, "n_values=1 is not allowed"),
        (lambda r: World(heldout=(6, 6)), ValueError, r"heldout=\(6, 6\) is not allowed"),
        (lambda r: World(heldout=tuple(range(8))), ValueError, "leaving at least one seen"),
        (lambda r: World(n_attributes=4), ValueError, "heldout.0.=6 is not allowed"),
        (lambda r: render([0, 20], r), ValueError, r"values must lie in \[0, 19\]"),
        (lambda r: render(np.zeros(9, int), r), ValueError, "1 to 8 value indices"),
        (lambda r: instruction("sts", 0, "specific"), ValueError, "kind='sts' is not allowed"),
        (lambda r: instruction("class", 0, "vague"), ValueError, "form='vague' is not allowed"),
        (lambda r: _batch(r, task=8), ValueError, "task=8 is not allowed"),
        (lambda r: _batch(r, group_size=9), ValueError, "group_size=9 is not allowed"),
        (lambda r: _batch(r, batch_size=0), ValueError, "batch_size=0 is not allowed"),
        (lambda r: _batch(r, batch_size=20), ValueError, "batch_size=20 is not allowed with"),
        (lambda r: _batch(r, batch_size=2.0), TypeError, "batch_size=2.0 is not allowed"),
        (lambda r: training_stream(World(), rng=r, tasks=()), ValueError, r"tasks=\(\)"),
        (lambda r: training_stream(World(), rng=r, class_fraction=1.5), ValueError, "1.5"),
        (
            lambda r: training_stream(World(), rng=r, p_ambiguous=float("nan")),
            ValueError,
            "p_ambiguous=nan",
        ),
        (
            lambda r: training_stream(World(), rng=r, batch_size=20),
            ValueError,
            "batch_size=20",
        ),
        (
            lambda r: eval_set(World(), tasks=(1, 1), n_per_task=2, n_random=0, rng=r),
            ValueError,
            "must be distinct",
        ),
        (
            lambda r: eval_set(World(), tasks=(1,), n_per_task=0, n_random=0, rng=r),
            ValueError,
            "n_per_task=0",
        ),
        (
            lambda r: fixed_examples(World(), task=0, rng=r, avoid=np.zeros((2, 3), int)),
            ValueError,
            r"avoid has shape \(2, 3\)",
        ),
        (lambda r: fixed_examples(World(), task=0, rng=r, n=0), ValueError, "n=0 is not allowed"),
    ],
)
def test_bad_inputs_raise(call, error, match):
    with pytest.raises(error, match=match):
        call(np.random.default_rng(0))


def _batch(rng, **kwargs):
    args = {"kind": "retrieval", "task": 0, "form": "specific", "rng": rng, **kwargs}
    return task_batch(World(), **args)


def test_big_batches_are_allowed_in_the_official_like_variant():
    b = _batch(np.random.default_rng(0), batch_size=40, avoid_false_negatives=False)
    assert len(b.queries) == 40
    c = _batch(np.random.default_rng(0), kind="class", batch_size=40)
    assert len(c.queries) == 40
