"""Metrics: the exact tracker, the oracle, SSIM/PSNR references, hand-made cases, bad input."""

import math

import numpy as np
import pytest

from iclr25.papers.video_icl import (
    ACTIONS,
    ALL_SCENES,
    classify_action,
    delta_nll,
    evaluate_episode,
    flip_rate,
    imitation_accuracy,
    make_episode,
    preference_accuracy,
    psnr,
    render_clip,
    ssim,
    step_actions,
    track_clip,
)


def test_tracker_is_exact_on_clean_clips(seed):
    rng = np.random.default_rng(seed)
    scenes = [ALL_SCENES[i] for i in rng.choice(len(ALL_SCENES), 12, replace=False)]
    for scene in scenes:
        for a in range(len(ACTIONS)):
            c = render_clip(scene, a, 6, n_static=2, start_pos=tuple(rng.integers(16, size=2)),
                            start_offset=tuple(rng.integers(16, size=2)))  # fmt: skip
            pos, off = track_clip(c.frames, scene)
            np.testing.assert_array_equal(pos, c.sprite_pos)
            np.testing.assert_array_equal(off, c.bg_offset)
            assert classify_action(c.frames, scene) == a
            np.testing.assert_array_equal(step_actions(c.frames, scene), [-1, a, a, a, a])


def test_static_clip_has_no_action():
    c = render_clip(ALL_SCENES[5], "up", 4, n_static=4)
    assert classify_action(c.frames, ALL_SCENES[5]) == -1


def test_oracle_imitates_exactly(split, seed):
    rng = np.random.default_rng(seed)
    for setting in ("similar", "contrast", "random"):
        for _ in range(3):
            ep = make_episode(rng, setting, split=split)
            out = evaluate_episode(None, None, ep, rng, oracle=True)
            assert out["correct"] == 1.0 and out["predicted"] == ep.demo_action
            if setting != "random" or ep.demo_action in (ep.action, ep.contrast.actions[0]):
                assert out["psnr"] == math.inf and out["ssim"] == pytest.approx(1.0)


def test_ssim_and_psnr_references():
    rng = np.random.default_rng(0)
    x = rng.random((2, 16, 16, 3))
    assert ssim(x, x) == pytest.approx(1.0)
    assert psnr(x, x) == math.inf  # not capped (documented)
    assert psnr(np.zeros((4, 4)), np.full((4, 4), 0.1)) == pytest.approx(20.0)
    # constant images: SSIM = (2 a b + C1) / (a^2 + b^2 + C1) (variances are 0)
    a, b, c1 = 0.3, 0.5, 0.01**2
    want = (2 * a * b + c1) / (a * a + b * b + c1)
    assert ssim(np.full((11, 11), a), np.full((11, 11), b)) == pytest.approx(want)
    # a brightness shift lowers SSIM below 1, negation of contrast gives a negative structure term
    assert ssim(x, np.clip(x + 0.2, 0, 1)) < 1
    assert ssim(x, 1 - x) < 0


def test_hand_made_scores():
    assert imitation_accuracy([0, 1, 2, -1], [0, 1, 3, 3]) == 0.5
    assert flip_rate([1, 0, 1], [1, 1, 1]) == pytest.approx(2 / 3)
    assert preference_accuracy([1.0, 2.0, 3.0, 1.0], [2.0, 1.0, 4.0, 1.0]) == pytest.approx(0.625)
    assert delta_nll([2.0, 3.0], [1.5, 3.5]) == pytest.approx(0.0)
    assert delta_nll([2.0, 3.0], [1.0, 2.0]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: psnr(np.zeros((4, 4)), np.zeros((4, 5))), "shapes"),
        (lambda: psnr(np.zeros((4, 4)), np.zeros((4, 4)), data_range=0), "data_range=0"),
        (lambda: ssim(np.zeros((8, 8)), np.zeros((8, 8))), "win_size=11"),
        (lambda: ssim(np.zeros((16, 16)), np.zeros((16, 16)), win_size=4), "win_size=4"),
        (lambda: ssim(np.full((16, 16), np.nan), np.zeros((16, 16))), "non-finite"),
        (lambda: delta_nll([1.0, np.inf], [1.0, 1.0]), "nll_without has non-finite"),
        (lambda: imitation_accuracy([1, 2], [1]), "must have the same shape"),
        (lambda: track_clip(np.zeros((3, 16, 15, 3)), ALL_SCENES[0]), r"\(T, S, S, 3\)"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
