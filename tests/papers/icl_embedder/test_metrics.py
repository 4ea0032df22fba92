"""Filtered Recall@1 and nDCG@10 with pessimistic ties, class accuracy: hand-computed values."""

import math

import numpy as np
import pytest

from iclr25.papers.icl_embedder.metrics import (
    class_accuracy,
    filtered_ranks,
    ndcg_at_10,
    recall_at_1,
)

SCORES = np.array(
    [
        [0.9, 0.1, 0.5, 0.3, 0.2],  # pos 0: rank 1
        [0.9, 0.1, 0.5, 0.3, 0.2],  # pos 2: 0.9 above -> rank 2
        [0.9, 0.1, 0.5, 0.3, 0.2],  # pos 4: 0.9, 0.5, 0.3 above -> rank 4
    ]
)
POS = np.array([0, 2, 4])


def test_hand_computed_ranks_recall_and_ndcg():
    assert filtered_ranks(SCORES, POS).tolist() == [1, 2, 4]
    assert recall_at_1(SCORES, POS) == pytest.approx(1 / 3)
    expected = (1 + 1 / math.log2(3) + 1 / math.log2(5)) / 3
    assert ndcg_at_10(SCORES, POS) == pytest.approx(expected)


def test_filtering_removes_other_relevant_documents():
    exclude = np.zeros((3, 5), dtype=bool)
    exclude[1, 0] = True  # query 1: the 0.9 document is also relevant, filtered out
    exclude[2, [0, 2]] = True
    assert filtered_ranks(SCORES, POS, exclude).tolist() == [1, 1, 2]
    assert recall_at_1(SCORES, POS, exclude) == pytest.approx(2 / 3)
    assert ndcg_at_10(SCORES, POS, exclude) == pytest.approx((2 + 1 / math.log2(3)) / 3)


def test_ties_count_against_the_positive():
    flat = np.zeros((2, 6))
    assert filtered_ranks(flat, np.array([0, 5])).tolist() == [6, 6]
    assert recall_at_1(flat, np.array([0, 5])) == 0.0
    one_tie = np.array([[1.0, 1.0, 0.0]])
    assert filtered_ranks(one_tie, np.array([1])).tolist() == [2]
    # a tied document that is filtered out no longer counts
    assert filtered_ranks(one_tie, np.array([1]), np.array([[True, False, False]])).tolist() == [1]


def test_ndcg_cuts_at_10():
    scores = -np.arange(12, dtype=float)[None, :]  # document j has rank j + 1
    assert ndcg_at_10(scores, np.array([9])) == pytest.approx(1 / math.log2(11))
    assert ndcg_at_10(scores, np.array([10])) == 0.0


def test_class_accuracy_strict_argmax():
    scores = np.array([[0.1, 0.9, 0.3], [0.5, 0.5, 0.1], [0.2, 0.1, 0.7], [1.0, 0.0, 0.0]])
    targets = np.array([1, 0, 2, 1])
    # query 1 ties for first: wrong (pessimistic), query 3 is wrong
    assert class_accuracy(scores, targets) == pytest.approx(0.5)
    assert class_accuracy(np.ones((4, 8)), np.zeros(4, dtype=int)) == 0.0


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: recall_at_1(np.zeros(5), np.array([0])), ValueError, r"scores has shape \(5,\)"),
        (
            lambda: recall_at_1(np.array([[0.0, np.nan]]), np.array([0])),
            ValueError,
            "non-finite",
        ),
        (lambda: recall_at_1(np.zeros((1, 3)), np.array([3])), ValueError, r"in \[0, 2\]"),
        (lambda: recall_at_1(np.zeros((1, 3)), np.array([0.0])), ValueError, "ints"),
        (lambda: recall_at_1(np.zeros((2, 3)), np.array([0])), ValueError, r"must be \(2,\)"),
        (
            lambda: ndcg_at_10(np.zeros((1, 3)), np.array([0]), np.zeros((1, 2), dtype=bool)),
            ValueError,
            r"exclude has shape \(1, 2\)",
        ),
        (
            lambda: ndcg_at_10(np.zeros((1, 3)), np.array([0]), np.zeros((1, 3))),
            ValueError,
            "bool",
        ),
        (
            lambda: ndcg_at_10(np.zeros((1, 3)), np.array([1]), np.array([[0, 1, 0]], dtype=bool)),
            ValueError,
            r"exclude\[0, pos\[0\]=1\] is True",
        ),
        (lambda: class_accuracy(np.zeros((2, 3)), np.array([0, 3])), ValueError, "targets"),
        (lambda: class_accuracy(np.zeros((2, 3)), np.array([[0, 1]])), ValueError, "targets"),
        (lambda: class_accuracy(np.array([["a"]]), np.array([0])), TypeError, "numeric"),
    ],
)
def test_bad_inputs_raise(call, error, match):
    with pytest.raises(error, match=match):
        call()
