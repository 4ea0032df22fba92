"""Augmentations, sinusoidal code, the GNN, SymILO alignment and the Top-m% error."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.core.testing import needs
from iclr25.papers.ilp_orbit.baselines import position_augmentation, uniform_augmentation
from iclr25.papers.ilp_orbit.data import bin_packing, slab_assignment
from iclr25.papers.ilp_orbit.ilp import solve
from iclr25.papers.ilp_orbit.method import (
    BipartiteGNN,
    align_labels,
    orbit_augmentation,
    orbit_plus_augmentation,
    orbit_spread,
    sinusoidal_code,
    top_m_error,
)
from iclr25.papers.ilp_orbit.reference import (
    brute_force_alignment,
    brute_force_top_m,
    gnn_by_loops,
)
from iclr25.papers.ilp_orbit.symmetry import Symmetry
from iclr25.papers.ilp_orbit.training import SCHEMES, augment, collate, forward, make_example

pytestmark = needs("pynauty", "highspy")


@pytest.fixture(scope="module")
def bpp_example():
    ilp = bin_packing(np.random.default_rng(11), n_items=5)
    return make_example(ilp, solve(ilp))


def test_sinusoidal_code_picks_sin_or_cos_by_parity():
    z = np.array([0.0, 1.0, 2.0, 1e6])
    code = sinusoidal_code(z)
    d = np.arange(1, 33)
    np.testing.assert_allclose(code[1], np.cos(1 / 1000 ** (2 * d / 32)), rtol=1e-6)
    np.testing.assert_allclose(code[2], np.sin(2 / 1000 ** (2 * d / 32)), rtol=1e-6)
    assert code.shape == (4, 32) and code.dtype == np.float32
    assert not code[0].any()  # z = 0 (no augmentation, trivial orbits) is the zero vector


def test_orbit_schemes_are_permutations_inside_orbits(bpp_example, seed):
    sym = bpp_example.symmetry
    rng = np.random.default_rng(seed)
    z = orbit_augmentation(sym, rng)
    for orb in sym.orbits:
        expected = [0.0] if len(orb) == 1 else np.arange(1, len(orb) + 1)
        np.testing.assert_array_equal(np.sort(z[orb]), expected)
    zp = orbit_plus_augmentation(sym, rng)
    for cls in sym.linked:  # one sample per linked class, shared element by element
        for row in cls:
            np.testing.assert_array_equal(zp[row], zp[cls[0]])
        np.testing.assert_array_equal(np.sort(zp[cls[0]]), np.arange(1, cls.shape[1] + 1))


def _no_symmetry(n):
    return Symmetry(np.zeros((0, n), dtype=np.int64), np.arange(n), (), None)


def test_baseline_schemes(seed):
    rng = np.random.default_rng(seed)
    pos = position_augmentation(_no_symmetry(7), rng)
    np.testing.assert_array_equal(np.sort(pos), np.arange(1, 8))
    u = uniform_augmentation(_no_symmetry(1000), rng)
    assert u.min() >= 0 and u.max() <= 1e6 and np.all(u == np.round(u)) and len(set(u)) > 990
    with pytest.raises(ValueError, match="scheme='orbit\\+' is not allowed"):
        augment("orbit+", None, rng)


def test_gnn_matches_the_edge_by_edge_reference(bpp_example, seed):
    with torch_seed(seed):
        model = BipartiteGNN(emb=16)
    code = sinusoidal_code(orbit_plus_augmentation(bpp_example.symmetry, np.random.default_rng(1)))
    with torch.no_grad():
        fast = forward(model, collate([bpp_example], [code]))
    slow = gnn_by_loops(model, bpp_example.graph, code)
    np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=1e-4, atol=1e-5)


def test_gnn_is_permutation_equivariant(seed):
    rng = np.random.default_rng(seed)
    ilp = slab_assignment(rng)
    vp, cp = rng.permutation(ilp.num_vars), rng.permutation(ilp.num_cons)
    a, b = make_example(ilp), make_example(ilp.permuted(vp, cp))
    z = rng.random(ilp.num_vars) * 100
    code_a = sinusoidal_code(z)
    code_b = np.empty_like(code_a)
    code_b[vp] = code_a
    with torch_seed(seed):
        model = BipartiteGNN(emb=16)
    with torch.no_grad():
        out_a = forward(model, collate([a], [code_a]))
        out_b = forward(model, collate([b], [code_b]))
    np.testing.assert_allclose(out_b.numpy()[vp], out_a.numpy(), rtol=1e-4, atol=1e-5)


def test_prop1_ties_on_orbits_for_any_weights_and_augmentation_breaks_them(bpp_example, seed):
    with torch_seed(seed):  # float64: Prop. 1 is exact; float32 sums round differently
        model = BipartiteGNN(emb=32).double()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # weights away from the initialisation
        for p in model.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    sym = bpp_example.symmetry
    rng = np.random.default_rng(seed)
    for scheme in SCHEMES:
        code = sinusoidal_code(augment(scheme, sym, rng))
        with torch.no_grad():
            logits = forward(model, collate([bpp_example], [code])).numpy()
        spread = orbit_spread(logits, sym)
        if scheme == "noaug":
            assert spread.max_spread <= 1e-9
        else:
            assert spread.min_spread > 1e-6


@pytest.mark.parametrize("family", [bin_packing, slab_assignment])
def test_alignment_matches_brute_force_and_keeps_the_label_optimal(family, seed):
    rng = np.random.default_rng(seed)
    kw = {"n_items": 5} if family is bin_packing else {"n_orders": 5, "n_slabs": 4}
    ilp = family(rng, **kw)
    ex = make_example(ilp, solve(ilp))
    cols = ex.symmetry.columns
    prob = rng.random(ilp.num_vars)
    aligned = align_labels(prob, ex.label, cols)
    ref = brute_force_alignment(prob, ex.label, cols)
    assert prob @ aligned == pytest.approx(prob @ ref, abs=1e-12)
    assert prob @ aligned >= prob @ ex.label - 1e-12
    assert ilp.max_violation(aligned) <= 1e-9  # a symmetric image of an optimal solution ...
    assert ilp.objective(aligned) == pytest.approx(ilp.objective(ex.label))  # ... is optimal
    np.testing.assert_array_equal(align_labels(prob, ex.label, None), ex.label)


def test_top_m_error_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    ilp = slab_assignment(rng, n_orders=5, n_slabs=4)
    ex = make_example(ilp, solve(ilp))
    prob = np.clip(rng.random(ilp.num_vars) + 0.4 * (ex.label - 0.5), 0, 1)
    fr = (0.3, 0.5, 0.7, 0.9, 1.0)
    np.testing.assert_allclose(
        top_m_error(prob, ex.label, ex.symmetry.columns, fr),
        brute_force_top_m(prob, ex.label, ex.symmetry.columns, fr),
    )


def test_top_m_error_of_a_symmetric_image_of_the_label_is_zero(seed):
    rng = np.random.default_rng(seed)
    ilp = bin_packing(rng, n_items=6)
    ex = make_example(ilp, solve(ilp))
    cols = ex.symmetry.columns
    image = ex.label.copy()
    image[cols.matrix[:, rng.permutation(cols.num_columns)]] = ex.label[cols.matrix]
    prob = 0.1 + 0.8 * image
    assert not np.array_equal(image, ex.label) or cols.num_columns == 1
    np.testing.assert_array_equal(top_m_error(prob, ex.label, cols), [0, 0, 0, 0])
    # without the column structure the same prediction counts errors
    assert top_m_error(prob, ex.label, None)[-1] > 0 or np.array_equal(image, ex.label)
