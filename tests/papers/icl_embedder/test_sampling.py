"""The official in-batch example draw and the k policies."""

import numpy as np
import pytest

pytest.importorskip("transformers")

from iclr25.papers.icl_embedder.prompt import POLICIES, draw_k, sample_example_ids

# chi-square critical value at p = 0.001 for 4 and 5 degrees of freedom
CHI2_4, CHI2_5 = 18.47, 20.52


def chi_square(counts):
    counts = np.asarray(counts, dtype=float)
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


def test_own_pair_never_drawn_examples_distinct_and_counted():
    rng = np.random.default_rng(0)
    for n in range(1, 9):
        for k in range(8):
            for i in range(n):
                for _ in range(5):
                    ids = sample_example_ids(i, n, k, rng)
                    assert i not in ids
                    assert len(set(ids)) == len(ids)
                    assert all(0 <= j < n for j in ids)
                    assert len(ids) == (k if n > k else n - 1)


def test_small_batch_gives_all_other_rows_instead_of_an_error():
    # the paper-time code drew k + 1 rows with no min and raised below k + 1 rows
    assert sorted(sample_example_ids(1, 3, 5, np.random.default_rng(0))) == [0, 2]
    assert sample_example_ids(0, 1, 3, np.random.default_rng(0)) == []


def test_examples_are_uniform_over_the_other_rows():
    rng = np.random.default_rng(1)
    counts = np.zeros(6, dtype=int)
    for _ in range(3000):
        for j in sample_example_ids(0, 6, 2, rng):
            counts[j] += 1
    assert counts[0] == 0
    assert chi_square(counts[1:]) < CHI2_4
    # the order is the draw's: each other row comes first about equally often
    first = np.zeros(6, dtype=int)
    for _ in range(3000):
        first[sample_example_ids(0, 6, 2, rng)[0]] += 1
    assert chi_square(first[1:]) < CHI2_4


def test_random_policy_is_uniform_on_0_to_5():
    rng = np.random.default_rng(2)
    counts = np.bincount([draw_k("random", rng) for _ in range(6000)], minlength=6)
    assert len(counts) == 6 and counts.min() > 0
    assert chi_square(counts) < CHI2_5


def test_fixed_policies():
    assert POLICIES["none"] == (0,) and POLICIES["always5"] == (5,)
    rng = np.random.default_rng(3)
    assert {draw_k("none", rng) for _ in range(50)} == {0}
    assert {draw_k("always5", rng) for _ in range(50)} == {5}


def test_same_seed_same_draws():
    def draws(seed):
        rng = np.random.default_rng(seed)
        out = []
        for i in range(16):
            k = draw_k("random", rng)
            out.append((k, sample_example_ids(i, 16, k, rng)))
        return out

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda r: draw_k("sometimes", r), ValueError, "policy='sometimes' is not allowed: use"),
        (lambda r: sample_example_ids(3, 3, 1, r), ValueError, "i=3 is not allowed"),
        (lambda r: sample_example_ids(0, 0, 1, r), ValueError, "n_pairs=0 is not allowed"),
        (lambda r: sample_example_ids(0, 4, -1, r), ValueError, "k=-1 is not allowed"),
        (lambda r: sample_example_ids(0, 4, 1.5, r), TypeError, "k=1.5 is not allowed"),
    ],
)
def test_bad_inputs_raise(call, error, match):
    with pytest.raises(error, match=match):
        call(np.random.default_rng(0))


def test_unknown_policy_lists_the_valid_ones():
    with pytest.raises(ValueError, match="'random', 'none', 'always5'"):
        draw_k("all", np.random.default_rng(0))
