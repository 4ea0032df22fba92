"""The augmentation schemes the paper compares with (all use the same GNN and code).

- `no_augmentation`: z = 0 (the plain GNN; Prop. 1 says it ties every orbit).
- `uniform_augmentation`: z_j ~ U(0, 1), coded as round(10^6 z_j) as in the official code.
- `position_augmentation`: a random permutation of 1..n over all variables.
"""

from __future__ import annotations

import numpy as np

UNIFORM_SCALE = 1e6


def no_augmentation(n: int) -> np.ndarray:
    """z = 0. Shapes: -> (n,)."""
    return np.zeros(n)


def uniform_augmentation(n: int, rng: np.random.Generator) -> np.ndarray:
    """z_j ~ U(0, 1), as the integer round(10^6 z_j) that the sinusoidal code takes.

    Shapes: -> (n,).
    """
    return np.round(rng.random(n) * UNIFORM_SCALE)


def position_augmentation(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of 1..n. Shapes: -> (n,)."""
    return rng.permutation(n) + 1.0
