"""RESfMNet: exact equivariance, official defaults, ESFM variant; the losses and the hook."""

import math

import numpy as np
import pytest
import torch

from iclr25.papers.robust_sfm import (
    RESfMNet,
    SetOfSetsLayer,
    balanced_bce,
    reprojection_loss,
    resfm_loss,
)


def _inputs(scene, dtype=torch.float64):
    xy = torch.tensor(scene.normalized_uv(), dtype=dtype)
    return xy, torch.from_numpy(scene.cam), torch.from_numpy(scene.track)


def test_official_defaults():
    net = RESfMNet()
    assert len(net.layers) == 3
    assert all(isinstance(la, SetOfSetsLayer) for la in net.layers)
    assert net.layers[0].entry.in_features == 2
    assert all(la.entry.out_features == 256 for la in net.layers)
    assert net.outlier_head is not None
    esfm = RESfMNet(outlier_head=False)
    assert esfm.outlier_head is None
    n_res = sum(p.numel() for p in net.parameters())
    n_esfm = sum(p.numel() for p in esfm.parameters())
    assert n_res - n_esfm == 256 * 256 + 256 + 256 + 1  # exactly the outlier head's MLP


def test_permutation_equivariance_over_cameras_and_tracks(outlier_scene, seed):
    s = outlier_scene
    torch.manual_seed(seed)
    net = RESfMNet(features=16).double()
    xy, cam, track = _inputs(s)
    m, n, E = s.num_cameras, s.num_tracks, s.num_entries
    g = torch.Generator().manual_seed(seed)
    pc, pt, pe = (
        torch.randperm(m, generator=g),
        torch.randperm(n, generator=g),
        torch.randperm(E, generator=g),
    )
    out = net(xy, cam, track, m, n)
    # relabel camera i as pc[i], track j as pt[j], and shuffle the order of the entries
    out2 = net(xy[pe], pc[cam[pe]], pt[track[pe]], m, n)
    tol = dict(rtol=0, atol=1e-12)
    torch.testing.assert_close(out2.R[pc], out.R, **tol)
    torch.testing.assert_close(out2.t[pc], out.t, **tol)
    torch.testing.assert_close(out2.X[pt], out.X, **tol)
    torch.testing.assert_close(out2.outlier_logit, out.outlier_logit[pe], **tol)
    # and the outputs do depend on the input (the test can fail)
    out3 = net(xy.flip(0), cam, track, m, n)
    assert (out3.X - out.X).abs().max() > 1e-6


def test_rotations_are_rotations(outlier_scene):
    net = RESfMNet(features=16).double()
    out = net(*_inputs(outlier_scene))
    R = out.R
    I = torch.eye(3, dtype=R.dtype).expand_as(R)
    torch.testing.assert_close(R @ R.transpose(1, 2), I, rtol=0, atol=1e-12)
    assert torch.all(torch.linalg.det(R) > 0)


def _gt(scene):
    f = lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=True)  # noqa: E731
    return f(scene.R), f(scene.t), f(scene.X)


def test_reprojection_loss_is_zero_at_gt(clean_scene):
    R, t, X = _gt(clean_scene)
    xy, cam, track = _inputs(clean_scene)
    loss = reprojection_loss(R, t, X, xy, cam, track)
    assert loss.item() < 1e-12
    loss.backward()
    assert torch.isfinite(X.grad).all() and torch.isfinite(t.grad).all()
    w = torch.full((len(cam),), 0.5, dtype=torch.float64)
    assert reprojection_loss(R, t, X, xy, cam, track, outlier_prob=w).item() < 1e-12


def test_hinge_for_points_behind_the_camera(clean_scene):
    s = clean_scene
    xy, cam, track = _inputs(s)
    R, t, X = _gt(s)
    j = int(track[0])
    c = int(cam[0])
    with torch.no_grad():  # move point j 0.5 behind camera c, along its optical axis
        centre = -R[c].T @ t[c]
        X[j] = centre - 0.5 * R[c][2]
    p = torch.einsum("eij,ej->ei", R[cam], X[track]) + t[cam]
    depth = p[:, 2].detach()
    assert depth[0] == pytest.approx(-0.5, abs=1e-9)
    behind = depth <= 1e-3
    proj = p[:, :2].detach() / depth[:, None]
    r = torch.where(behind, 1e-3 - depth, (proj - xy).norm(dim=1))
    loss = reprojection_loss(R, t, X, xy, cam, track, normalize_grad=False)
    assert loss.item() == pytest.approx(float(r.mean()), rel=1e-12)
    loss.backward()
    # the hinge's gradient on X[j] from camera c points along the camera's optical axis
    only = reprojection_loss(R.detach(), t.detach(), X, xy[:1], cam[:1], track[:1])
    X.grad = None
    only.backward()
    g = X.grad[j]
    cos = float(-g @ R[c][2].detach() / g.norm())
    assert cos == pytest.approx(1.0, abs=1e-9)  # descent moves the point forward


def test_normalize_grad_hook(clean_scene, seed):
    """One camera at the origin (R = I, t = 0): dL/dX_j is exactly dL/dp of j's entry."""
    rng = np.random.default_rng(seed)
    E = 40
    X = torch.tensor(rng.normal(0, 1, (E, 3)), dtype=torch.float64)
    X[:, 2] += 5.0
    X[:3, 2] = -1.0  # three entries behind the camera (hinge)
    xy = torch.tensor(rng.normal(0, 0.2, (E, 2)))
    R, t = torch.eye(3, dtype=torch.float64)[None], torch.zeros(1, 3, dtype=torch.float64)
    cam, track = torch.zeros(E, dtype=torch.long), torch.arange(E)
    w = torch.tensor(rng.uniform(0, 0.9, E))
    norms = {}
    for flag in (True, False):
        Xg = X.clone().requires_grad_(True)
        reprojection_loss(R, t, Xg, xy, cam, track, outlier_prob=w, normalize_grad=flag).backward()
        norms[flag] = Xg.grad.norm(dim=1)
    # with the hook: every entry's gradient has norm 1 / (number of valid entries)
    torch.testing.assert_close(norms[True], torch.full((E,), 1 / (E - 3), dtype=torch.float64))
    # without it: the norms vary with the residuals and the weights
    assert norms[False].std() > 1e-3 * norms[False].mean()


def test_balanced_bce_known_value():
    logit = torch.zeros(8, dtype=torch.float64)
    y = torch.tensor([1, 1, 0, 0, 0, 0, 0, 0], dtype=torch.bool)  # r = 0.25: outliers weigh 3
    assert float(balanced_bce(logit, y)) == pytest.approx((2 * 3 + 6) / 8 * math.log(2))
    none = torch.zeros(8, dtype=torch.bool)
    assert float(balanced_bce(logit, none)) == pytest.approx(math.log(2))
    with pytest.raises(ValueError, match=r"outlier_ratio=1\.5"):
        balanced_bce(logit, y, outlier_ratio=1.5)


def test_resfm_loss_parts_and_esfm(outlier_scene):
    s = outlier_scene
    xy, cam, track = _inputs(s, torch.float32)
    y = torch.from_numpy(s.is_outlier)
    torch.manual_seed(0)
    net = RESfMNet(features=16)
    out = net(xy, cam, track, s.num_cameras, s.num_tracks)
    loss, parts = resfm_loss(out, xy, cam, track, y)
    w = torch.sigmoid(out.outlier_logit)
    ref = reprojection_loss(out.R, out.t, out.X, xy, cam, track, outlier_prob=w)
    expected = 1.0 * ref + 0.1 * balanced_bce(out.outlier_logit, y)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    loss.backward()
    assert net.outlier_head[0].weight.grad.abs().sum() > 0  # w is not detached
    esfm = RESfMNet(features=16, outlier_head=False)
    out_e = esfm(xy, cam, track, s.num_cameras, s.num_tracks)
    assert out_e.outlier_logit is None
    _, parts_e = resfm_loss(out_e, xy, cam, track, y)
    assert set(parts_e) == {"reprojection"} and set(parts) == {"reprojection", "classification"}


def test_bad_network_input(outlier_scene):
    net = RESfMNet(features=8)
    xy, cam, track = _inputs(outlier_scene, torch.float32)
    with pytest.raises(ValueError, match=r"must be \(E, d_in\), \(E,\), \(E,\)"):
        net(xy, cam[:-1], track)
    with pytest.raises(ValueError, match="features=0 is not allowed"):
        RESfMNet(features=0)
    with pytest.raises(ValueError, match="hinge=0"):
        one = torch.zeros(1, dtype=torch.long)
        R, t, X, xy = torch.eye(3)[None], torch.zeros(1, 3), torch.ones(1, 3), torch.zeros(1, 2)
        reprojection_loss(R, t, X, xy, one, one, hinge=0)
