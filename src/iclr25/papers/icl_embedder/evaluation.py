"""The paper's evaluation on the attribute world: retrieval and classification with fixed
in-context examples per task, over {specific, ambiguous instruction} x {k examples} x
{seen, held-out tasks}.

`evaluate` takes any embedder with `encode_queries(texts, task, examples)` and
`encode_corpus(texts)` (`method.ICLEmbedder`, `baselines.MiniLMEmbedder`), so every method is
scored on the same queries, corpus and examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_int
from iclr25.papers.icl_embedder.data import (
    FORMS,
    EvalSet,
    World,
    eval_set,
    fixed_examples,
    instruction,
)
from iclr25.papers.icl_embedder.metrics import class_accuracy, ndcg_at_10, recall_at_1

SPLITS: tuple[str, ...] = ("seen", "heldout")


@dataclass(frozen=True)
class Benchmark:
    """One seed's test material, shared by every method.

    Attributes:
        sets: split -> `EvalSet` (seen tasks, held-out tasks).
        examples: (kind, task) -> the task's fixed (query, response) examples, disjoint from
            the test queries.
    """

    sets: dict[str, EvalSet]
    examples: dict[tuple[str, int], list[tuple[str, str]]]


def make_benchmark(
    world: World,
    *,
    n_per_task: int,
    n_random: int,
    n_examples: int = 3,
    rng: np.random.Generator,
) -> Benchmark:
    """Test sets of the seen and the held-out tasks and the fixed examples of every task."""
    n_examples = check_int("n_examples", n_examples, 1)
    sets = {
        "seen": eval_set(world, tasks=world.seen, n_per_task=n_per_task, n_random=n_random,
                         rng=rng),
        "heldout": eval_set(world, tasks=world.heldout, n_per_task=n_per_task,
                            n_random=n_random, rng=rng),
    }  # fmt: skip
    avoid = np.concatenate([s.query_entities for s in sets.values()])
    examples = {
        (kind, t): fixed_examples(world, task=t, rng=rng, n=n_examples, kind=kind, avoid=avoid)
        for kind in ("retrieval", "class")
        for t in range(world.n_attributes)
    }
    return Benchmark(sets, examples)


def evaluate(embedder, bench: Benchmark, *, ks: tuple[int, ...] = (0, 3)) -> dict[str, float]:
    """Scores of `embedder` in every cell, keys `<metric>_<form>_k<k>_<split>`.

    - `r1`, `ndcg10`: filtered Recall@1 and nDCG@10 of retrieval: each query, with its task's
      instruction (`match {attribute}` or `match item`) and the first k fixed examples, ranks
      its split's whole corpus (passages encoded once, without instruction or examples).
    - `cls`: classification accuracy: the query document, with `label {attribute}` or
      `label item` and k class examples, against its K value words as label texts.

    Also `r1_mean` (the mean of the `r1` cells) and `icl_gain_r1_ambiguous_<split>` (R@1 with
    the largest k minus with k = 0, ambiguous instruction).
    """
    out: dict[str, float] = {}
    for split in SPLITS:
        es = bench.sets[split]
        corpus = embedder.encode_corpus(es.corpus)
        labels = sorted({w for c in es.class_candidates for w in c})
        label_emb = dict(zip(labels, embedder.encode_corpus(labels), strict=True))
        cand = np.stack([np.stack([label_emb[w] for w in c]) for c in es.class_candidates])
        for form in FORMS:
            for k in ks:
                q_ret = np.zeros((len(es.queries), corpus.shape[1]), dtype=np.float32)
                q_cls = np.zeros_like(q_ret)
                for t in np.unique(es.tasks):
                    rows = np.flatnonzero(es.tasks == t)
                    texts = [es.queries[i] for i in rows]
                    for kind, dest in (("retrieval", q_ret), ("class", q_cls)):
                        ex = bench.examples[(kind, int(t))][:k]
                        dest[rows] = embedder.encode_queries(
                            texts, instruction(kind, int(t), form), ex
                        )
                cell = f"{form}_k{k}_{split}"
                scores = q_ret @ corpus.T
                out[f"r1_{cell}"] = recall_at_1(scores, es.pos, es.exclude)
                out[f"ndcg10_{cell}"] = ndcg_at_10(scores, es.pos, es.exclude)
                out[f"cls_{cell}"] = class_accuracy(np.einsum("qd,qcd->qc", q_cls, cand), es.tasks)
        kmax = max(ks)
        out[f"icl_gain_r1_ambiguous_{split}"] = (
            out[f"r1_ambiguous_k{kmax}_{split}"] - out[f"r1_ambiguous_k0_{split}"]
        )
    out["r1_mean"] = float(np.mean([v for key, v in out.items() if key.startswith("r1_")]))
    return out
