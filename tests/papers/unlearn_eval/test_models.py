"""Tokenizer, encoding, batching and batched greedy decoding on tiny transformers models."""

import pytest
import torch

from iclr25.core.testing import needs

pytestmark = needs("transformers", "tokenizers")


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tokenizer):
    from iclr25.papers.unlearn_eval.models import tiny_causal_lm

    return tiny_causal_lm(request.param, len(tokenizer), width=32, layers=2, heads=2, seed=1)


def test_tokenizer_round_trip_and_answer_start(corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import BOS_ID, EOS_ID, encode_qa, format_qa

    qs = [q.question for q in corpus.items]
    ans = [q.answer for q in corpus.items]
    enc = encode_qa(tokenizer, qs, ans)
    for q, a, ids, s in zip(qs, ans, enc.ids, enc.answer_start):
        assert ids[0] == BOS_ID and ids[-1] == EOS_ID and tokenizer.unk_token_id not in ids
        text = tokenizer.decode(ids, skip_special_tokens=True)
        assert tokenizer.encode(text) == list(ids[:-1])  # decode/encode is the identity
        assert tokenizer.decode(ids[s:-1]) == tokenizer.decode(tokenizer.encode(a)[1:])
        assert list(ids[:s]) == tokenizer.encode(format_qa(q))
    assert "###" in tokenizer.decode(enc.ids[0])


def test_collate_marks_the_answer_targets(corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import PAD_ID, collate, encode_qa

    enc = encode_qa(tokenizer, [q.question for q in corpus.items[:5]], ["yes", "no", "a", "b", "c"])
    x, target = collate(enc, [0, 3])
    assert x.shape[1] == max(len(enc.ids[0]), len(enc.ids[3]))
    for b, i in enumerate([0, 3]):
        n, s = len(enc.ids[i]), enc.answer_start[i]
        assert torch.all(x[b, n:] == PAD_ID)
        # positions s-1 .. n-2 predict the answer word and the EOS
        assert target[b].nonzero().flatten().tolist() == list(range(s - 1, n - 1))


def test_models_are_seeded_and_leave_global_rng_alone(tokenizer):
    from iclr25.papers.unlearn_eval.models import tiny_causal_lm

    state = torch.random.get_rng_state()
    a = tiny_causal_lm("llama", len(tokenizer), width=16, layers=1, heads=2, seed=4)
    b = tiny_causal_lm("llama", len(tokenizer), width=16, layers=1, heads=2, seed=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_batched_greedy_equals_one_row_at_a_time(tiny, corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import greedy_complete

    prefixes = [tokenizer.encode(q.question)[: 3 + i] for i, q in enumerate(corpus.items[:6])]
    limits = [5, 0, 3, 7, 1, 4]
    batched = greedy_complete(tiny, prefixes, limits, eos_id=None)
    for p, n, out in zip(prefixes, limits, batched):
        assert out == greedy_complete(tiny, [p], n, eos_id=None)[0]
        assert out[: len(p)] == p and len(out) == len(p) + n


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_kv_cache_decoding_equals_the_plain_loop(arch, corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import format_qa, greedy_complete, tiny_causal_lm

    model = tiny_causal_lm(arch, len(tokenizer), width=32, layers=2, heads=2, seed=5)
    plain = lambda x: model(x)  # noqa: E731  (not a transformers model: no cache)
    qa = [format_qa(q.question, q.answer) for q in corpus.items[:12]]
    prefixes = [tokenizer.encode(s)[: 2 + 3 * (i % 4)] for i, s in enumerate(qa)]
    limits = [0, *[2 + (i % 9) for i in range(11)]]
    cached = greedy_complete(model, prefixes, limits, eos_id=None)
    assert cached == greedy_complete(plain, prefixes, limits, eos_id=None)
    eos = cached[3][len(prefixes[3])]  # a token row 3 emits first: stops that row at once
    stopped = greedy_complete(model, prefixes, limits, eos_id=eos)
    assert stopped == greedy_complete(plain, prefixes, limits, eos_id=eos)
    assert stopped[3] == cached[3][: len(prefixes[3]) + 1]


def test_greedy_stops_at_eos(lookup_lm):
    from iclr25.papers.unlearn_eval.models import greedy_complete

    lm = lookup_lm([[2, 5, 6, 7]], 10, eos=3)
    assert greedy_complete(lm, [[2, 5], [2]], 10) == [[2, 5, 6, 7, 3], [2, 5, 6, 7, 3]]


def test_bad_model_arguments(tokenizer):
    from iclr25.papers.unlearn_eval.models import encode_qa, greedy_complete, tiny_causal_lm

    with pytest.raises(ValueError, match="arch='bert'"):
        tiny_causal_lm("bert", 100)
    with pytest.raises(ValueError, match="width=30 is not allowed: must be divisible"):
        tiny_causal_lm("gpt2", 100, width=30, heads=4)
    with pytest.raises(ValueError, match="vocab_size=2"):
        tiny_causal_lm("gpt2", 2)
    with pytest.raises(ValueError, match="2 questions and 1 answers"):
        encode_qa(tokenizer, ["a", "b"], ["c"])
    with pytest.raises(ValueError, match="max_new >= 0"):
        greedy_complete(None, [[1]], -1)


def test_generation_does_not_depend_on_the_batch_size(tiny, corpus, tokenizer):
    from iclr25.papers.unlearn_eval import metrics as M

    qs = [q.question for q in corpus.items[:7]]
    gen = M.generate_answers(tiny, tokenizer, qs, max_length=30, batch_size=3)
    assert gen == M.generate_answers(tiny, tokenizer, qs, max_length=30, batch_size=1)
    assert len(set(gen)) > 1  # a random model, but not a constant one
