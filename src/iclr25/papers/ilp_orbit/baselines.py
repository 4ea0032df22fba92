"""The augmentation schemes the paper compares with (all use the same GNN and code).

Every scheme, these and the paper's in `method.py`, is a function `(sym, rng) -> z` of the
ILP's `Symmetry` and a numpy Generator; the baselines only read the number of variables.

- `no_augmentation`: z = 0 (the plain GNN; Prop. 1 says it ties every orbit).
- `uniform_augmentation`: z_j ~ U(0, 1), coded as round(10^6 z_j) as in the official code.
- `position_augmentation`: a random permutation of 1..n over all variables.
"""

from __future__ import annotations

import numpy as np

from iclr25.papers.ilp_orbit.symmetry import Symmetry

UNIFORM_SCALE = 1e6


def no_augmentation(sym: Symmetry, rng: np.random.Generator | None = None) -> np.ndarray:
    """z = 0 (`rng` is not used). Shapes: -> (n,)."""
    return np.zeros(len(sym.orbit_id))


def uniform_augmentation(sym: Symmetry, rng: np.random.Generator) -> np.ndarray:
    """z_j ~ U(0, 1), as the integer round(10^6 z_j) that the sinusoidal code takes.

    Shapes: -> (n,).
    """
    return np.round(rng.random(len(sym.orbit_id)) * UNIFORM_SCALE)


def position_augmentation(sym: Symmetry, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of 1..n. Shapes: -> (n,)."""
    return rng.permutation(len(sym.orbit_id)) + 1.0
