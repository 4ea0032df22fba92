"""The benchmark protocol: scoring against GT (missing cameras count as 180 degrees), the
per-kind outlier scores, and the method rows on a small scene."""

import numpy as np
import pytest

from iclr25.papers.robust_sfm import (
    MISSING_DEG,
    SfMState,
    init_model,
    outlier_type_scores,
    run_methods,
    score_state,
)
from iclr25.papers.robust_sfm.pipeline import PipelineSettings


def _gt_state(scene, cameras):
    cameras = np.asarray(cameras)
    entries = np.flatnonzero(np.isin(scene.cam, cameras) & ~scene.is_outlier)
    tracks = np.unique(scene.track[entries])
    return SfMState(cameras, tracks, entries, scene.R[cameras], scene.t[cameras], scene.X[tracks])


def test_score_state_counts_missing_cameras(clean_scene):
    m = clean_scene.num_cameras
    full = score_state(_gt_state(clean_scene, np.arange(m)), clean_scene)
    assert full["rot"] < 1e-6 and full["cameras"] == 1.0 and full["registered"] == 1.0
    # 3 of 8 cameras reconstructed exactly: the other 5 count as 180, so the median is 180
    part = score_state(_gt_state(clean_scene, [0, 1, 2]), clean_scene)
    assert part["rot"] == MISSING_DEG and part["cameras"] == 3 / m
    assert part["rot_mean"] == pytest.approx(5 / m * MISSING_DEG)
    # below 3 cameras nothing is aligned; None is a reconstruction of nothing
    for state in (_gt_state(clean_scene, [0, 1]), None):
        s = score_state(state, clean_scene)
        assert s["rot"] == MISSING_DEG and np.isnan(s["trans"]) and s["registered"] == 0.0


def test_score_state_of_a_collapsed_reconstruction(clean_scene):
    """Every camera at one centre: the rotation is aligned from the orientations (exact here),
    the translation error is undefined; non-finite poses count as nothing reconstructed."""
    m = clean_scene.num_cameras
    state = _gt_state(clean_scene, np.arange(m))
    collapsed = SfMState(state.cameras, state.tracks, state.entries, state.R,
                         np.zeros_like(state.t), state.X)  # fmt: skip
    s = score_state(collapsed, clean_scene)
    assert s["rot"] < 1e-6 and np.isnan(s["trans"])
    bad = SfMState(state.cameras, state.tracks, state.entries, state.R * np.nan, state.t, state.X)
    assert score_state(bad, clean_scene)["rot"] == MISSING_DEG


def test_outlier_type_scores(outlier_scene):
    y, kind = outlier_scene.is_outlier, outlier_scene.outlier_type
    perfect = outlier_type_scores(y.copy(), outlier_scene)
    assert perfect["f1"] == 1.0 and perfect["recall_merge"] == 1.0
    only_uniform = outlier_type_scores(kind == 1, outlier_scene)
    assert only_uniform["recall_uniform"] == 1.0 and only_uniform["f1_uniform"] == 1.0
    assert only_uniform["recall_near_miss"] == 0.0 and only_uniform["precision"] == 1.0


def test_run_methods_rows(outlier_scene):
    nets = {
        "resfm": init_model(0, features=8),
        "resfm_rep": init_model(1, features=8),
        "esfm": init_model(0, features=8, outlier_head=False),
    }
    s = PipelineSettings(finetune_epochs=2, ba_solver="scipy", ba_max_iterations=5)
    rows = run_methods(outlier_scene, nets, ("resfm", "oracle", "esfm_noft"), s)
    assert set(rows) == {"resfm", "oracle", "esfm_noft"}
    for row in rows.values():
        assert 0 <= row["rot_before"] <= MISSING_DEG and 0 <= row["rot_after"] <= MISSING_DEG
    assert "f1_merge" in rows["resfm"] and "f1" not in rows["oracle"]
    with pytest.raises(ValueError, match="method"):
        run_methods(outlier_scene, nets, ("bogus",), s)
    with pytest.raises(ValueError, match="nets\\['esfm'\\]"):
        run_methods(outlier_scene, {"resfm": nets["resfm"]}, ("oracle",), s)
