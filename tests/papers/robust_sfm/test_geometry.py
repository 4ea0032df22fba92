"""Projection, DLT triangulation, similarity alignment and the paper's metrics."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from iclr25.papers.robust_sfm import (
    Similarity,
    align_cameras,
    align_similarity,
    apply_similarity,
    outlier_scores,
    project,
    project_entries,
    registered_cameras,
    triangulate_all,
    triangulate_dlt,
)


def test_projection_and_triangulation_round_trip(clean_scene):
    s = clean_scene
    uv, depth = project(s.Ks, s.R, s.t, s.X)
    np.testing.assert_allclose(uv[s.cam, s.track], s.uv, atol=1e-9)  # noiseless scene
    assert np.all(depth[s.cam, s.track] > 0)
    uv_e, depth_e = project_entries(s.Ks, s.R, s.t, s.X, s.cam, s.track)
    np.testing.assert_allclose(uv_e, s.uv, atol=1e-9)
    np.testing.assert_allclose(depth_e, depth[s.cam, s.track])
    X, ok = triangulate_all(s.Ks, s.R, s.t, s.cam, s.track, s.uv, s.num_tracks)
    assert ok.all()
    np.testing.assert_allclose(X, s.X, atol=1e-7)


def test_triangulation_with_two_views_and_noise(clean_scene, seed):
    s = clean_scene
    rng = np.random.default_rng(seed)
    j = int(np.argmax(s.track_lengths()))
    es = np.flatnonzero(s.track == j)
    uv = s.uv[es] + rng.normal(0, 0.5, (len(es), 2))
    X = triangulate_dlt(s.Ks[s.cam[es]], s.R[s.cam[es]], s.t[s.cam[es]], uv)
    assert np.linalg.norm(X - s.X[j]) < 0.05  # half a pixel of noise: centimetres at 6 units
    X2 = triangulate_dlt(s.Ks[s.cam[es[:2]]], s.R[s.cam[es[:2]]], s.t[s.cam[es[:2]]], s.uv[es[:2]])
    np.testing.assert_allclose(X2, s.X[j], atol=1e-7)


def test_triangulation_refuses_a_single_view(clean_scene):
    s = clean_scene
    with pytest.raises(ValueError, match=r"1 view\(s\).*needs >= 2 views"):
        triangulate_dlt(s.Ks[:1], s.R[:1], s.t[:1], s.uv[:1])
    with pytest.raises(ValueError, match=r"uv has shape \(3,\)"):
        triangulate_dlt(s.Ks[:1], s.R[:1], s.t[:1], np.zeros(3))


def test_alignment_recovers_a_known_similarity(seed):
    rng = np.random.default_rng(seed)
    src = rng.normal(size=(12, 3))
    Ra = Rotation.random(random_state=seed).as_matrix()
    dst = 2.5 * src @ Ra.T + np.array([1.0, -2.0, 0.5])
    sim = align_similarity(src, dst)
    assert sim.s == pytest.approx(2.5, rel=1e-10)
    np.testing.assert_allclose(sim.R, Ra, atol=1e-10)
    np.testing.assert_allclose(sim.t, [1.0, -2.0, 0.5], atol=1e-10)
    with pytest.raises(ValueError, match="src has shape"):
        align_similarity(src[:, :2], dst)
    with pytest.raises(ValueError, match="needs >= 3"):
        align_similarity(src[:2], dst[:2])


def test_similarity_keeps_projections_and_alignment_undoes_it(clean_scene, seed):
    s = clean_scene
    Ra = Rotation.random(random_state=seed).as_matrix()
    sim = Similarity(s=0.3, R=Ra, t=np.array([4.0, 1.0, -3.0]))
    R2, t2, X2 = apply_similarity(sim, s.R, s.t, s.X)
    uv2, _ = project_entries(s.Ks, R2, t2, X2, s.cam, s.track)
    np.testing.assert_allclose(uv2, s.uv, atol=1e-8)
    for mode in ("centers", "orientations"):
        a = align_cameras(R2, t2, s.R, s.t, rotation_from=mode)
        assert a.rotation_errors_deg.max() < 1e-5
        assert a.translation_errors.max() < 1e-8


def test_metrics_zero_on_gt_and_exact_on_a_known_offset(clean_scene):
    s = clean_scene
    a = align_cameras(s.R, s.t, s.R, s.t)
    assert a.rotation_errors_deg.max() < 1e-5 and a.translation_errors.max() < 1e-9
    # every camera turned by 5 degrees about its own optical axis, centres kept: no global
    # similarity can undo it, so the error after alignment is exactly 5 degrees
    Rz = Rotation.from_euler("z", 5.0, degrees=True).as_matrix()
    R = Rz @ s.R
    centres = -np.einsum("mji,mj->mi", s.R, s.t)
    t = -np.einsum("mij,mj->mi", R, centres)
    a = align_cameras(R, t, s.R, s.t)
    np.testing.assert_allclose(a.rotation_errors_deg, 5.0, atol=1e-6)
    assert a.translation_errors.max() < 1e-8
    with pytest.raises(ValueError, match="rotation_from='best'"):
        align_cameras(R, t, s.R, s.t, rotation_from="best")


def test_registered_cameras(clean_scene):
    s = clean_scene
    assert registered_cameras(s.Ks, s.R, s.t, s.X, s.cam, s.track, s.uv).all()
    t = s.t.copy()
    t[2] += [0.5, 0.0, 0.0]  # camera 2 off by half a unit: tens of pixels
    reg = registered_cameras(s.Ks, s.R, t, s.X, s.cam, s.track, s.uv)
    assert not reg[2] and reg[np.arange(len(reg)) != 2].all()
    with pytest.raises(ValueError, match="threshold_px=-1"):
        registered_cameras(s.Ks, s.R, s.t, s.X, s.cam, s.track, s.uv, threshold_px=-1)


def test_outlier_scores_known_values():
    p = np.array([True, True, False, False, True])
    y = np.array([True, False, True, False, True])
    sc = outlier_scores(p, y)
    assert sc.precision == pytest.approx(2 / 3)
    assert sc.recall == pytest.approx(2 / 3)
    assert sc.f1 == pytest.approx(2 / 3)
    assert sc.accuracy == pytest.approx(3 / 5)
    perfect = outlier_scores(y, y)
    assert perfect.f1 == 1.0 and perfect.accuracy == 1.0
    with pytest.raises(ValueError, match="must be equal"):
        outlier_scores(p[:3], y)
    with pytest.raises(TypeError, match="bool masks"):
        outlier_scores(p.astype(int), y)
