"""Explicit random streams derived from one seed.

Library code takes a `numpy.random.Generator`, a `torch.Generator` or a seed, and never touches
global RNG state. `Rngs.child(name)` derives an independent stream per purpose ("data", "model",
"env") through `numpy.random.SeedSequence`, so adding draws to one stream never shifts another.

Only the runner and tests call `seed_everything`, as a safety net for third-party code that reads
global state.
"""

from __future__ import annotations

import contextlib
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.checks import check_int


def _key(name: str) -> int:
    return zlib.crc32(name.encode())


@dataclass(frozen=True)
class Rngs:
    """Random streams for one seed: numpy, torch and Python's `random`, all from one SeedSequence.

    Attributes:
        seed: The integer the streams derive from (for logging).
        seq: The SeedSequence this bundle is built on.
        np: A numpy Generator (PCG64).
        py: A `random.Random`.
    """

    seed: int
    seq: np.random.SeedSequence
    np: np.random.Generator = field(repr=False)
    py: random.Random = field(repr=False)

    def child(self, name: str) -> Rngs:
        """An independent bundle for the purpose `name` (stable across runs and processes)."""
        seq = np.random.SeedSequence(self.seq.entropy, spawn_key=(*self.seq.spawn_key, _key(name)))
        return _from_seq(self.seed, seq)

    def int_seed(self, bits: int = 63) -> int:
        """A deterministic integer seed from this bundle (for APIs that only take an int)."""
        return int(self.seq.generate_state(2, np.uint64)[0] % (1 << bits))

    def torch(self, device: str = "cpu"):
        """A fresh `torch.Generator` seeded from this bundle (same seed on every call)."""
        import torch

        return torch.Generator(device=device).manual_seed(self.int_seed())


def _from_seq(seed: int, seq: np.random.SeedSequence) -> Rngs:
    state = seq.generate_state(4, np.uint64)
    return Rngs(
        seed=seed,
        seq=seq,
        np=np.random.Generator(np.random.PCG64(seq)),
        py=random.Random(int(state[1])),
    )


def make_rngs(seed: int) -> Rngs:
    """All random streams for `seed` (a non-negative int)."""
    seed = check_int("seed", seed, 0)
    return _from_seq(seed, np.random.SeedSequence(seed))


def spawn_seed(seed: int, *names: str) -> int:
    """A stable child integer seed of `seed` for the path `names` (e.g. ("task", "3"))."""
    rngs = make_rngs(seed)
    for name in names:
        rngs = rngs.child(name)
    return rngs.int_seed()


@contextlib.contextmanager
def torch_seed(seed: int) -> Iterator[None]:
    """Run a block (e.g. `nn.Module` construction, whose default init draws from torch's global
    generator) under `seed`, restoring the global torch RNG state afterwards."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch global state. Only the runner and tests call this."""
    import torch

    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    torch.manual_seed(seed)
