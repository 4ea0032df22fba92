"""Data: determinism, the attack word differs from the true class, paired images, errors."""

import numpy as np
import pytest

from iclr25.papers.contrastive_po import (
    CLASSES,
    HELDOUT_CLASSES,
    TRAIN_CLASSES,
    VOCAB,
    pretraining_set,
    reading_set,
    render_icon,
    tokenize,
    typographic_pairs,
)


def test_render_is_deterministic_and_sized():
    a = render_icon(3, np.random.default_rng(5), word=7, size=40)
    b = render_icon(3, np.random.default_rng(5), word=7, size=40)
    assert a.shape == (40, 40, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    c = render_icon(3, np.random.default_rng(6), word=7, size=40)
    assert not np.array_equal(a, c)


def test_typographic_pairs_deterministic_and_attack_differs():
    p = typographic_pairs(40, np.random.default_rng(1), TRAIN_CLASSES, size=32)
    q = typographic_pairs(40, np.random.default_rng(1), TRAIN_CLASSES, size=32)
    for f in ("clean", "typo", "labels", "written", "groups"):
        assert np.array_equal(getattr(p, f), getattr(q, f))
    assert np.all(p.written != p.labels)
    assert set(p.labels) <= set(TRAIN_CLASSES) and set(p.written) <= set(TRAIN_CLASSES)
    # The typographic image is the clean one plus text: most pixels are shared.
    same = (p.clean == p.typo).all(-1).mean(axis=(1, 2))
    assert np.all(same > 0.4) and np.all(same < 1.0)


def test_heldout_pairs_stay_in_their_classes():
    p = typographic_pairs(30, np.random.default_rng(2), HELDOUT_CLASSES, domain="outline")
    assert set(p.labels) | set(p.written) <= set(HELDOUT_CLASSES)
    assert p.classes == HELDOUT_CLASSES


def test_pretraining_set_kinds_captions_and_bias():
    d = pretraining_set(200, np.random.default_rng(3), group_bias=1.0, size=32)
    assert d.images.shape == (200, 32, 32, 3)
    for tok in d.tokens[d.kinds == 2]:  # "the word {class}" or "a {class} sign"
        words = [VOCAB[t] for t in tok]
        assert words[:2] == ["the", "word"] or words[2] == "sign"
    # The class word is in every caption.
    for tok, c in zip(d.tokens, d.labels, strict=True):
        assert CLASSES[c] in [VOCAB[t] for t in tok]
    # Full bias: even classes on "dots" (1), odd on "waves" (2).
    assert np.array_equal(d.groups, 1 + d.labels % 2)
    assert 0.35 < (d.kinds == 1).mean() < 0.65 and 0.18 < (d.kinds == 2).mean() < 0.42
    e = pretraining_set(200, np.random.default_rng(3), group_bias=1.0, size=32)
    assert np.array_equal(d.images, e.images) and np.array_equal(d.tokens, e.tokens)


def test_tokenize_pads_and_rejects():
    t = tokenize(["a photo of a star"])
    assert t.shape == (1, 6) and t[0, -1] == 0
    with pytest.raises(ValueError, match="'zebra'"):
        tokenize(["a zebra"])
    with pytest.raises(ValueError, match="1 to 6 words"):
        tokenize([""])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"c": 16}, "c=16"),
        ({"c": 0, "word": -1}, "word=-1"),
        ({"c": 0, "domain": "sketch"}, "domain='sketch'"),
        ({"c": 0, "colour": "pink"}, "colour='pink'"),
        ({"c": 0, "size": 8}, "size=8"),
        ({"c": 0, "text_only": True}, "word=None"),
    ],
)
def test_render_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        render_icon(rng=np.random.default_rng(0), **kwargs)


def test_pairs_and_pretraining_bad_input():
    with pytest.raises(ValueError, match="needs >= 2"):
        typographic_pairs(3, np.random.default_rng(0), (4,))
    with pytest.raises(ValueError, match="n=0"):
        typographic_pairs(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"group_bias=0.2"):
        pretraining_set(3, np.random.default_rng(0), group_bias=0.2)
    with pytest.raises(ValueError, match="own_word=nan"):
        pretraining_set(3, np.random.default_rng(0), own_word=float("nan"))


def test_reading_set():
    imgs, labels = reading_set(10, np.random.default_rng(4), HELDOUT_CLASSES, size=32)
    assert imgs.shape == (10, 32, 32, 3) and set(labels) <= set(HELDOUT_CLASSES)
    again, _ = reading_set(10, np.random.default_rng(4), HELDOUT_CLASSES, size=32)
    assert np.array_equal(imgs, again)
