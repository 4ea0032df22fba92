"""The `LanguageModel` protocol every backend implements, and the checks they share.

A language model here is a black box over *strings*: batched generation, the log-probability
of a continuation, and next-token logits for chosen token ids. White-box backends (`tiny`,
`hf`) also expose the residual stream: hidden states at chosen layers, and a context manager
that adds a vector to it (activation steering).

Conventions shared by every backend:

- Outputs are numpy arrays (float64 for log-probabilities and logits), never torch tensors, so
  callers do not depend on a backend's framework.
- `temperature=0` is greedy decoding. With `temperature > 0` the sample for one prompt depends
  only on `(seed, prompt)` (see `prompt_seed`), not on the batch it came in, so cached and fresh
  generations agree; draw several samples of one prompt with several seeds.
- `stop` strings end a generation; the returned text is cut before the first stop string.
- Layer `l` of a white-box model is the output of its `l`-th decoder block (0-based): the
  residual stream after that block, before any final norm.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from iclr25.core.checks import check_float, check_int


class LMError(RuntimeError):
    """A backend failed to answer (server unreachable, bad reply, unsupported request)."""


class LMConnectionError(LMError):
    """The server could not be reached (refused, timed out) after the allowed retries."""


class LMHTTPError(LMError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class LMResponseError(LMError):
    """The server answered, but not with the JSON this client expects."""


Positions = slice | Sequence[int] | None
"""Token positions to steer: None (every position, generated ones included), a slice, or
absolute indices counted from the first token of each (unpadded) sequence."""


@runtime_checkable
class LanguageModel(Protocol):
    """What every backend offers. All methods are batched over `prompts`.

    Attributes:
        name: `"<backend>:<model>"`, stable across runs of the same model (cache keys use it).
    """

    name: str

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """The continuation of each prompt (without the prompt), cut before any stop string."""
        ...

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Sum of the token log-probabilities of each continuation given its prompt.

        Shapes: (B,) float64.
        """
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without special tokens."""
        ...

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids."""
        ...

    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Logits of `token_ids` as the next token after each prompt.

        Black-box backends may return log-probabilities instead (they differ from logits by one
        constant per prompt, so differences and softmaxes over the chosen ids are the same).

        Shapes: (B, K) float64 for K = len(token_ids).
        """
        ...


@runtime_checkable
class WhiteBoxLM(LanguageModel, Protocol):
    """A backend whose residual stream can be read and written.

    Attributes:
        num_layers: Number of decoder blocks.
        hidden_size: Width D of the residual stream.
    """

    num_layers: int
    hidden_size: int

    def hidden_states(self, prompts: Sequence[str], layers: Sequence[int]) -> list[np.ndarray]:
        """The residual stream after each chosen block, one array per prompt.

        Shapes: list of B arrays (len(layers), T_b, D) float32, T_b the prompt's token count.
        """
        ...

    def steer(
        self,
        vectors: Mapping[int, np.ndarray],
        positions: Positions = None,
        scale: float = 1.0,
    ) -> contextlib.AbstractContextManager[None]:
        """Within the block, add `scale * vectors[l]` to the output of block `l` at `positions`
        in every forward pass (generation, scoring, logits, hidden states).

        Shapes: each vector (D,).
        """
        ...


# ---------------------------------------------------------------- shared checks


def check_prompts(prompts: Sequence[str], name: str = "prompts") -> list[str]:
    """A non-empty list of strings, or a TypeError/ValueError naming `name`."""
    if isinstance(prompts, str):
        raise TypeError(f"{name} must be a sequence of strings, got one string {prompts[:40]!r}")
    out = list(prompts)
    bad = [type(p).__name__ for p in out if not isinstance(p, str)]
    if bad:
        raise TypeError(f"{name} must contain strings only, got {sorted(set(bad))}")
    if not out:
        raise ValueError(f"{name} is empty: pass at least one string")
    return out


def check_pairs(prompts: Sequence[str], continuations: Sequence[str]) -> tuple[list, list]:
    """Two string lists of equal length."""
    p = check_prompts(prompts)
    c = check_prompts(continuations, "continuations")
    if len(p) != len(c):
        raise ValueError(f"len(prompts)={len(p)} != len(continuations)={len(c)}")
    return p, c


def check_sampling(max_new_tokens: int, temperature: float, stop: Sequence[str], seed: int):
    """Validate generation settings; returns `stop` as a tuple."""
    check_int("max_new_tokens", max_new_tokens, 1)
    check_float("temperature", temperature, 0)
    if isinstance(stop, str):
        stop = (stop,)
    stop = tuple(stop)
    if any(not isinstance(s, str) or not s for s in stop):
        raise ValueError(f"stop={stop!r} is not allowed: must be non-empty strings")
    check_int("seed", seed, 0)
    return stop


def check_token_ids(token_ids: Sequence[int], vocab_size: int | None) -> list[int]:
    """A non-empty list of ints in [0, vocab_size)."""
    ids = list(token_ids)
    if not ids:
        raise ValueError("token_ids is empty: pass at least one token id")
    high = None if vocab_size is None else vocab_size - 1
    return [check_int("token id", t, 0, high) for t in ids]


def check_layers(layers: Sequence[int], num_layers: int) -> list[int]:
    """Layer indices in [0, num_layers)."""
    out = [layers] if isinstance(layers, int) else list(layers)
    if not out:
        raise ValueError("layers is empty: pass at least one layer index")
    return [check_int("layer", layer, 0, num_layers - 1) for layer in out]


def check_vectors(
    vectors: Mapping[int, np.ndarray], num_layers: int, hidden_size: int
) -> dict[int, np.ndarray]:
    """Steering vectors: {layer: finite float vector of length hidden_size}."""
    if not isinstance(vectors, Mapping) or not vectors:
        raise ValueError("vectors must be a non-empty mapping {layer: vector}")
    check_layers(list(vectors), num_layers)
    out = {}
    for layer, v in vectors.items():
        a = np.asarray(v, dtype=np.float32)
        if a.shape != (hidden_size,):
            raise ValueError(
                f"steering vector of layer {layer} has shape {a.shape}: must be ({hidden_size},)"
            )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"steering vector of layer {layer} has non-finite entries")
        out[layer] = a
    return out


def position_mask(positions: Positions, pos: np.ndarray) -> np.ndarray:
    """Boolean mask over absolute positions `pos` (any shape) selected by `positions`."""
    if positions is None:
        return np.ones(pos.shape, dtype=bool)
    if isinstance(positions, slice):
        start, stop, step = positions.start or 0, positions.stop, positions.step or 1
        if start < 0 or (stop is not None and stop < 0) or step < 1:
            raise ValueError(f"positions={positions!r}: use non-negative bounds and step >= 1")
        ok = pos >= start
        if stop is not None:
            ok &= pos < stop
        return ok & ((pos - start) % step == 0)
    idx = np.asarray(list(positions), dtype=np.int64)
    if idx.size and idx.min() < 0:
        raise ValueError(f"positions={list(positions)!r}: use non-negative absolute indices")
    return np.isin(pos, idx)


def prompt_seed(seed: int, prompt: str) -> int:
    """The sampling seed of one prompt: depends on `(seed, prompt)` only."""
    digest = hashlib.sha256(f"{seed}\x00{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """`text` cut before the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
