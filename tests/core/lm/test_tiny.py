"""The tiny backend: protocol behaviour, references, white-box hooks, files, bad input."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from iclr25.core.lm import LanguageModel, LMConfig, WhiteBoxLM, load_lm
from iclr25.core.lm.tiny import TinyLM, fit_tiny_lm, train_tiny_lm
from iclr25.core.lm.tokenizer import BOS, WordTokenizer


@pytest.fixture(scope="module")
def lm():
    rng = np.random.default_rng(0)
    ex = []
    for _ in range(300):
        a, v = rng.choice(["cat", "dog"]), rng.choice(["sat", "ran"])
        ex.append((f"the {a} {v}", " on the mat ." if a == "cat" else " under the rug ."))
    tok = WordTokenizer.build([p + c for p, c in ex])
    before = torch.get_num_threads()  # module fixtures run before conftest's one-thread limit
    torch.set_num_threads(1)
    try:
        return train_tiny_lm(ex, tok, d_model=32, epochs=8, seed=0)
    finally:
        torch.set_num_threads(before)


def test_protocols_and_learning(lm):
    assert isinstance(lm, LanguageModel) and isinstance(lm, WhiteBoxLM)
    assert lm.generate(["the cat sat", "the dog ran"], max_new_tokens=4) == [
        "on the mat.",
        "under the rug.",
    ]
    # cut exactly before the stop string (the space stays), as in every backend
    assert lm.generate(["the cat sat"], max_new_tokens=8, stop=["mat"]) == ["on the "]


def test_score_equals_sum_of_next_token_log_probs(lm):
    vocab = list(range(len(lm.tokenizer)))
    prompt, cont = "the dog", " ran under"
    total, ctx = 0.0, prompt
    for word in cont.split():
        logits = lm.next_token_logits([ctx], vocab)[0]
        total += logits[lm.encode(word)[0]] - np.logaddexp.reduce(logits)
        ctx += " " + word
    got = lm.score([prompt, "the cat sat"], [cont, " on"])
    assert got[0] == pytest.approx(total, abs=1e-5)
    assert got[1] > lm.score(["the cat sat"], [" under"])[0]


def test_outputs_do_not_depend_on_the_batch(lm):
    ids = lm.encode("on under")
    alone = lm.next_token_logits(["the cat sat"], ids)
    mixed = lm.next_token_logits(["the the the dog ran on the", "the cat sat"], ids)[1:]
    np.testing.assert_allclose(alone, mixed, atol=1e-5)
    s1 = lm.generate(["the cat"], 4, temperature=1.5, seed=7)
    s2 = lm.generate(["the dog", "the cat"], 4, temperature=1.5, seed=7)[1:]
    assert s1 == s2


def test_hidden_states_and_steering(lm, seed):
    hs = lm.hidden_states(["the cat", "the dog ran"], [0, 1])
    assert [h.shape for h in hs] == [(2, 3, 32), (2, 4, 32)]
    v = np.random.default_rng(seed).standard_normal(32).astype(np.float32)
    with lm.steer({0: v}, positions=[1], scale=2.0):
        steered = lm.hidden_states(["the cat"], [0])[0][0]
        with lm.steer({0: v}, positions=slice(2, None)):  # nested blocks add up
            both = lm.hidden_states(["the cat"], [0])[0][0]
    base = hs[0][0]
    np.testing.assert_allclose(steered[1] - base[1], 2 * v, atol=1e-5)
    np.testing.assert_allclose(steered[[0, 2]], base[[0, 2]], atol=1e-6)
    np.testing.assert_allclose(both[2] - base[2], v, atol=1e-5)
    np.testing.assert_allclose(lm.hidden_states(["the cat"], [0])[0][0], base, atol=1e-6)
    before = lm.next_token_logits(["the cat"], [5, 6])
    with lm.steer({1: 50 * v}):  # steering the last block moves the output
        assert not np.allclose(lm.next_token_logits(["the cat"], [5, 6]), before)


def test_save_load_round_trip_and_load_lm(lm, tmp_path):
    lm.save(tmp_path / "m")
    again = load_lm(LMConfig(backend="tiny", path=str(tmp_path / "m")))
    assert again.name == lm.name
    ids = lm.encode("on under")
    np.testing.assert_array_equal(
        again.next_token_logits(["the cat sat"], ids), lm.next_token_logits(["the cat sat"], ids)
    )
    with pytest.raises(FileNotFoundError, match="not a tiny LM folder"):
        TinyLM.load(tmp_path)


def test_bad_input(lm):
    with pytest.raises(ValueError, match="prompts is empty"):
        lm.generate([])
    with pytest.raises(TypeError, match="one string"):
        lm.score("the cat", "sat")
    with pytest.raises(ValueError, match="max_new_tokens=0"):
        lm.generate(["a"], max_new_tokens=0)
    with pytest.raises(ValueError, match="temperature=-1"):
        lm.generate(["a"], temperature=-1)
    with pytest.raises(ValueError, match="longer than"):
        lm.generate(["a"], max_new_tokens=1000)
    with pytest.raises(ValueError, match="token id=1000000 is not allowed"):
        lm.next_token_logits(["a"], [10**6])
    with pytest.raises(ValueError, match="layer=5 is not allowed"):
        lm.hidden_states(["a"], [5])
    with pytest.raises(ValueError, match="shape"), lm.steer({0: np.ones(3)}):
        pass
    with pytest.raises(ValueError, match="len"):
        lm.score(["a", "b"], ["c"])
    with pytest.raises(ValueError, match=r"lm.path is empty"):
        load_lm(LMConfig(backend="tiny"))


def test_tokenizer_round_trip():
    tok = WordTokenizer.build(["Hello , world !\nbye"])
    assert tok.decode(tok.encode("Hello , world !\nbye")) == "Hello, world!\nbye"
    assert tok.encode("unknown")[0] == 1
    with pytest.raises(ValueError, match="duplicate"):
        WordTokenizer(["a", "a"])


def test_importing_core_lm_is_lazy():
    code = "import sys, iclr25.core.lm; print('transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_training_is_seeded():
    tok = WordTokenizer(["a", "b"])
    ex = [("a", " b"), ("b", " a")] * 8
    m1 = train_tiny_lm(ex, tok, d_model=8, n_heads=2, epochs=2, seed=3)
    m2 = train_tiny_lm(ex, tok, d_model=8, n_heads=2, epochs=2, seed=3)
    for a, b in zip(m1.model.parameters(), m2.model.parameters()):
        assert torch.equal(a, b)


def test_fit_tiny_lm_counts_only_the_targets_it_is_given():
    """The same sequences with and without "c" among the targets: only the model whose loss
    counts it learns "c" after "a b"; both learn "b" after "a"."""
    tok = WordTokenizer(["a", "b", "c"])
    a, b, c = (tok.encode(w)[0] for w in "abc")
    ids = torch.tensor([[BOS, a, b, c]] * 16)
    mask = torch.ones_like(ids, dtype=torch.bool)
    p_c = []
    for count_c in (False, True):
        targets = torch.full_like(ids, -100)
        targets[:, 1] = b
        if count_c:
            targets[:, 2] = c
        lm = fit_tiny_lm(ids, mask, targets, tok, d_model=16, n_heads=2, epochs=80, lr=1e-2)
        logits = lm.next_token_logits(["a", "a b"], [a, b, c])
        assert logits[0].argmax() == 1
        p = np.exp(logits[1] - logits[1].max())
        p_c.append(p[2] / p.sum())
    assert p_c[1] > 0.9 and p_c[0] < p_c[1] - 0.5
    with pytest.raises(ValueError, match="same"):
        fit_tiny_lm(ids, mask[:, :3], targets, tok)
