"""The training stages: k policies in the built batches, the LM stage learns, the contrastive
loop steps every method, and the text-level encoding API equals the id-level one."""

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from iclr25.papers.icl_embedder.baselines import RECIPES
from iclr25.papers.icl_embedder.data import World, task_batch, training_stream
from iclr25.papers.icl_embedder.method import ICLEmbedder
from iclr25.papers.icl_embedder.model import tiny_llama
from iclr25.papers.icl_embedder.prompt import (
    MARKUP,
    build_eval_query,
    build_passage,
    build_tokenizer,
)
from iclr25.papers.icl_embedder.training import (
    batch_ids,
    lm_examples,
    lm_packed,
    lm_probe,
    lm_sequences,
    pretrain_lm,
    train_embedder,
)

WORLD = World()


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(WORLD)


def small(tok, seed=0):
    return tiny_llama(len(tok), width=16, layers=1, heads=2, intermediate=32, seed=seed)


def n_examples(ids, tok):
    """Examples in a query: `<instruct>` markers minus the query's own."""
    return ids.count(tok.convert_tokens_to_ids(MARKUP[0])) - 1


@pytest.mark.parametrize(("policy", "allowed"), [("none", {0}), ("always5", {5}),
                                                 ("random", set(range(6)))])  # fmt: skip
def test_batch_ids_follow_the_policy(tok, policy, allowed):
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(20):
        b = task_batch(WORLD, kind="retrieval", task=1, form="ambiguous", rng=rng)
        q, p = batch_ids(b, tok, policy=policy, rng=rng)
        assert len(q) == 16 and len(p) == 16 * 8
        seen |= {n_examples(x, tok) for x in q}
        assert p[0] == build_passage(tok, b.passages[0])
    assert seen == allowed


def test_lm_sequences_are_whole_queries_before_the_answer(tok):
    prompts, answers, cells = lm_sequences(WORLD, tok, n=30, rng=np.random.default_rng(1))
    resp, query = (tok.convert_tokens_to_ids(m) for m in (MARKUP[2], MARKUP[1]))
    # the query as the embedder reads it: ... <response> EOS, the answer next
    assert all(p[-2:] == [resp, tok.eos_token_id] for p in prompts)
    for p, a, (_, _, task) in zip(prompts, answers, cells, strict=True):
        # the answer is the query's own word of the task attribute
        own = p[len(p) - 1 - p[::-1].index(query) :]
        assert a in own and tok.convert_ids_to_tokens(a) in WORLD.words
        assert WORLD.words.index(tok.convert_ids_to_tokens(a)) // WORLD.n_values == task
    assert not any(form == "ambiguous" and k == 0 for form, k, _ in cells)


def test_lm_packed_targets_are_the_answers_of_their_questions(tok):
    seqs, targets = lm_packed(WORLD, tok, n=40, rng=np.random.default_rng(6), segments=4)
    resp, query, inst = (tok.convert_tokens_to_ids(m) for m in MARKUP[2::-1])
    forms = set()
    for ids, tgt in zip(seqs, targets, strict=True):
        assert ids[0] == tok.bos_token_id and ids.count(inst) == 4
        starts = [i for i, t in enumerate(ids) if t == inst]
        ambiguous = tok.convert_ids_to_tokens(ids[starts[0] + 2]) == "item"
        forms.add(ambiguous)
        # every question's answer is a target, except an ambiguous sequence's first
        assert len(tgt) == (3 if ambiguous else 4)
        attributes = set()
        for pos, answer in tgt:
            # the whole query (... <response> EOS), then the answer
            assert ids[pos - 1 : pos + 2] == [resp, tok.eos_token_id, answer]
            q = pos - 1 - ids[:pos][::-1].index(query)  # the question's <query> marker
            doc = ids[q + 1 : pos - 2]
            assert answer in doc  # the answer is the question's own document's word
            attributes.add(WORLD.words.index(tok.convert_ids_to_tokens(answer)) // WORLD.n_values)
        if ambiguous:
            assert len(attributes) == 1  # one hidden attribute per ambiguous sequence
    assert forms == {True, False}
    with pytest.raises(ValueError, match="segments=1"):
        lm_packed(WORLD, tok, n=1, rng=np.random.default_rng(0), segments=1)


def test_lm_examples_reveal_the_shared_word_and_end_with_the_query_answer(tok):
    seqs, targets = lm_examples(WORLD, tok, n=40, rng=np.random.default_rng(4), examples=3)
    resp, query, inst = (tok.convert_tokens_to_ids(m) for m in MARKUP[2::-1])
    revealed = []
    for ids, tgt in zip(seqs, targets, strict=True):
        assert ids[0] == tok.bos_token_id and ids.count(inst) == 4  # 3 examples and the query
        assert ids[-2:] == [resp, tok.eos_token_id] and tgt[-1][0] == len(ids) - 1
        assert tok.convert_ids_to_tokens(ids[ids.index(inst) + 2]) == "item"  # ambiguous
        attributes = {WORLD.words.index(tok.convert_ids_to_tokens(a)) // WORLD.n_values
                      for _, a in tgt}  # fmt: skip
        assert len(attributes) == 1  # one hidden attribute per sequence
        last_query = ids[len(ids) - 1 - ids[::-1].index(query) : -2]
        assert tgt[-1][1] in last_query  # the final answer is the query's own word
        for pos, word in tgt[:-1]:  # a revealed example: ... <response> positive EOS word
            assert ids[pos : pos + 2] == [tok.eos_token_id, word]
            q = pos - ids[:pos][::-1].index(query)
            r = pos - ids[:pos][::-1].index(resp)
            assert word in ids[q:r] and word in ids[r:pos]  # in the query and in the positive
            assert sum(t in ids[r:pos] for t in set(ids[q:r]) - {resp, inst}) == 1  # the one
        revealed.append(len(tgt) - 1)
    assert 0 < np.mean(revealed) < 3  # reveal=0.5: some examples, not all
    hidden, _ = lm_examples(WORLD, tok, n=5, rng=np.random.default_rng(4), reveal=0.0)
    assert all(ids.count(tok.eos_token_id) == 1 for ids in hidden)  # the official format
    with pytest.raises(ValueError, match="examples=19"):
        lm_examples(WORLD, tok, n=1, rng=np.random.default_rng(0), examples=19)


def test_pretrain_lm_packed_steps_come_first(tok, monkeypatch):
    import iclr25.papers.icl_embedder.training as training

    calls = []

    def counting(name, real):
        def draw(*args, n, **kwargs):
            calls.append((name, n))
            return real(*args, n=n, **kwargs)

        return draw

    monkeypatch.setattr(training, "lm_packed", counting("packed", training.lm_packed))
    monkeypatch.setattr(training, "lm_sequences", counting("prompts", training.lm_sequences))
    pretrain_lm(small(tok), tok, WORLD, steps=3, batch_size=4, packed_steps=1,
                packed_frac=0.25, rng=np.random.default_rng(7))  # fmt: skip
    assert calls == [("packed", 4), ("packed", 1), ("prompts", 3), ("packed", 1), ("prompts", 3)]
    with pytest.raises(ValueError, match="packed_steps=4"):
        pretrain_lm(small(tok), tok, WORLD, steps=3, packed_steps=4, rng=np.random.default_rng(0))
    calls.clear()
    monkeypatch.setattr(training, "lm_examples", counting("examples", training.lm_examples))
    pretrain_lm(small(tok), tok, WORLD, steps=2, batch_size=4, packed_steps=1, packed_frac=0.25,
                example_frac=0.5, rng=np.random.default_rng(7))  # fmt: skip
    assert calls == [("packed", 4), ("packed", 1), ("examples", 2), ("prompts", 1)]
    with pytest.raises(ValueError, match=r"example_frac=0\.8"):
        pretrain_lm(small(tok), tok, WORLD, steps=1, packed_frac=0.5, example_frac=0.8,
                    rng=np.random.default_rng(0))  # fmt: skip


def test_pretrain_lm_lowers_the_loss_and_probe_keys(tok):
    model = small(tok)
    log = pretrain_lm(model, tok, WORLD, steps=100, batch_size=16, lr=1e-2,
                      rng=np.random.default_rng(2))  # fmt: skip
    assert np.mean(log.losses[-10:]) < np.mean(log.losses[:10]) - 0.03
    probe = lm_probe(model, tok, WORLD, rng=np.random.default_rng(3), n=5)
    assert set(probe) == {f"acc_{f}_k{k}_{s}" for f, k in [("specific", 0), ("specific", 3),
                          ("ambiguous", 3)] for s in ("seen", "heldout")}  # fmt: skip


@pytest.mark.parametrize("name", list(RECIPES))
def test_train_embedder_steps_every_method(tok, name):
    r = RECIPES[name]
    emb = ICLEmbedder(backbone=small(tok), tokenizer=tok, attention=r["attention"],
                      pooling=r["pooling"])  # fmt: skip
    before = [p.detach().clone() for p in emb.parameters()]
    stream = training_stream(WORLD, rng=np.random.default_rng(4), batch_size=4, group_size=4)
    log = train_embedder(emb, stream, tok, policy=r["policy"], steps=3, lr=1e-3,
                         rng=np.random.default_rng(5))  # fmt: skip
    assert len(log.losses) == 3 and np.isfinite(log.losses).all()
    assert any(not torch.equal(a, b) for a, b in zip(before, emb.parameters(), strict=True))
    assert not emb.training


def test_encode_api_equals_the_id_level_path(tok):
    emb = ICLEmbedder(backbone=small(tok), tokenizer=tok)
    texts = ["red dog france", "blue cow"]
    ex = [("green pig chile", "green eagle kenya")]
    got = emb.encode_queries(texts, "match colour", ex)
    ids = [build_eval_query(tok, t, "match colour", ex) for t in texts]
    with torch.no_grad():
        want = emb.embed_ids(ids).numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert got.dtype == np.float32 and got.shape == (2, 16)
    as_dict = emb.encode_queries(texts, "match colour",
                                 [{"query": ex[0][0], "response": ex[0][1]}])  # fmt: skip
    np.testing.assert_allclose(as_dict, got, atol=1e-6)
    corpus = emb.encode_corpus(texts)
    with torch.no_grad():
        want = emb.embed_ids([build_passage(tok, t) for t in texts]).numpy()
    np.testing.assert_allclose(corpus, want, atol=1e-6)


def test_encode_api_errors(tok):
    emb = ICLEmbedder(backbone=small(tok), tokenizer=tok)
    with pytest.raises(TypeError, match="list of texts"):
        emb.encode_queries("red dog", "match colour")
    with pytest.raises(ValueError, match="'query' and 'response'"):
        emb.encode_queries(["red dog"], "match colour", [{"query": "x"}])
    bare = ICLEmbedder(backbone=small(tok), pad_id=0)
    with pytest.raises(ValueError, match="tokenizer"):
        bare.encode_corpus(["red dog"])
    with pytest.raises(ValueError, match="pad_id=None"):
        ICLEmbedder(backbone=small(tok))
    with pytest.raises(ValueError, match="policy"):
        stream = training_stream(WORLD, rng=np.random.default_rng(0), batch_size=4)
        train_embedder(emb, stream, tok, policy="sometimes", steps=1, lr=1e-3,
                       rng=np.random.default_rng(0))  # fmt: skip
