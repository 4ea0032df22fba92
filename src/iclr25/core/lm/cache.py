"""One cache of generations, so that expensive runs resume instead of regenerating.

    >>> lm = CachedLM(OpenAILM(url, "my-model"), "runs/generations.sqlite")
    >>> lm.generate(prompts, max_new_tokens=64)   # a rerun answers from the file

A generation is keyed by the backend and model (`lm.name`), the prompt and every sampling
setting (max_new_tokens, temperature, stop, seed). Entries are written to a SQLite file after
each batch, so an interrupted run keeps what it finished. Only `generate` is cached; the other
methods pass through.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.lm.base import LanguageModel, check_prompts, check_sampling


def generation_key(
    model: str,
    prompt: str,
    max_new_tokens: int,
    temperature: float,
    stop: Sequence[str],
    seed: int,
) -> str:
    """sha256 of the model name, prompt and sampling settings (greedy ignores the seed)."""
    blob = json.dumps(
        [
            model,
            prompt,
            int(max_new_tokens),
            float(temperature),
            list(stop),
            int(seed) if temperature > 0 else 0,
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class GenerationCache:
    """A SQLite table key -> generated text.

    Args:
        path: The database file (created with its folder if missing).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS gen (key TEXT PRIMARY KEY, text TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The cached texts of those `keys` that are present."""
        found: dict[str, str] = {}
        with self._connect() as db:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                marks = ",".join("?" * len(chunk))
                rows = db.execute(f"SELECT key, text FROM gen WHERE key IN ({marks})", chunk)
                found.update(rows.fetchall())
        return found

    def put_many(self, items: dict[str, str]) -> None:
        """Store `items` (key -> text)."""
        with self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO gen (key, text) VALUES (?, ?)", items.items())

    def __len__(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM gen").fetchone()[0])


class CachedLM:
    """Wrap a `LanguageModel` so that `generate` reads and fills a `GenerationCache`.

    Args:
        lm: The model.
        cache: A `GenerationCache` or the path of its file.
        chunk: Misses are generated and stored this many prompts at a time.
    """

    def __init__(self, lm: LanguageModel, cache: GenerationCache | str | Path, chunk: int = 64):
        self.lm = lm
        self.cache = cache if isinstance(cache, GenerationCache) else GenerationCache(cache)
        self.chunk = chunk
        self.name = lm.name
        self.hits = 0
        self.misses = 0

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """Like the wrapped model's `generate`, answering repeated requests from the cache."""
        prompts = check_prompts(prompts)
        stop = check_sampling(max_new_tokens, temperature, stop, seed)
        keys = [
            generation_key(self.name, p, max_new_tokens, temperature, stop, seed) for p in prompts
        ]
        found = self.cache.get_many(keys)
        todo = sorted({k: i for i, k in enumerate(keys) if k not in found}.values())
        self.hits += len(prompts) - len(todo)
        self.misses += len(todo)
        for i in range(0, len(todo), self.chunk):
            rows = todo[i : i + self.chunk]
            texts = self.lm.generate(
                [prompts[r] for r in rows], max_new_tokens, temperature, stop, seed
            )
            new = {keys[r]: t for r, t in zip(rows, texts)}
            self.cache.put_many(new)
            found.update(new)
        return [found[k] for k in keys]

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Passed through."""
        return self.lm.score(prompts, continuations)

    def encode(self, text: str) -> list[int]:
        """Passed through."""
        return self.lm.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """Passed through."""
        return self.lm.decode(ids)

    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Passed through."""
        return self.lm.next_token_logits(prompts, token_ids)

    def __getattr__(self, name: str) -> Any:  # white-box methods of the wrapped model
        return getattr(self.lm, name)
