"""Probe-shaped training: the examples are the knowledge check's own prompts (same relation and
year exemplars from the pool), nothing after the cut-off, the loss mask covers exactly the
target tokens, and training lowers the loss on the targets."""

import numpy as np
import pytest

from iclr25.papers.chroknow import item_prompts, make_bench
from iclr25.papers.chroknow.data import first_object, record_years
from iclr25.papers.chroknow.training import (
    FORMATS,
    Example,
    bridge_examples,
    build_tokenizer,
    example_tensors,
    fact_line,
    own_format_recall,
    probe_examples,
    question_texts,
    reps,
    train_probe_lm,
)

BENCH = make_bench(seed=7, n_general=8, n_legal=1, n_fewshot=4, years=(2016, 2021), cutoff=2019)


def test_structured_examples_are_check_prompts_with_the_answer_as_target():
    ex = probe_examples(BENCH, "structured", np.random.default_rng(0), max_reps=3, bridges=False)
    rec = BENCH.split("General", "dynamic")[0]
    mine = [e for e in ex if e.key[2] == rec["subject"]]
    # reps copies per year up to the cut-off, none after it
    assert [e.key[1] for e in mine] == [
        y for y in record_years(rec) for _ in range(reps(y, 2016, 2019, 3))
    ]
    assert all(e.key[1] <= 2019 for e in ex)
    assert "In 2020," not in "".join(e.context + e.target for e in ex)
    # the context has the shape of a generation prompt of item_prompts for that year
    ref = item_prompts(rec, "General", BENCH.pool("General"), np.random.default_rng(1), n_sets=1)
    for e in mine:
        y = e.key[1]
        assert e.target == f"A. {first_object(rec, y)}\n"
        assert e.context.endswith(f"Q. In {y}, {rec['subject']}, {rec['relation']}, [Object]\n")
        assert e.context.count("\nA. ") == 4 == ref[y][0].text.count("\nA. ")
        shots = e.context.split("\n\n")[:-1]
        assert all(f"Q. In {y}, " in s and f", {rec['relation']}, " in s for s in shots)
        pool_subjects = {p["subject"] for p in BENCH.pool("General")}
        assert all(s.split(", ")[1] in pool_subjects for s in shots)
    # fewer shots: the last n blocks of the same prompt
    one = probe_examples(
        BENCH, "structured", np.random.default_rng(0), max_reps=3, n_shots=1, bridges=False
    )
    assert [e.context.count("\nA. ") for e in one] == [1] * len(ex)
    assert all(a.context.endswith(b.context) for a, b in zip(ex, one))


def test_prose_examples_state_the_same_facts_with_the_same_exemplars():
    s = probe_examples(BENCH, "structured", np.random.default_rng(0), max_reps=3, bridges=False)
    p = probe_examples(BENCH, "prose", np.random.default_rng(0), max_reps=3, bridges=False)
    assert [e.key for e in s] == [e.key for e in p]
    rec = BENCH.split("General", "static")[2]
    for a, b in zip(s, p):
        if b.key[2] == rec["subject"]:
            assert b.target == fact_line(rec, b.key[1], "prose") + "\n"
        # exemplar subjects in the same order in both formats
        subj_s = [blk.split(", ")[1] for blk in a.context.split("\n\n")[:-1]]
        assert all(x in b.context for x in subj_s)
        assert [b.context.index(x) for x in subj_s] == sorted(b.context.index(x) for x in subj_s)
        assert "Q." not in b.context and "[Object]" not in b.context


def test_bridges_are_the_same_for_every_format_and_tie_qa_to_prose():
    pool = BENCH.pool("General")
    bridges = bridge_examples(pool, 2016, 2019)
    facts = [(r, y) for r in pool for y in record_years(r) if 2016 <= y <= 2019]
    assert len(bridges) == 2 * len(facts)
    for (rec, y), qa, prose in zip(facts, bridges[::2], bridges[1::2], strict=True):
        assert qa.context == f"Q. In {y}, {rec['subject']}, {rec['relation']}, [Object]\n"
        assert qa.target == f"A. {first_object(rec, y)}\n" and qa.key == prose.key
        assert qa.bridge and prose.bridge
        assert prose.context == "" and prose.target == fact_line(rec, y, "prose") + "\n"
    for fmt in FORMATS:
        ex = probe_examples(BENCH, fmt, np.random.default_rng(0), max_reps=3)
        assert ex[-len(bridges) :] == bridges
        assert ex[: -len(bridges)] == probe_examples(
            BENCH, fmt, np.random.default_rng(0), max_reps=3, bridges=False
        )


def test_prose_is_subject_first_and_the_reversed_variant_object_first():
    for rec in BENCH.split("General", "dynamic"):
        y = record_years(rec)[0]
        o, subj = first_object(rec, y), rec["subject"]
        fwd, rev = fact_line(rec, y, "prose"), fact_line(rec, y, "prose_reversed")
        assert fwd.index(subj) < fwd.index(o) and rev.index(o) < rev.index(subj)


def test_probe_examples_bad_input():
    with pytest.raises(ValueError, match="fmt='xml'"):
        probe_examples(BENCH, "xml", np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_shots=5"):
        probe_examples(BENCH, "structured", np.random.default_rng(0), n_shots=5)
    with pytest.raises(ValueError, match="examples is empty"):
        example_tensors([], build_tokenizer(["a"]))


def test_loss_mask_covers_exactly_the_target_tokens():
    ex = [
        Example("Q. In 2016, Ab Cd, employer, [Object]\n", "A. Dorvan\n", ("employer", 2016, "x")),
        Example("", "In 2016, Dorvan employed Ab Cd .\n", ("employer", 2016, "y")),
        Example("a b c d e f g h i j k l", "A. Melkis Tor\n", ("employer", 2017, "z")),
    ]
    tok = build_tokenizer([e.context + e.target for e in ex])
    ids, mask, targets = example_tensors(ex, tok)
    T = ids.shape[1]
    for i, e in enumerate(ex):
        tgt = tok.encode(e.target)
        n = 1 + len(tok.encode(e.context)) + len(tgt)
        assert int(mask[i].sum()) == n and bool(mask[i, T - n :].all())
        kept = (targets[i] != -100).nonzero().flatten().tolist()
        # exactly the positions that predict a target token, and they predict it
        assert kept == list(range(T - len(tgt) - 1, T - 1))
        assert targets[i, kept].tolist() == tgt == ids[i, T - len(tgt) :].tolist()


def test_probe_training_learns_the_targets():
    ex = probe_examples(BENCH, "structured", np.random.default_rng(0), max_reps=1)
    tok = build_tokenizer([e.context + e.target for e in ex])
    losses = []
    train_probe_lm(
        ex, tok, seed=0, d_model=16, epochs=4, batch_size=16, log=lambda e, v: losses.append(v)
    )
    assert len(losses) == 4 and losses[-1] < losses[0]
    with pytest.raises(ValueError, match="epochs=0"):
        train_probe_lm(ex, tok, seed=0, epochs=0)


def test_question_texts_hold_every_question_and_no_answer():
    texts = question_texts(BENCH)
    recs = [*BENCH.pool("General"), *BENCH.split("General", "dynamic")]
    recs += BENCH.split("General", "static")
    assert len(texts) == sum(len(record_years(r)) for r in recs)
    assert all(t.startswith("Q. In ") and t.endswith("[Object]\n") for t in texts)
    assert "A. " not in "".join(texts)


class _Oracle:
    """An LM that answers every own-format prompt with the object the test expects."""

    def __init__(self, answers):
        self.answers, self.prompts = answers, []

    def generate(self, prompts, max_new_tokens=8, temperature=0.0, stop=()):
        self.prompts += prompts
        return [self.answers.get(p, "nobody") + " ." for p in prompts]


def test_own_format_recall_completes_the_statement_up_to_its_object():
    for fmt in ("structured", "prose"):
        ex = probe_examples(BENCH, fmt, np.random.default_rng(0), max_reps=2)
        items = [e for e in ex if not e.bridge]
        recs = {r["subject"]: r for (d, _), rs in BENCH.items.items() if d == "General" for r in rs}
        answers = {}
        for e in items:
            obj = first_object(recs[e.key[2]], e.key[1])
            answers[e.context + e.target[: e.target.index(obj)]] = obj
        lm = _Oracle(answers)
        assert own_format_recall(lm, ex, BENCH) == 1.0
        assert len(lm.prompts) == len({e.key for e in items})  # one prompt per fact
        if fmt == "structured":
            assert all(p.endswith("[Object]\nA. ") for p in lm.prompts)
        assert own_format_recall(_Oracle({}), ex, BENCH) == 0.0
    rev = probe_examples(BENCH, "prose_reversed", np.random.default_rng(0), max_reps=2)
    assert own_format_recall(_Oracle({}), rev, BENCH) is None
