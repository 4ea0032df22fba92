"""Query strings character for character, BOS/EOS placement, the tokenizer's exact round trip,
and the training and inference paths agreeing where no limit binds."""

import numpy as np
import pytest

pytest.importorskip("transformers")

from iclr25.papers.icl_embedder.data import World, task_batch
from iclr25.papers.icl_embedder.prompt import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    QueryFormat,
    build_eval_query,
    build_passage,
    build_tokenizer,
    format_example,
    format_query,
)

POOL = [
    ("red dog france", "red cat spain"),
    ("blue cow japan", "blue fox peru"),
    ("green pig chile", "green eagle kenya"),
]


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(World())


def test_format_query_and_example():
    assert format_query("match colour", "red dog") == "<instruct>match colour\n<query>red dog"
    assert (
        format_example("match colour", "red dog", "red cat")
        == "<instruct>match colour\n<query>red dog\n<response>red cat"
    )
    fmt = QueryFormat(instruction_format="Instruct: {}\nQuery: {}", suffix="\nResponse:")
    assert format_example("a", "b", "c", fmt=fmt) == "Instruct: a\nQuery: b\nResponse:c"


def test_k0_query_string_and_ids(tok):
    from iclr25.papers.icl_embedder.prompt import build_train_query

    ids = build_train_query(tok, "grey lion", "match colour", POOL, [])
    expected = "<s><instruct>match colour\n<query>grey lion\n<response></s>"
    assert tok.decode(ids) == expected
    assert ids == tok.encode(expected)
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID and len(ids) == 11


def test_k2_query_string_keeps_draw_order(tok):
    from iclr25.papers.icl_embedder.prompt import build_train_query

    ids = build_train_query(tok, "grey lion", "match item", POOL, [2, 0])
    expected = (
        "<s><instruct>match item\n<query>green pig chile\n<response>green eagle kenya\n\n"
        "<instruct>match item\n<query>red dog france\n<response>red cat spain\n\n"
        "<instruct>match item\n<query>grey lion\n<response></s>"
    )
    assert tok.decode(ids) == expected
    assert ids == tok.encode(expected)
    assert ids.count(BOS_ID) == 1 and ids.count(EOS_ID) == 1


def test_train_and_eval_paths_agree_when_nothing_binds(tok):
    from iclr25.papers.icl_embedder.prompt import build_train_query

    batch = task_batch(
        World(), kind="retrieval", task=3, form="specific", rng=np.random.default_rng(4)
    )
    pool, inst = batch.pool, batch.instructions[0]
    for k in range(6):
        chosen = list(range(1, k + 1))
        train = build_train_query(tok, batch.queries[0], inst, pool, chosen)
        ev = build_eval_query(tok, batch.queries[0], inst, [pool[j] for j in chosen])
        assert train == ev
        assert len(train) == 17 + 24 * k  # design §2.1 token counts
        with_own = build_eval_query(tok, batch.queries[0], inst, [(inst, *pool[j]) for j in chosen])
        assert with_own == ev


def test_eval_examples_may_carry_their_own_instruction(tok):
    ids = build_eval_query(tok, "red", "match colour", [("label item", "cat", "dog")])
    assert tok.decode(ids) == (
        "<s><instruct>label item\n<query>cat\n<response>dog\n\n"
        "<instruct>match colour\n<query>red\n<response></s>"
    )
    with pytest.raises(ValueError, match=r"examples\[0\]=.*\(query, response\)"):
        build_eval_query(tok, "red", "match colour", [("only one",)])


def test_passages_raw_and_symmetric(tok):
    assert tok.decode(build_passage(tok, "red dog")) == "<s>red dog</s>"
    sym = build_passage(tok, "red dog", instruction="match item")
    assert tok.decode(sym) == "<s><instruct>match item\n<query>red dog\n<response></s>"


def test_round_trip_is_exact_for_any_ids(tok):
    rng = np.random.default_rng(0)
    n = len(tok)
    newline_ids = tok.convert_tokens_to_ids(["\n", "\n\n"])
    for length in range(60):
        ids = rng.integers(0, n, size=length).tolist()
        assert tok.encode(tok.decode(ids)) == ids
    # newline tokens side by side survive (the decoder keeps a space between them)
    for ids in ([newline_ids[0]] * 3, [newline_ids[1], newline_ids[0]], [9, *newline_ids, 4]):
        assert tok.encode(tok.decode(ids)) == ids


def test_tokenizer_vocabulary_and_padding(tok):
    assert len(tok) == 180  # 7 specials, 2 newlines, 3 instruction words, 8 names, 160 values
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id) == (PAD_ID, BOS_ID, EOS_ID)
    assert tok.convert_ids_to_tokens(tok.encode("<instruct><query><response>")) == [
        "<instruct>",
        "<query>",
        "<response>",
    ]
    assert tok.encode("zebra  unicorn\tdog") == [
        tok.convert_tokens_to_ids("zebra"),
        tok.unk_token_id,
        tok.convert_tokens_to_ids("dog"),
    ]
    assert tok.padding_side == "left"
    assert tok.pad({"input_ids": [[9, 10], [11]]})["input_ids"] == [[9, 10], [0, 11]]
    right = build_tokenizer(World(), padding_side="right")
    assert right.pad({"input_ids": [[9, 10], [11]]})["input_ids"] == [[9, 10], [11, 0]]
    small = build_tokenizer(World(n_attributes=2, n_values=3, heldout=(1,)))
    assert len(small) == 7 + 2 + 3 + 2 + 6
    with pytest.raises(ValueError, match=r"padding_side='middle'.*'left', 'right'"):
        build_tokenizer(World(), padding_side="middle")


def test_bad_inputs_raise(tok):
    from iclr25.papers.icl_embedder.prompt import build_train_query

    with pytest.raises(TypeError, match="text=3 is not allowed: must be a str"):
        format_query("match colour", 3)
    with pytest.raises(TypeError, match="instruction=None"):
        build_eval_query(tok, "red", None)
    with pytest.raises(ValueError, match=r"example_ids\[0\]=3 is not allowed"):
        build_train_query(tok, "red", "match item", POOL, [3])

    class NoSpecials:
        bos_token_id = None
        eos_token_id = None

        def encode(self, text, add_special_tokens=False):
            return [1]

    with pytest.raises(ValueError, match="bos_id=None is not allowed"):
        build_passage(NoSpecials(), "red")
    assert build_passage(NoSpecials(), "red", bos_id=7, eos_id=8) == [7, 1, 8]
