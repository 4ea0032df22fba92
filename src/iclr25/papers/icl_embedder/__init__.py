"""Making Text Embedders Few-Shot Learners (Chaofan Li, MingHao Qin, Shitao Xiao, Jianlyu Chen,
Kun Luo, Yingxia Shao, Defu Lian, Zheng Liu; ICLR 2025; arXiv 2409.15700; official code
FlagOpen/FlagEmbedding, read for its behaviour only, nothing copied).

A decoder-only embedder is trained with a random number (0 to 5) of in-batch (query, response)
examples in front of each query, so that it learns to use examples at inference. Here, at
laptop scale, in a synthetic attribute world where only the instruction or the examples say
which attribute "relevant" means. Modules:

- `data`: the attribute world, its training batches, evaluation sets and fixed examples;
- `prompt`: the tokenizer, the query format and the official example sampling and length rules;
- `metrics`: filtered Recall@1 and nDCG@10 with pessimistic ties, classification accuracy;
- `model`: the tiny transformers Llama backbone, position ids, the bidirectional mask, LoRA;
- `method`: pooling, InfoNCE and `ICLEmbedder` (`encode_queries`, `encode_corpus`);
- `training`: the causal-LM stage (`lm_packed`, `pretrain_lm`, `lm_probe`) and the contrastive
  loop;
- `pretrained`: the backbone recipe and its (not yet shipped) checkpoint;
- `evaluation`: the benchmark of every cell; `baselines`: the recipes and MiniLM;
- `st`: a sentence-transformers-style adapter; `demo`: SmolLM2 + LoRA; `tune`: the lr grid.

Not registered in `iclr25.papers.PAPERS` yet (issue 26, work in progress): the causal-LM stage
learns the world (with `training.lm_packed`) and the contrastive stage learns specific
retrieval and classification from it, but not yet ambiguous retrieval from examples, so there is
no shipped backbone, tuning or result.
"""
