"""Sprite videos: determinism, ground truth, held-out combinations, persistence statistics."""

import numpy as np
import pytest

from iclr25.papers.video_icl import (
    ACTIONS,
    ALL_SCENES,
    BACKGROUNDS,
    CONTRAST,
    Scene,
    background_texture,
    make_corpus,
    make_episode,
    make_two_shot_video,
    render_clip,
)


def test_seeded_determinism(seed, split):
    a = make_corpus(np.random.default_rng(seed), 5, p=0.7, split=split)
    b = make_corpus(np.random.default_rng(seed), 5, p=0.7, split=split)
    c = make_corpus(np.random.default_rng(seed + 1), 5, p=0.7, split=split)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.frames, y.frames)
        assert x.actions == y.actions and x.scenes == y.scenes
    assert any(not np.array_equal(x.frames, z.frames) for x, z in zip(a, c, strict=True))


def test_clip_shapes_and_ground_truth():
    scene = Scene("ring", "red", "checker")
    c = render_clip(scene, "right", 8, n_static=2, start_pos=(3, 14), start_offset=(5, 1))
    assert c.frames.shape == (8, 16, 16, 3) and c.frames.dtype == np.float32
    assert c.frames.min() >= 0 and c.frames.max() <= 1
    np.testing.assert_array_equal(c.frames[0], c.frames[1])  # static start
    assert not np.array_equal(c.frames[1], c.frames[2])
    # moves right by 1 px per frame after the static frames, wrapping around the torus
    np.testing.assert_array_equal(c.sprite_pos[:, 1], (14 + np.r_[0, 0, 1, 2, 3, 4, 5, 6]) % 16)
    assert (c.bg_offset == (5, 1)).all()
    pan = render_clip(scene, "pan_left", 8, n_static=1)
    np.testing.assert_array_equal(pan.bg_offset[:, 1], np.arange(8))
    np.testing.assert_array_equal(pan.sprite_pos[:, 1], np.arange(8))


def test_heldout_combinations_never_in_training(split):
    assert split.heldout_scenes and split.heldout_moves
    rng = np.random.default_rng(1)
    for kind in ("two_shot", "single_shot", "pairs"):
        for v in make_corpus(rng, 150, kind, p=0.5, split=split):
            assert v.frames.shape == (16, 16, 16, 3)
            for scene, a in zip(v.scenes, v.actions, strict=True):
                assert not split.is_heldout(scene, a)
                assert scene not in split.heldout_scenes
                assert (scene.shape, scene.colour, a) not in split.heldout_moves
    for setting in ("similar", "contrast", "random", "none"):
        ep = make_episode(rng, setting, split=split)
        assert split.is_heldout(ep.query.scenes[0], ep.action)
        for demo, a in ((ep.demo, ep.demo_action), (ep.control, None)):
            if demo is not None:
                assert split.is_heldout(demo.scenes[0], demo.actions[0])
                assert demo.scenes[0] != ep.query.scenes[0]
                assert a is None or demo.actions[0] == a


def test_persistence_statistics(split):
    """p = 1: the action always persists across the cut; p = 0: independent (P(same) = 1/K)."""
    K = len(ACTIONS)
    for p, lo, hi in [(1.0, 1.0, 1.0), (0.0, 1 / K - 0.06, 1 / K + 0.06), (0.7, 0.69, 0.81)]:
        rng = np.random.default_rng(2)
        vids = [make_two_shot_video(rng, p, split=split, shot_len=3, size=8) for _ in range(800)]
        same = np.mean([v.actions[0] == v.actions[1] for v in vids])
        assert lo <= same <= hi, (p, same)  # p = 0.7: 0.7 + 0.3 / 6 = 0.75
        assert all(v.scenes[0] != v.scenes[1] for v in vids)
        assert all(v.shot_starts == (0, 3) for v in vids)


def test_pairs_and_single_shot_corpora(split):
    rng = np.random.default_rng(4)
    for v in make_corpus(rng, 30, "pairs", split=split):
        assert v.actions[0] == v.actions[1] and v.scenes[0] != v.scenes[1]
        assert v.shot_starts == (0, 8) and v.n_static[1] == 2
        np.testing.assert_array_equal(v.frames[8], v.frames[9])  # the query's static prefix
    for v in make_corpus(rng, 30, "single_shot", split=split):
        assert v.shot_starts == (0,) and len(v.actions) == 1 and v.num_frames == 16
        steps = np.diff(v.sprite_pos, axis=0)
        assert len({tuple(d) for d in steps[v.n_static[0] :]}) <= 2  # one motion (mod wrap)


def test_episode_settings(split):
    rng = np.random.default_rng(3)
    for _ in range(20):
        ep = make_episode(rng, "similar", split=split)
        assert ep.demo_action == ep.action == ep.target_action
        assert (ep.query_prefix == ep.query_prefix[:1]).all()  # an ambiguous, static prefix
        ep = make_episode(rng, "contrast", split=split)
        assert ACTIONS[ep.demo_action] == CONTRAST[ACTIONS[ep.action]]
        assert ep.contrast.actions == (ep.demo_action,)
        np.testing.assert_array_equal(ep.contrast.frames[:2], ep.query.frames[:2])
        assert make_episode(rng, "none", split=split).demo is None


def test_all_scenes_distinct():
    assert len(set(ALL_SCENES)) == 4 * 6 * 4


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda r: make_two_shot_video(r, 1.5), "p=1.5"),
        (lambda r: make_two_shot_video(r, float("nan")), "p=nan"),
        (lambda r: make_two_shot_video(r, -0.1), "p=-0.1"),
        (lambda r: make_corpus(r, 3, "mixed"), "kind='mixed'"),
        (lambda r: make_episode(r, "similarish"), "setting='similarish'"),
        (lambda r: render_clip(ALL_SCENES[0], "jump", 8), "action='jump'"),
        (lambda r: Scene("star", "red", "dots"), "shape='star'"),
        (lambda r: make_two_shot_video(r, 0.5, shot_len=4, static_range=(1, 4)), "static_range"),
    ],
)
def test_bad_input_raises_naming_the_value(call, match):
    with pytest.raises(ValueError, match=match.replace("(", r"\(").replace("[", r"\[")):
        call(np.random.default_rng(0))


def test_grid_aligns_positions_offsets_and_motion(split):
    rng = np.random.default_rng(3)
    clips = make_corpus(rng, 20, "two_shot", split=split, size=16, speed=4, grid=4, shot_len=4)
    for c in clips:
        assert (c.sprite_pos % 4 == 0).all() and (c.bg_offset % 4 == 0).all()
    e = make_episode(rng, "similar", split=split, size=16, speed=4, grid=4, shot_len=4)
    for clip in (e.query, e.contrast, e.demo, e.control):
        assert (clip.sprite_pos % 4 == 0).all() and (clip.bg_offset % 4 == 0).all()
    with pytest.raises(ValueError, match="grid=3"):
        make_corpus(rng, 1, size=16, speed=4, grid=3)
    with pytest.raises(ValueError, match="grid=4"):
        make_episode(rng, "none", size=16, speed=2, grid=4)


def test_a_grid_step_pan_changes_every_texture_beyond_its_noise():
    for kind in BACKGROUNDS:
        tex = np.round(background_texture(kind, 16), 1)  # the faint noise rounded away
        left, right = np.roll(tex, -4, 1), np.roll(tex, 4, 1)
        assert not np.array_equal(left, tex) and not np.array_equal(right, tex), kind
        assert not np.array_equal(left, right), kind  # the two pan directions look different
