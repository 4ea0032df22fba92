"""The official length budget and truncation edge cases (design §1.3), token for token.

Every word is one token, so with the instruction "match colour" a formatted 8-word query is 13
tokens and one example with its separator 24 (13 + `\\n<response>` 2 + 8 + `\\n\\n` 1).
"""

import numpy as np
import pytest

pytest.importorskip("transformers")

from iclr25.papers.icl_embedder.data import World, task_batch
from iclr25.papers.icl_embedder.prompt import (
    BOS_ID,
    EOS_ID,
    QueryFormat,
    build_eval_query,
    build_passage,
    build_tokenizer,
    build_train_query,
    sample_example_ids,
)

INST = "match colour"


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(World())


@pytest.fixture(scope="module")
def batch():
    return task_batch(
        World(),
        kind="retrieval",
        task=0,
        form="specific",
        rng=np.random.default_rng(0),
        batch_size=6,
    )


def n_examples(tok, ids):
    return ids.count(tok.convert_tokens_to_ids("<response>")) - 1


@pytest.mark.parametrize(("query_max_len", "reserve"), [(160, 160), (512, 512)])
def test_reserve_equal_to_query_max_len_adds_no_example(tok, batch, query_max_len, reserve):
    # issue #1158: --query_max_len 512 with the hard-coded 512 reserve never adds an example
    fmt = QueryFormat(query_max_len=query_max_len, reserve=reserve)
    k0 = build_train_query(tok, batch.queries[0], INST, batch.pool, [], fmt=fmt)
    rng = np.random.default_rng(1)
    for k in range(6):
        ids = sample_example_ids(0, 6, k, rng)
        assert len(ids) == k
        assert build_train_query(tok, batch.queries[0], INST, batch.pool, ids, fmt=fmt) == k0


@pytest.mark.parametrize(
    ("reserve", "expected"),
    [(86, 3), (87, 2), (88, 2), (62, 4), (63, 3), (38, 5), (39, 4)],
)
def test_exact_fit_counts_bos_and_eos(tok, batch, reserve, expected):
    # budget 160 - reserve holds m examples iff 24 m + 2 <= budget: 86 -> 74 = 24*3 + 2 fits 3
    fmt = QueryFormat(query_max_len=160, reserve=reserve)
    ids = build_train_query(tok, batch.queries[0], INST, batch.pool, [1, 2, 3, 4, 5], fmt=fmt)
    assert n_examples(tok, ids) == expected
    assert len(ids) == 17 + 24 * expected


def test_a_long_example_stops_the_loop_not_skipped(tok):
    # a short example is 7 + 2 + 2 + 1 = 12 tokens, the long one (30-word response) 40
    pool = [("red dog", "red cat"), ("red cow", " ".join(["red"] * 30)), ("red fox", "red pig")]
    fmt = QueryFormat(query_max_len=160, reserve=160 - (2 * 12 + 2), example_passage_max_len=40)
    # [0, 2]: both short ones fit exactly; [0, 1, 2]: the long one breaks the loop, so the
    # short third is never tried although it would fit
    both = build_train_query(tok, "red", INST, pool, [0, 2], fmt=fmt)
    assert n_examples(tok, both) == 2
    ids = build_train_query(tok, "red", INST, pool, [0, 1, 2], fmt=fmt)
    assert n_examples(tok, ids) == 1
    assert tok.decode(ids) == (
        "<s><instruct>match colour\n<query>red dog\n<response>red cat\n\n"
        "<instruct>match colour\n<query>red\n<response></s>"
    )
    assert n_examples(tok, build_train_query(tok, "red", INST, pool, [1, 0, 2], fmt=fmt)) == 0


def test_example_query_truncated_with_instruction_counted_and_response_cut(tok):
    pool = [("red dog france", "blue cat spain italy")]
    fmt = QueryFormat(example_query_max_len=6, example_passage_max_len=3)
    ids = build_train_query(tok, "grey lion", INST, pool, [0], fmt=fmt)
    assert tok.decode(ids) == (
        "<s><instruct>match colour\n<query>red\n<response>blue cat spain\n\n"
        "<instruct>match colour\n<query>grey lion\n<response></s>"
    )
    # a long instruction eats the whole example query: 4 tokens keep none of its text
    fmt = QueryFormat(example_query_max_len=4, example_passage_max_len=3)
    ids = build_train_query(tok, "grey", "match colour colour colour", pool, [0], fmt=fmt)
    assert tok.decode(ids) == (
        "<s><instruct>match colour colour\n<response>blue cat spain\n\n"
        "<instruct>match colour colour colour\n<query>grey\n<response></s>"
    )


def test_overlong_query_loses_its_tail_and_keeps_suffix_and_eos(tok, batch):
    words = list(World().words[20:62])  # 42 distinct words
    text = " ".join(words)
    fmt = QueryFormat(query_max_len=20, reserve=0)
    ids = build_train_query(tok, text, INST, batch.pool, [], fmt=fmt)
    assert len(ids) == 20 and ids[0] == BOS_ID and ids[-1] == EOS_ID
    # 20 - BOS - (\n <response> </s>) = 16 tokens: 5 of format, then the first 11 words
    assert tok.decode(ids) == (
        "<s><instruct>match colour\n<query>" + " ".join(words[:11]) + "\n<response></s>"
    )
    # with examples: the prefix survives, the query text is cut
    fmt = QueryFormat(query_max_len=60, reserve=0)
    ids = build_train_query(tok, text, INST, batch.pool, [1, 2, 3], fmt=fmt)
    assert len(ids) == 60 and n_examples(tok, ids) == 2  # 24*2 + 2 <= 60 < 24*3 + 2
    assert ids[-3:] == [*tok.encode("\n<response>"), EOS_ID]
    two = build_train_query(tok, "", INST, batch.pool, [1, 2], fmt=QueryFormat())
    assert ids[:49] == two[:49]  # BOS and both examples intact
    assert tok.decode(ids[49:-3]) == "<instruct>match colour\n<query>" + " ".join(words[:3])


def test_inference_examples_untruncated_query_truncated_alone(tok, batch):
    text = " ".join(World().words[20:62])
    fmt = QueryFormat(
        query_max_len=20, reserve=20, example_query_max_len=1, example_passage_max_len=1
    )
    examples = batch.pool[1:4]
    ids = build_eval_query(tok, text, INST, examples, fmt=fmt)
    assert len(ids) == 1 + 24 * 3 + 16 + 2 + 1
    prefix = "".join(f"<instruct>match colour\n<query>{q}\n<response>{d}\n\n" for q, d in examples)
    assert tok.decode(ids) == (
        "<s>"
        + prefix
        + "<instruct>match colour\n<query>"
        + " ".join(text.split()[:11])
        + "\n<response></s>"
    )


def test_passage_truncation(tok):
    fmt = QueryFormat(passage_max_len=5)
    assert tok.decode(build_passage(tok, "red dog cat cow", fmt=fmt)) == "<s>red dog cat</s>"
    fmt = QueryFormat(passage_max_len=10)
    sym = build_passage(tok, "red dog cat cow", fmt=fmt, instruction="match item")
    assert len(sym) == 10
    assert tok.decode(sym) == "<s><instruct>match item\n<query>red\n<response></s>"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"query_max_len": 2}, ValueError, "query_max_len=2 is not allowed: must be an int >= 3"),
        ({"reserve": -1}, ValueError, "reserve=-1 is not allowed: must be an int >= 0 and <= 160"),
        ({"reserve": 161}, ValueError, "reserve=161 is not allowed"),
        ({"example_query_max_len": 0}, ValueError, "example_query_max_len=0 is not allowed"),
        ({"example_passage_max_len": 0}, ValueError, "example_passage_max_len=0 is not allowed"),
        ({"passage_max_len": 2}, ValueError, "passage_max_len=2 is not allowed"),
        ({"query_max_len": 16.0}, TypeError, "query_max_len=16.0 is not allowed: must be an int"),
        ({"instruction_format": "{}"}, ValueError, "instruction_format='{}' is not allowed"),
        ({"instruction_format": "{}{}{x}"}, ValueError, "exactly two"),
        ({"suffix": None}, TypeError, "suffix=None is not allowed: must be a str"),
    ],
)
def test_impossible_format_raises(kwargs, error, match):
    with pytest.raises(error, match=match):
        QueryFormat(**kwargs)


def test_limits_that_depend_on_the_tokenizer(tok):
    # BOS + one token + "\n<response>" (2 tokens) + EOS: 5 is the least query_max_len
    ids = build_train_query(tok, "red", INST, [], [], fmt=QueryFormat(query_max_len=5, reserve=0))
    assert tok.decode(ids) == "<s><instruct>\n<response></s>"
    with pytest.raises(
        ValueError, match=r"query_max_len=4 is not allowed with this tokenizer: must be >= 5"
    ):
        build_train_query(tok, "red", INST, [], [], fmt=QueryFormat(query_max_len=4, reserve=0))
    with pytest.raises(ValueError, match="query_max_len=4 is not allowed with this tokenizer"):
        build_eval_query(tok, "red", INST, fmt=QueryFormat(query_max_len=4, reserve=0))
    with pytest.raises(ValueError, match="passage_max_len=4 is not allowed with this tokenizer"):
        build_passage(tok, "red", fmt=QueryFormat(passage_max_len=4), instruction="match item")
