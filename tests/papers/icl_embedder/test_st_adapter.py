"""The sentence-transformers front: shapes, the query and document paths, and
`sentence_transformers.util.semantic_search` agreeing with our own ranking."""

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from iclr25.core.testing import needs
from iclr25.papers.icl_embedder.data import World
from iclr25.papers.icl_embedder.method import ICLEmbedder
from iclr25.papers.icl_embedder.model import tiny_llama
from iclr25.papers.icl_embedder.prompt import build_tokenizer
from iclr25.papers.icl_embedder.st import SentenceTransformerAdapter

EX = [("blue cat spain", "blue cow peru")]
DOCS = ["red dog france", "blue cow japan", "green fox chile", "white pig kenya"]


@pytest.fixture(scope="module")
def adapter():
    world = World()
    tok = build_tokenizer(world)
    emb = ICLEmbedder(backbone=tiny_llama(len(tok), width=16, layers=1, heads=2,
                                          intermediate=32, seed=0), tokenizer=tok)  # fmt: skip
    return SentenceTransformerAdapter(emb, task="match colour", examples=EX)


def test_paths_and_shapes(adapter):
    q = adapter.encode_query(["red cat", "blue dog"])
    np.testing.assert_allclose(q, adapter.embedder.encode_queries(["red cat", "blue dog"],
                                                                  "match colour", EX))  # fmt: skip
    d = adapter.encode(DOCS)
    np.testing.assert_allclose(d, adapter.embedder.encode_corpus(DOCS))
    np.testing.assert_allclose(adapter.encode_document(DOCS), d)
    assert adapter.encode("red dog").shape == (16,)
    t = adapter.encode(DOCS, convert_to_tensor=True)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (4, 16)
    other = adapter.encode_query(["red cat"], prompt="match animal")
    assert not np.allclose(other, q[:1])
    assert adapter.similarity(q, d).shape == (2, 4)
    assert adapter.get_sentence_embedding_dimension() == adapter.get_embedding_dimension() == 16


def test_errors(adapter):
    with pytest.raises(ValueError, match="prompt_name"):
        adapter.encode(DOCS, prompt_name="passage")
    bare = SentenceTransformerAdapter(adapter.embedder)
    with pytest.raises(ValueError, match="instruction"):
        bare.encode_query(["red cat"])
    with pytest.raises(TypeError, match="ICLEmbedder"):
        SentenceTransformerAdapter(object())


@needs("sentence_transformers")
def test_semantic_search_matches_our_ranking(adapter):
    from sentence_transformers import util

    q = adapter.encode_query(["red cat", "green cow"], convert_to_tensor=True)
    d = adapter.encode(DOCS, convert_to_tensor=True)
    hits = util.semantic_search(q, d, top_k=4)
    ours = adapter.similarity(q, d).argsort(dim=1, descending=True)
    for i, h in enumerate(hits):
        assert [x["corpus_id"] for x in h] == ours[i].tolist()
