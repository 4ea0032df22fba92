"""Classical baselines through pycolmap (COLMAP incremental, GLOMAP global) and COLMAP export."""

import os
import tempfile

import numpy as np
import pytest

pycolmap = pytest.importorskip("pycolmap")

from iclr25.papers.robust_sfm import (  # noqa: E402
    ClassicalSettings,
    SfMState,
    align_cameras,
    export_colmap,
    make_scene,
    run_colmap,
    run_glomap,
    write_database,
)

RUNNERS = {"colmap": run_colmap, "glomap": run_glomap}


@pytest.fixture(scope="module")
def ring():
    """Clean ring scene (no outliers, 0.5 px noise): 10 cameras, about 120 tracks."""
    return make_scene(
        np.random.default_rng(7), num_cameras=10, num_points=150, noise_px=0.5, dropout=0.0
    )


@pytest.fixture(scope="module")
def results(ring):
    return {name: run(ring) for name, run in RUNNERS.items()}


def _valid(state, scene):
    m, n, E = len(scene.Ks), scene.num_tracks, len(scene.cam)
    for name, idx, hi in (("cameras", state.cameras, m), ("tracks", state.tracks, n)):
        assert np.all(np.diff(idx) > 0), name
        assert len(idx) == 0 or (idx.min() >= 0 and idx.max() < hi), name
    assert np.all(np.diff(state.entries) > 0)
    assert len(state.entries) == 0 or (state.entries.min() >= 0 and state.entries.max() < E)
    assert np.all(np.isin(scene.cam[state.entries], state.cameras))
    assert np.all(np.isin(scene.track[state.entries], state.tracks))
    assert state.R.shape == (len(state.cameras), 3, 3)
    assert state.t.shape == (len(state.cameras), 3)
    assert state.X.shape == (len(state.tracks), 3)


def test_database_holds_every_entry_and_one_match_per_shared_track(ring):
    s = ring
    lengths = np.bincount(s.track, minlength=s.num_tracks)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "db.db")
        pairs = write_database(s, path)
        db = pycolmap.Database.open(path)
        try:
            assert db.num_cameras() == db.num_images() == db.num_frames() == db.num_rigs() == 10
            assert db.num_keypoints() == len(s.cam)
            assert db.num_matches() == int(np.sum(lengths * (lengths - 1) // 2))
            assert db.num_matched_image_pairs() == len(pairs)
            # image 3's keypoints are its entries, in entry order
            kp = db.read_keypoints(4)
            np.testing.assert_allclose(kp[:, :2], s.uv[s.cam == 3], atol=1e-3)
            # the matches of pair (a, b) join the entries of the tracks they share
            a, b = pairs[0]
            matches = db.read_matches(a + 1, b + 1)
            ta, tb = s.track[s.cam == a], s.track[s.cam == b]
            np.testing.assert_array_equal(ta[matches[:, 0]], tb[matches[:, 1]])
            assert len(matches) == len(np.intersect1d(ta, tb))
        finally:
            db.close()


@pytest.mark.parametrize("name", list(RUNNERS))
def test_mappers_recover_a_clean_ring(results, ring, name):
    res = results[name]
    assert res.failed is None
    st = res.final
    _valid(st, ring)
    assert len(st.cameras) >= 8
    assert len(st.tracks) >= 0.8 * ring.num_tracks
    a = align_cameras(st.R, st.t, ring.R[st.cameras], ring.t[st.cameras])
    assert np.median(a.rotation_errors_deg) < 0.5
    assert np.all(st.reprojection_errors_px(ring) < 5.0)


@pytest.mark.parametrize("name", list(RUNNERS))
def test_mappers_run_with_many_uniform_outliers(name):
    s = make_scene(
        np.random.default_rng(8), num_cameras=8, num_points=200, noise_px=1.0, dropout=0.0,
        outlier_rate=0.4, outlier_mix=(1.0, 0.0, 0.0),
    )  # fmt: skip
    res = RUNNERS[name](s)
    assert res.failed is None
    _valid(res.final, s)
    assert len(res.final.cameras) >= 2
    # the model is built mostly from inliers
    assert s.is_outlier[res.final.entries].mean() < 0.2


def test_no_model_gives_an_empty_result_and_a_reason():
    # 50 % uniform outliers on 8 cameras x 100 points: no pair keeps 15 verified inliers
    s = make_scene(
        np.random.default_rng(8), num_cameras=8, num_points=100, noise_px=1.0,
        outlier_rate=0.5, outlier_mix=(1.0, 0.0, 0.0),
    )  # fmt: skip
    res = run_colmap(s)
    assert res.failed is not None and "no model" in res.failed
    assert res.num_models == 0 and len(res.final.cameras) == 0
    _valid(res.final, s)


@pytest.mark.parametrize("name", list(RUNNERS))
def test_mappers_are_deterministic_at_one_thread(ring, results, name):
    again = RUNNERS[name](ring, ClassicalSettings(num_threads=1, random_seed=0))
    first = results[name].final
    for key in ("cameras", "tracks", "entries", "R", "t", "X"):
        np.testing.assert_array_equal(getattr(again.final, key), getattr(first, key))


def test_export_round_trip(results, ring):
    st = results["glomap"].final
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "sparse", "0")
        export_colmap(results["glomap"], ring, out)
        rec = pycolmap.Reconstruction(out)
    assert rec.num_reg_images() == len(st.cameras)
    for k, i in enumerate(st.cameras):
        image = rec.image(int(i) + 1)
        assert image.num_points2D() == int(np.sum(ring.cam == i))
        pose = image.cam_from_world()
        np.testing.assert_allclose(pose.rotation.matrix(), st.R[k], atol=1e-9)
        np.testing.assert_allclose(pose.translation, st.t[k], atol=1e-9)
        K = ring.Ks[i]
        np.testing.assert_allclose(
            rec.camera(int(i) + 1).params, [K[0, 0], K[1, 1], K[0, 2], K[1, 2]]
        )
    assert rec.num_points3D() == len(st.tracks)
    entries = []
    for k, j in enumerate(st.tracks):
        p = rec.point3D(int(j) + 1)
        np.testing.assert_allclose(p.xyz, st.X[k], atol=1e-12)
        for el in p.track.elements:
            entries.append(np.flatnonzero(ring.cam == el.image_id - 1)[el.point2D_idx])
    np.testing.assert_array_equal(np.sort(entries), st.entries)


def test_export_of_an_sfm_state_keeps_gt_poses_and_points(ring):
    # a RESfM-style state (here the GT over every camera, track and entry)
    s = ring
    st = SfMState(np.arange(10), np.arange(s.num_tracks), np.arange(len(s.cam)), s.R, s.t, s.X)
    with tempfile.TemporaryDirectory() as d:
        export_colmap(st, s, d)
        rec = pycolmap.Reconstruction(d)
    assert rec.num_reg_images() == 10
    assert rec.num_points3D() == s.num_tracks
    assert rec.compute_num_observations() == len(s.cam)
    np.testing.assert_allclose(rec.image(3).cam_from_world().rotation.matrix(), s.R[2])
    np.testing.assert_allclose(rec.point3D(5).xyz, s.X[4])
    # 0.5 px noise: COLMAP's own mean reprojection error of the GT model is below 1 px
    assert rec.compute_mean_reprojection_error() < 1.0


def test_bad_input_raises_naming_the_value(ring, results):
    with pytest.raises(ValueError, match="max_num_trials"):
        ClassicalSettings(max_num_trials=0)
    with pytest.raises(ValueError, match="num_threads"):
        ClassicalSettings(num_threads=0)
    with pytest.raises(ValueError, match=r"mapper\.no_such_option"):
        run_colmap(ring, ClassicalSettings(mapper_options={"mapper.no_such_option": 1}))
    with pytest.raises(TypeError, match="scene"):
        run_colmap({"cam": ring.cam})
    bad = make_scene(np.random.default_rng(9), num_cameras=6, num_points=60)
    bad.Ks[:, 0, 1] = 1.0
    with pytest.raises(ValueError, match="skew"):
        run_glomap(bad)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model")
        with pytest.raises(ValueError, match="image_names"):
            export_colmap(results["colmap"], ring, path, image_names=["a.png"])
        assert not os.path.exists(path)  # nothing written
        with pytest.raises(TypeError, match="result"):
            export_colmap({"R": ring.R}, ring, path)
