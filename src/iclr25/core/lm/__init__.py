"""One language-model interface for the papers that evaluate or steer language models.

`LanguageModel` (generate, score, encode/decode, next_token_logits) and `WhiteBoxLM` (plus
hidden_states and steer) are protocols; the backends are

- `TinyLM` (`tiny`): a small transformer with a word-level tokenizer, trained in code on CPU;
- `HFLM` (`hf`): transformers from a local folder or GGUF file, offline (extra `llm`);
- `OpenAILM` (`openai`): any OpenAI-compatible server, standard library HTTP only.

`LMConfig` + `load_lm` build one from an experiment config; `CachedLM` caches generations.
Importing this package imports neither transformers nor any backend module: the backends load
on first use. See docs/lm.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr25.core.lm.base import (
    LanguageModel,
    LMConnectionError,
    LMError,
    LMHTTPError,
    LMResponseError,
    WhiteBoxLM,
)
from iclr25.core.lm.config import LMConfig, load_lm

if TYPE_CHECKING:
    from iclr25.core.lm.cache import CachedLM, GenerationCache
    from iclr25.core.lm.hf import HFLM, smollm2_path
    from iclr25.core.lm.openai_api import OpenAILM
    from iclr25.core.lm.tiny import TinyLM, fit_tiny_lm, train_tiny_lm
    from iclr25.core.lm.tokenizer import WordTokenizer

_LAZY = {
    "CachedLM": "cache",
    "GenerationCache": "cache",
    "HFLM": "hf",
    "smollm2_path": "hf",
    "OpenAILM": "openai_api",
    "TinyLM": "tiny",
    "train_tiny_lm": "tiny",
    "fit_tiny_lm": "tiny",
    "WordTokenizer": "tokenizer",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"iclr25.core.lm.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'iclr25.core.lm' has no attribute {name!r}")


__all__ = [
    "HFLM",
    "CachedLM",
    "GenerationCache",
    "LMConfig",
    "LMConnectionError",
    "LMError",
    "LMHTTPError",
    "LMResponseError",
    "LanguageModel",
    "OpenAILM",
    "TinyLM",
    "WhiteBoxLM",
    "WordTokenizer",
    "fit_tiny_lm",
    "load_lm",
    "smollm2_path",
    "train_tiny_lm",
]
