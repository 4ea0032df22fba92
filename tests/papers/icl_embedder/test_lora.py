"""LoRA through peft on the official targets: only adapters train; merging changes nothing."""

import sys

import pytest
import torch

from iclr25.core.testing import needs
from iclr25.papers.icl_embedder.method import ICLEmbedder, info_nce, pad_ids
from iclr25.papers.icl_embedder.model import OFFICIAL_TARGETS, add_lora, tiny_llama

# peft 0.21.2 calls a transformers 5 method that transformers deprecates; not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing`:FutureWarning")

QUERIES = [[2, 5, 6, 3], [2, 7, 8, 9, 3], [2, 10, 3]]
PASSAGES = [[2, 11 + i, 12 + i, 3] for i in range(6)]  # groups of G = 2


def lora_embedder(layers=2):
    model = add_lora(
        tiny_llama(30, width=16, layers=layers, heads=2, intermediate=32, seed=0), r=4, alpha=8
    )
    return model, ICLEmbedder(backbone=model, pad_id=0)


def train_steps(emb, steps=2, lr=0.05):
    """Plain SGD on the trainable parameters (no torch.optim: its first use costs seconds)."""
    params = [p for p in emb.parameters() if p.requires_grad]
    emb.train()
    for _ in range(steps):
        loss = info_nce(emb.embed_ids(QUERIES), emb.embed_ids(PASSAGES), in_batch=True)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
    emb.eval()


@needs("peft")
def test_adapters_on_every_official_target():
    model, _ = lora_embedder(layers=2)
    # names end in "<target>.lora_A.default.weight"
    adapted = {n.split(".")[-4] for n, _ in model.named_parameters() if "lora_A" in n}
    assert adapted == set(OFFICIAL_TARGETS)
    assert sum("lora_A" in n for n, _ in model.named_parameters()) == 2 * len(OFFICIAL_TARGETS)
    assert model.peft_config["default"].lora_dropout == 0.1  # the official default


@needs("peft")
def test_only_lora_parameters_train():
    model, emb = lora_embedder()
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" not in n}
    assert all(not p.requires_grad for n, p in model.named_parameters() if n in frozen)
    with torch.no_grad():
        before = emb.embed_ids(QUERIES)
    train_steps(emb)
    for n, p in model.named_parameters():
        if n in frozen:
            assert p.grad is None and torch.equal(p, frozen[n]), n
        else:
            assert p.grad is not None and torch.isfinite(p.grad).all(), n
    with torch.no_grad():
        after = emb.embed_ids(QUERIES)
    assert (after - before).abs().max() > 1e-4  # the adapters did change the embeddings


@needs("peft")
def test_merged_equals_unmerged():
    model, emb = lora_embedder()
    train_steps(emb)
    ids, mask = pad_ids(QUERIES + PASSAGES, pad_id=0)
    with torch.no_grad():
        unmerged = emb(ids, mask)
        base = model.merge_and_unload()
        merged = ICLEmbedder(backbone=base, pad_id=0)(ids, mask)
    assert not any("lora_" in n for n, _ in base.named_parameters())
    torch.testing.assert_close(merged, unmerged, atol=1e-5, rtol=0)


def test_add_lora_without_peft_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)
    model = tiny_llama(30, width=16, layers=1, heads=2, intermediate=32, seed=0)
    with pytest.raises(ImportError, match=r"iclr25\[embedder\]"):
        add_lora(model)


def test_add_lora_bad_arguments():
    model = tiny_llama(30, width=16, layers=1, heads=2, intermediate=32, seed=0)
    with pytest.raises(ValueError, match="targets='q_proj'"):
        add_lora(model, targets="q_proj")
    with pytest.raises(ValueError, match="r=0"):
        add_lora(model, r=0)
    with pytest.raises(ValueError, match=r"dropout=1\.0"):
        add_lora(model, dropout=1.0)
