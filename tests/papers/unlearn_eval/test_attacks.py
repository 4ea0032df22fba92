"""The attacks: text transforms, relearning and the linear probe."""

import numpy as np
import pytest
import torch

from iclr25.core.testing import needs
from iclr25.papers.unlearn_eval import attacks as A


def test_adversarial_prefix():
    out = A.adversarial_prefix(["Where was X born ?", "Who ?"])
    assert out == [f"{A.JAILBREAK_PREFIX} Where was X born ?", f"{A.JAILBREAK_PREFIX} Who ?"]
    assert A.adversarial_prefix(["q"], "  hi  ") == ["hi q"]
    with pytest.raises(ValueError, match="prefix='  ' is not allowed"):
        A.adversarial_prefix(["q"], "  ")
    with pytest.raises(TypeError, match="questions must be strings, got int"):
        A.adversarial_prefix([3])
    with pytest.raises(ValueError, match="non-empty sequence"):
        A.adversarial_prefix("just one string")


def test_noise_questions_rate_and_determinism():
    qs = ["a b c d e f g h i j"] * 200
    vocab = ["Z"]
    out = A.noise_questions(qs, 0.1, vocab, np.random.default_rng(0))
    assert all(len(o.split()) == 10 for o in out)
    share = np.mean([w == "Z" for o in out for w in o.split()])
    assert abs(share - 0.1) < 0.02  # 2000 words, sd 0.007
    assert out == A.noise_questions(qs, 0.1, vocab, np.random.default_rng(0))
    assert A.noise_questions(qs[:3], 0.0, vocab, np.random.default_rng(1)) == qs[:3]
    all_z = A.noise_questions(qs[:3], 1.0, vocab, np.random.default_rng(1))
    assert all_z == [" ".join("Z" * 10)] * 3


def test_noise_questions_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"rate=1\.5 is not allowed"):
        A.noise_questions(["a"], 1.5, ["b"], rng)
    with pytest.raises(ValueError, match="rate=nan"):
        A.noise_questions(["a"], float("nan"), ["b"], rng)
    with pytest.raises(ValueError, match="vocabulary"):
        A.noise_questions(["a"], 0.1, ["two words"], rng)
    with pytest.raises(ValueError, match="vocabulary"):
        A.noise_questions(["a"], 0.1, [], rng)
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator, got int"):
        A.noise_questions(["a"], 0.1, ["b"], 0)


@pytest.fixture(scope="module")
def trained(corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import encode_qa, tiny_causal_lm
    from iclr25.papers.unlearn_eval.training import FinetuneConfig, finetune

    items = corpus.items[:12]
    enc = encode_qa(tokenizer, [q.question for q in items], [q.answer for q in items])
    model = tiny_causal_lm("gpt2", len(tokenizer), width=32, layers=4, heads=2, seed=0)
    finetune(model, enc, FinetuneConfig(steps=60, lr=1e-2, batch_size=12))
    return model, enc, items


@needs("transformers", "tokenizers")
def test_relearn_leaves_the_input_model_and_lowers_the_loss(trained, tokenizer):
    from iclr25.papers.unlearn_eval.method import UnlearnConfig, unlearn
    from iclr25.papers.unlearn_eval.metrics import perplexity

    model, enc, items = trained
    qs, ans = [q.question for q in items], [q.answer for q in items]
    unl = unlearn(model, enc, None, "ga", UnlearnConfig(steps=4, lr=3e-3, batch_size=4)).model
    before = {k: v.clone() for k, v in unl.state_dict().items()}
    back = A.relearn(unl, enc, A.RelearnConfig(epochs=2, lr=3e-3, batch_size=4))
    assert all(torch.equal(v, unl.state_dict()[k]) for k, v in before.items())
    assert perplexity(back, tokenizer, qs, ans).mean() < perplexity(unl, tokenizer, qs, ans).mean()
    same = A.relearn(unl, enc, A.RelearnConfig(epochs=2, lr=3e-3, batch_size=4))
    assert all(torch.equal(v, same.state_dict()[k]) for k, v in back.state_dict().items())
    with pytest.raises(ValueError, match="empty"):
        A.relearn(unl, enc.subset([]))
    with pytest.raises(TypeError, match="got list and RelearnConfig"):
        A.relearn(unl, [1])
    with pytest.raises(ValueError, match="epochs=0"):
        A.RelearnConfig(epochs=0)


@needs("transformers", "tokenizers")
def test_linear_probe_reads_the_middle_block(trained, tokenizer):
    from iclr25.papers.unlearn_eval.metrics import exact_memorization
    from iclr25.papers.unlearn_eval.models import collate

    model, enc, items = trained
    probe = A.fit_linear_probe(model, enc, steps=150, lr=3e-2)
    assert probe.layer == 2  # 4 blocks: the middle
    x, _ = collate(enc)
    logits = probe(x).logits
    hs = model(x, output_hidden_states=True).hidden_states[2]
    assert torch.allclose(logits, probe.readout(hs), atol=1e-5)
    assert logits.shape == (*x.shape, len(tokenizer))
    qs, ans = [q.question for q in items], [q.answer for q in items]
    # fitted on these very items, a linear readout of block 2 recovers most answer tokens
    assert exact_memorization(probe, tokenizer, qs, ans).mean() > 0.5
    # the model itself is untouched and frozen copies do not share parameters
    assert any(p.requires_grad is False for p in probe.parameters())
    again = A.fit_linear_probe(model, enc, steps=150, lr=3e-2)
    assert torch.equal(again.readout.weight, probe.readout.weight)


@needs("transformers", "tokenizers")
def test_linear_probe_bad_input(trained):
    model, enc, _ = trained
    with pytest.raises(ValueError, match="layer=4 is not allowed"):
        A.fit_linear_probe(model, enc, layer=4)
    with pytest.raises(ValueError, match="layer=0 is not allowed"):
        A.fit_linear_probe(model, enc, layer=0)
    with pytest.raises(ValueError, match="steps=0"):
        A.fit_linear_probe(model, enc, steps=0)
    with pytest.raises(ValueError, match="lr=nan"):
        A.fit_linear_probe(model, enc, lr=float("nan"))
    with pytest.raises(ValueError, match="empty"):
        A.fit_linear_probe(model, enc.subset([]))
    with pytest.raises(TypeError, match="Encoded"):
        A.fit_linear_probe(model, [[1, 2]])
