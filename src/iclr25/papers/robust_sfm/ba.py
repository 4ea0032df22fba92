"""Bundle adjustment with fixed intrinsics, and DLT re-triangulation of all tracks.

Two solvers with one signature and one result type:

- `bundle_adjust_pycolmap` (the default, as in the paper): builds a `pycolmap.Reconstruction`
  from our arrays with the pycolmap 4.x API (a camera per image with a trivial rig, an image
  per camera with a trivial frame and its pose, a 3D point per track) and runs
  `pycolmap.bundle_adjustment` with a Cauchy loss; focal length, principal point and extra
  parameters are fixed. Needs the `sfm` extra (pycolmap 4.2.1).
- `bundle_adjust_scipy` (the reference): `scipy.optimize.least_squares` (trf) over angle-axis
  rotations, translations and points, with the sparse Jacobian pattern, `loss` and a pixel
  `f_scale`; camera 0's pose is held fixed (gauge).

# DEVIATION: scipy applies the robust loss to each residual *component* (x and y separately),
# Ceres to each observation's 2-vector. Both use rho(s) = a^2 log(1 + s / a^2) with a =
# `scale_px`; `BAResult.cost` is always computed here in the Ceres convention, per observation,
# so the two solvers' costs are comparable.

Only entries of tracks with >= 2 used entries (and a finite point) enter the problem; other
points come back unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares
from scipy.sparse import coo_matrix
from scipy.spatial.transform import Rotation

from iclr25.core.checks import check_float, check_int
from iclr25.papers.robust_sfm.geometry import project_entries, triangulate_dlt

__all__ = [
    "BA_LOSSES",
    "BAResult",
    "bundle_adjust",
    "bundle_adjust_pycolmap",
    "bundle_adjust_scipy",
    "robust_cost",
    "triangulate_all",
]

BA_LOSSES = ("cauchy", "linear")


@dataclass
class BAResult:
    """A refined reconstruction.

    Attributes:
        R, t: world-to-camera poses, (m, 3, 3) and (m, 3).
        X: points, (n, 3) (unchanged, possibly NaN, for tracks not in the problem).
        cost: final robust cost, Ceres convention (`robust_cost`), over the used entries.
        initial_cost: the same at the start.
        num_entries: entries in the problem.
        seconds: wall time of the solve (construction included).
    """

    R: np.ndarray
    t: np.ndarray
    X: np.ndarray
    cost: float
    initial_cost: float
    num_entries: int
    seconds: float


def robust_cost(
    Ks, R, t, X, cam, track, uv, *, loss: str = "cauchy", scale_px: float = 1.0
) -> float:
    """0.5 * sum_e rho(||proj_e - uv_e||^2) in pixels; rho = a^2 log(1 + s/a^2) or s.

    Shapes:
        Ks, R: (m, 3, 3), t: (m, 3), X: (n, 3), cam, track: (E,), uv: (E, 2) -> float
    """
    proj, _ = project_entries(Ks, R, t, X, cam, track)
    s = ((proj - uv) ** 2).sum(axis=1)
    if loss == "cauchy":
        return float(0.5 * np.sum(scale_px**2 * np.log1p(s / scale_px**2)))
    return float(0.5 * np.sum(s))


def _check_inputs(Ks, R, t, X, cam, track, uv, mask, loss, scale_px):
    if loss not in BA_LOSSES:
        raise ValueError(f"loss={loss!r} is not allowed: must be one of {BA_LOSSES}")
    scale_px = check_float("scale_px", scale_px, 0, None, low_open=True)
    Ks, R, t, X, uv = (np.asarray(a, np.float64) for a in (Ks, R, t, X, uv))
    cam, track = np.asarray(cam, np.int64), np.asarray(track, np.int64)
    m, n, E = len(R), len(X), len(cam)
    for name, a, shape in (
        ("Ks", Ks, (m, 3, 3)), ("R", R, (m, 3, 3)), ("t", t, (m, 3)), ("X", X, (n, 3)),
        ("track", track, (E,)), ("uv", uv, (E, 2)),
    ):  # fmt: skip
        if a.shape != shape:
            raise ValueError(f"{name} has shape {a.shape}: must be {shape}")
    if E and (cam.min() < 0 or cam.max() >= m or track.min() < 0 or track.max() >= n):
        raise ValueError(f"cam must be in [0, {m}) and track in [0, {n})")
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(t)) and np.all(np.isfinite(uv))):
        raise ValueError("R, t and uv must be finite")
    use = np.ones(E, bool) if mask is None else np.asarray(mask, bool)
    if use.shape != (E,):
        raise ValueError(f"mask has shape {use.shape}: must be ({E},)")
    use &= np.all(np.isfinite(X), axis=1)[track]
    counts = np.bincount(track[use], minlength=n)
    use &= counts[track] >= 2
    return Ks, R, t, X, cam, track, uv, use, scale_px


def bundle_adjust_scipy(
    Ks: np.ndarray,
    R: np.ndarray,
    t: np.ndarray,
    X: np.ndarray,
    cam: np.ndarray,
    track: np.ndarray,
    uv: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    loss: str = "cauchy",
    scale_px: float = 1.0,
    max_iterations: int = 300,
) -> BAResult:
    """Reference BA: `scipy.optimize.least_squares` (trf, sparse Jacobian, `x_scale="jac"`,
    LSMR steps at tolerance 1e-12).

    Args:
        Ks, R, t, X: intrinsics (fixed), initial poses and points.
        cam, track, uv: the observations.
        mask: entries to use (e.g. predicted inliers); default all.
        loss: "cauchy" (robust) or "linear" (plain least squares).
        scale_px: the loss's scale a, in pixels.
        max_iterations: `max_nfev` of least_squares (300, as pycolmap's iterations; the robust
            solve of an 8-camera scene needs about 80-110 evaluations).

    Shapes:
        Ks, R: (m, 3, 3), t: (m, 3), X: (n, 3), cam, track: (E,), uv: (E, 2), mask: (E,)
        -> BAResult
    """
    t0 = time.perf_counter()
    Ks, R, t, X, cam, track, uv, use, scale_px = _check_inputs(
        Ks, R, t, X, cam, track, uv, mask, loss, scale_px
    )
    max_iterations = check_int("max_iterations", max_iterations, 1)
    m = len(R)
    c, j, z = cam[use], track[use], uv[use]
    pts = np.unique(j)
    pidx = np.full(len(X), -1)
    pidx[pts] = np.arange(len(pts))
    free = np.arange(1, m)  # camera 0 fixed (gauge)
    cidx = np.full(m, -1)
    cidx[free] = np.arange(len(free))
    nc, npt = 6 * len(free), 3 * len(pts)
    K = Ks[c]

    def unpack(p):
        Rv = R.copy()
        tv = t.copy()
        cp = p[:nc].reshape(-1, 6)
        Rv[free] = Rotation.from_rotvec(cp[:, :3]).as_matrix()
        tv[free] = cp[:, 3:]
        return Rv, tv, p[nc:].reshape(-1, 3)

    def residuals(p):
        Rv, tv, Xp = unpack(p)
        xc = np.einsum("eij,ej->ei", Rv[c], Xp[pidx[j]]) + tv[c]
        h = np.einsum("eij,ej->ei", K, xc)
        return (h[:, :2] / h[:, 2:3] - z).ravel()

    # sparsity: each observation's 2 residuals depend on its camera's 6 and its point's 3
    E = len(c)
    rows, cols = [], []
    has = cidx[c] >= 0
    for k in range(6):
        for r in (0, 1):
            rows.append(2 * np.flatnonzero(has) + r)
            cols.append(6 * cidx[c[has]] + k)
    for k in range(3):
        for r in (0, 1):
            rows.append(2 * np.arange(E) + r)
            cols.append(nc + 3 * pidx[j] + k)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    sparsity = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(2 * E, nc + npt)).tocsr()
    p0 = np.concatenate(
        [np.c_[Rotation.from_matrix(R[free]).as_rotvec(), t[free]].ravel(), X[pts].ravel()]
    )
    initial = robust_cost(Ks, R, t, X, cam[use], track[use], uv[use], loss=loss, scale_px=scale_px)
    # tight LSMR tolerances: with the default ones the robust (Cauchy) solve needs ~3x more
    # evaluations (measured on an 8-camera noiseless scene: 269 instead of 76)
    sol = least_squares(
        residuals, p0, jac_sparsity=sparsity, method="trf", loss=loss, f_scale=scale_px,
        x_scale="jac", max_nfev=max_iterations, tr_options={"atol": 1e-12, "btol": 1e-12},
    )  # fmt: skip
    Rv, tv, Xp = unpack(sol.x)
    Xout = X.copy()
    Xout[pts] = Xp
    cost = robust_cost(Ks, Rv, tv, Xout, c, j, z, loss=loss, scale_px=scale_px)
    return BAResult(Rv, tv, Xout, cost, initial, E, time.perf_counter() - t0)


def bundle_adjust_pycolmap(
    Ks: np.ndarray,
    R: np.ndarray,
    t: np.ndarray,
    X: np.ndarray,
    cam: np.ndarray,
    track: np.ndarray,
    uv: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    loss: str = "cauchy",
    scale_px: float = 1.0,
    max_iterations: int = 300,
    num_threads: int = 1,
) -> BAResult:
    """Robust BA with pycolmap 4.x / Ceres (the paper's solver); same contract as the scipy one.

    Intrinsics become PINHOLE cameras (fx, fy, cx, cy; skew must be 0) and stay fixed.
    `max_iterations` is Ceres' `max_num_iterations` (300 in the official config); Ceres'
    gradient tolerance stays at COLMAP's 1e-4. `print_summary` is off; the glog INFO lines
    pycolmap writes on stderr cannot be silenced from Python (ground check). A point that
    pycolmap deletes during the solve (seen when points start behind the cameras) comes back
    unchanged; `cost` still counts all the used entries.

    Shapes:
        as `bundle_adjust_scipy`
    """
    import pycolmap

    t0 = time.perf_counter()
    Ks, R, t, X, cam, track, uv, use, scale_px = _check_inputs(
        Ks, R, t, X, cam, track, uv, mask, loss, scale_px
    )
    max_iterations = check_int("max_iterations", max_iterations, 1)
    num_threads = check_int("num_threads", num_threads, -1)
    if np.any(np.abs(Ks[:, 0, 1]) > 1e-12):
        raise ValueError("Ks has a nonzero skew: pycolmap's PINHOLE model needs skew 0")
    m = len(R)
    rec = pycolmap.Reconstruction()
    point2d_index = np.full(len(cam), -1)
    for i in range(m):
        fx, fy, cx, cy = Ks[i, 0, 0], Ks[i, 1, 1], Ks[i, 0, 2], Ks[i, 1, 2]
        w, h = max(1, int(np.ceil(2 * cx))), max(1, int(np.ceil(2 * cy)))
        camera = pycolmap.Camera(
            model="PINHOLE", width=w, height=h, params=[fx, fy, cx, cy], camera_id=i + 1
        )
        rec.add_camera_with_trivial_rig(camera)
        es = np.flatnonzero(use & (cam == i))
        point2d_index[es] = np.arange(len(es))
        image = pycolmap.Image(
            name=f"{i:06d}", keypoints=uv[es].reshape(-1, 2), camera_id=i + 1, image_id=i + 1
        )
        rec.add_image_with_trivial_frame(image, pycolmap.Rigid3d(np.c_[R[i], t[i]]))
    pid = {}
    for j in np.unique(track[use]):
        tr = pycolmap.Track()
        for e in np.flatnonzero(use & (track == j)):
            tr.add_element(int(cam[e]) + 1, int(point2d_index[e]))
        pid[int(j)] = rec.add_point3D(X[j], tr)
    opts = pycolmap.BundleAdjustmentOptions()
    opts.refine_focal_length = False
    opts.refine_principal_point = False
    opts.refine_extra_params = False
    opts.print_summary = False
    opts.ceres.loss_function_type = (
        pycolmap.LossFunctionType.CAUCHY if loss == "cauchy" else pycolmap.LossFunctionType.TRIVIAL
    )
    opts.ceres.loss_function_scale = scale_px
    opts.ceres.solver_options.max_num_iterations = max_iterations
    opts.ceres.solver_options.num_threads = num_threads
    initial = robust_cost(Ks, R, t, X, cam[use], track[use], uv[use], loss=loss, scale_px=scale_px)
    pycolmap.bundle_adjustment(rec, opts)
    Rv, tv = R.copy(), t.copy()
    for i in range(m):
        pose = rec.image(i + 1).cam_from_world()
        Rv[i] = pose.rotation.matrix()
        tv[i] = pose.translation
    Xout = X.copy()
    for j, p in pid.items():
        # pycolmap may delete a point during BA (seen when points started behind the cameras:
        # COLMAP filters observations with negative depth); such a point comes back unchanged
        if rec.exists_point3D(p):
            Xout[j] = rec.point3D(p).xyz
    cost = robust_cost(
        Ks, Rv, tv, Xout, cam[use], track[use], uv[use], loss=loss, scale_px=scale_px
    )
    return BAResult(Rv, tv, Xout, cost, initial, int(use.sum()), time.perf_counter() - t0)


def bundle_adjust(*args, solver: str = "pycolmap", **kwargs) -> BAResult:
    """`bundle_adjust_pycolmap` (default) or `bundle_adjust_scipy` (`solver="scipy"`)."""
    if solver == "pycolmap":
        return bundle_adjust_pycolmap(*args, **kwargs)
    if solver == "scipy":
        return bundle_adjust_scipy(*args, **kwargs)
    raise ValueError(f"solver={solver!r} is not allowed: must be 'pycolmap' or 'scipy'")


def triangulate_all(
    Ks: np.ndarray,
    R: np.ndarray,
    t: np.ndarray,
    cam: np.ndarray,
    track: np.ndarray,
    uv: np.ndarray,
    num_tracks: int,
    *,
    mask: np.ndarray | None = None,
    min_views: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """DLT-triangulate every track from the current poses, over its used (inlier) entries.

    Tracks with fewer than `min_views` used entries, or that triangulate to infinity, are
    skipped: their row is NaN and `ok` is False.

    Shapes:
        Ks, R: (m, 3, 3), t: (m, 3), cam, track: (E,), uv: (E, 2), mask: (E,) bool
        -> X (num_tracks, 3), ok (num_tracks,) bool
    """
    n = check_int("num_tracks", num_tracks, 0)
    min_views = check_int("min_views", min_views, 2)
    cam, track = np.asarray(cam, np.int64), np.asarray(track, np.int64)
    uv = np.asarray(uv, np.float64)
    use = np.ones(len(cam), bool) if mask is None else np.asarray(mask, bool)
    if use.shape != cam.shape or track.shape != cam.shape or uv.shape != (len(cam), 2):
        raise ValueError(
            f"cam {cam.shape}, track {track.shape}, uv {uv.shape}, mask {use.shape}: "
            "must be (E,), (E,), (E, 2), (E,)"
        )
    if len(track) and (track.min() < 0 or track.max() >= n):
        raise ValueError(f"track has values outside [0, {n}): num_tracks={n}")
    X = np.full((n, 3), np.nan)
    ok = np.zeros(n, bool)
    order = np.argsort(track[use], kind="stable")
    idx = np.flatnonzero(use)[order]
    bounds = np.searchsorted(track[idx], np.arange(n + 1))
    for j in range(n):
        es = idx[bounds[j] : bounds[j + 1]]
        if len(es) < min_views:
            continue
        try:
            X[j] = triangulate_dlt(Ks[cam[es]], R[cam[es]], t[cam[es]], uv[es])
            ok[j] = True
        except ValueError:
            continue
    return X, ok
