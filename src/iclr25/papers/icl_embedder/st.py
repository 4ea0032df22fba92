"""A sentence-transformers-shaped front for `method.ICLEmbedder`, so retrieval code written for
`SentenceTransformer` models can use the ICL embedder unchanged.

`SentenceTransformerAdapter(embedder, task, examples)` answers `encode` (with
`prompt_name="query"` the query path: the task instruction and the fixed in-context examples
in front of every query; otherwise the corpus path), `encode_query`, `encode_document`,
`similarity` (cosine) and the size getters, with the argument names of sentence-transformers
6.3's `SentenceTransformer`. It is duck-typed: sentence-transformers itself is not needed,
only for its utilities (e.g. `sentence_transformers.util.semantic_search` on the outputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.core.checks import check_choice
from iclr25.papers.icl_embedder.method import ICLEmbedder


class SentenceTransformerAdapter:
    """`SentenceTransformer`-style `encode` over an `ICLEmbedder`.

    Args:
        embedder: An `ICLEmbedder` built with a tokenizer.
        task: The query instruction (the official `query_instruction_for_retrieval`); `None`
            requires `prompt=` on every query call.
        examples: The fixed in-context examples put in front of every query: (query,
            response) pairs or {"instruct", "query", "response"} dicts.
    """

    similarity_fn_name = "cosine"

    def __init__(
        self,
        embedder: ICLEmbedder,
        task: str | None = None,
        examples: Sequence[tuple[str, str] | Mapping[str, str]] = (),
    ) -> None:
        if not isinstance(embedder, ICLEmbedder):
            raise TypeError(f"embedder={type(embedder).__name__} is not allowed: an ICLEmbedder")
        self.embedder = embedder
        self.set_task(task, examples)
        self.prompts = {"query": task or "", "document": ""}
        self.max_seq_length = embedder.fmt.query_max_len

    def set_task(
        self, task: str | None, examples: Sequence[tuple[str, str] | Mapping[str, str]] = ()
    ) -> None:
        """Change the query instruction and examples."""
        self.task, self.examples = task, list(examples)

    def encode(
        self,
        sentences: str | Sequence[str],
        prompt_name: str | None = None,
        prompt: str | None = None,
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        convert_to_tensor: bool = False,
        normalize_embeddings: bool = False,
        **_: object,
    ) -> np.ndarray | torch.Tensor:
        """Embeddings of `sentences`: (N, D), or (D,) for a single string.

        `prompt_name="query"` (or any `prompt`) takes the query path with `prompt` (default the
        adapter's task) as the instruction; `None` or "document" the corpus path.
        """
        check_choice("prompt_name", prompt_name, (None, "query", "document"))
        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        if prompt_name == "query" or prompt is not None:
            task = prompt if prompt is not None else self.task
            if task is None:
                raise ValueError("a query needs an instruction: pass prompt= or set_task(...)")
            out = self.embedder.encode_queries(texts, task, self.examples, batch_size=batch_size)
        else:
            out = self.embedder.encode_corpus(texts, batch_size=batch_size)
        t = torch.from_numpy(out)
        if normalize_embeddings:
            t = F.normalize(t, dim=-1)
        if single:
            t = t[0]
        return t if convert_to_tensor or not convert_to_numpy else t.numpy()

    def encode_query(self, sentences: str | Sequence[str], **kwargs) -> np.ndarray | torch.Tensor:
        """`encode(..., prompt_name="query")`."""
        return self.encode(sentences, prompt_name="query", **kwargs)

    def encode_document(
        self, sentences: str | Sequence[str], **kwargs
    ) -> np.ndarray | torch.Tensor:
        """`encode(..., prompt_name="document")`."""
        return self.encode(sentences, prompt_name="document", **kwargs)

    def similarity(self, a, b) -> torch.Tensor:
        """Cosine similarities, (Na, Nb)."""
        a, b = (torch.as_tensor(np.asarray(x, dtype=np.float32)) for x in (a, b))
        a, b = (x[None] if x.ndim == 1 else x for x in (a, b))
        return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T

    def get_sentence_embedding_dimension(self) -> int:
        """D."""
        return self.embedder.dim

    get_embedding_dimension = get_sentence_embedding_dimension
