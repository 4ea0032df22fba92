"""Bundle adjustment (scipy reference, pycolmap default) and DLT re-triangulation."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from iclr25.papers.robust_sfm import (
    align_cameras,
    bundle_adjust,
    bundle_adjust_pycolmap,
    bundle_adjust_scipy,
    make_scene,
    triangulate_all,
)


def perturb(scene, rng, rot=0.01, trans=0.05, pts=0.05):
    """Ground-truth poses and points with Gaussian noise (rotation vector, translation, points)."""
    m = scene.num_cameras
    R = Rotation.from_rotvec(rng.normal(0, rot, (m, 3))).as_matrix() @ scene.R
    t = scene.t + rng.normal(0, trans, (m, 3))
    X = scene.X + rng.normal(0, pts, scene.X.shape)
    return R, t, X


def _median_rot(res, scene):
    return float(np.median(align_cameras(res.R, res.t, scene.R, scene.t).rotation_errors_deg))


def test_scipy_ba_recovers_noiseless_gt(clean_scene, seed):
    s = clean_scene
    R0, t0, X0 = perturb(s, np.random.default_rng(seed))
    assert _median_rot(type("r", (), {"R": R0, "t": t0}), s) > 0.1
    res = bundle_adjust_scipy(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, loss="linear")
    assert res.cost < 1e-8 * res.initial_cost
    a = align_cameras(res.R, res.t, s.R, s.t)
    assert a.rotation_errors_deg.max() < 1e-4
    assert a.translation_errors.max() < 1e-5


def test_pycolmap_and_scipy_agree_on_a_noiseless_scene(clean_scene, seed):
    pytest.importorskip("pycolmap")
    s = clean_scene
    R0, t0, X0 = perturb(s, np.random.default_rng(seed))
    kw = dict(loss="cauchy", scale_px=2.0)
    a = bundle_adjust_pycolmap(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, **kw)
    b = bundle_adjust_scipy(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, **kw)
    assert _median_rot(a, s) < 1e-3 and _median_rot(b, s) < 1e-3
    Ra = align_cameras(a.R, a.t, s.R, s.t).R
    Rb = align_cameras(b.R, b.t, s.R, s.t).R
    assert (
        np.degrees(
            np.arccos(
                np.clip((np.trace(Ra @ Rb.transpose(0, 2, 1), axis1=1, axis2=2) - 1) / 2, -1, 1)
            )
        ).max()
        < 1e-3
    )
    assert a.cost < 1e-6 and b.cost < 1e-6


def test_pycolmap_cauchy_beats_linear_with_30pc_uniform_outliers(seed):
    pytest.importorskip("pycolmap")
    rng = np.random.default_rng(seed)
    s = make_scene(rng, num_cameras=10, num_points=150, outlier_rate=0.3, outlier_mix=(1, 0, 0))
    R0, t0, X0 = perturb(s, rng, rot=0.02, trans=0.1, pts=0.1)
    robust = bundle_adjust(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, loss="cauchy", scale_px=2.0)
    plain = bundle_adjust(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, loss="linear")
    assert _median_rot(robust, s) < 0.5  # sigma = 1 px: tenths of a degree at most
    assert _median_rot(robust, s) < 0.2 * _median_rot(plain, s)


def test_scipy_cauchy_beats_linear_with_30pc_uniform_outliers(seed):
    rng = np.random.default_rng(seed)
    s = make_scene(rng, num_cameras=6, num_points=60, outlier_rate=0.3, outlier_mix=(1, 0, 0),
                   dropout=0.0)  # fmt: skip
    R0, t0, X0 = perturb(s, rng, rot=0.005, trans=0.02, pts=0.02)
    robust = bundle_adjust_scipy(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, scale_px=2.0)
    plain = bundle_adjust_scipy(s.Ks, R0, t0, X0, s.cam, s.track, s.uv, loss="linear")
    assert _median_rot(robust, s) < 0.5 * _median_rot(plain, s)


def test_mask_excludes_entries_and_triangulation_skips_short_tracks(clean_scene):
    s = clean_scene
    j = int(s.track[0])
    es = np.flatnonzero(s.track == j)
    mask = np.ones(s.num_entries, bool)
    mask[es[1:]] = False  # track j keeps a single inlier view
    X, ok = triangulate_all(s.Ks, s.R, s.t, s.cam, s.track, s.uv, s.num_tracks, mask=mask)
    assert not ok[j] and np.isnan(X[j]).all()
    assert ok[np.arange(s.num_tracks) != j].all()
    res = bundle_adjust_scipy(s.Ks, s.R, s.t, s.X, s.cam, s.track, s.uv, mask=mask,
                              max_iterations=2)  # fmt: skip
    assert res.num_entries == s.num_entries - len(es)
    np.testing.assert_array_equal(res.X[j], s.X[j])  # untouched


def test_bad_ba_input(clean_scene):
    s = clean_scene
    args = (s.Ks, s.R, s.t, s.X, s.cam, s.track, s.uv)
    with pytest.raises(ValueError, match="loss='huber' is not allowed"):
        bundle_adjust_scipy(*args, loss="huber")
    with pytest.raises(ValueError, match="scale_px=0 is not allowed"):
        bundle_adjust_scipy(*args, scale_px=0)
    with pytest.raises(ValueError, match=r"uv has shape \(3, 2\)"):
        bundle_adjust_scipy(s.Ks, s.R, s.t, s.X, s.cam, s.track, s.uv[:3])
    with pytest.raises(ValueError, match="mask has shape"):
        bundle_adjust_scipy(*args, mask=np.ones(3, bool))
    with pytest.raises(ValueError, match="solver='ceres' is not allowed"):
        bundle_adjust(*args, solver="ceres")
    with pytest.raises(ValueError, match="num_tracks=-1"):
        triangulate_all(s.Ks, s.R, s.t, s.cam, s.track, s.uv, -1)
