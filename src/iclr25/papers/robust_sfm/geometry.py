"""Multiview geometry for RESfM: projection, DLT triangulation, alignment and the paper's metrics.

Conventions (the whole paper folder uses them):

- A camera is world-to-camera: a world point X maps to `x_cam = R @ X + t`; its pixel is
  `K @ x_cam / x_cam[2]`; its depth is `x_cam[2]`; its centre is `c = -R.T @ t`.
- Observations are sparse entries of the camera x track measurement matrix: `cam` (E,) and
  `track` (E,) int indices and `uv` (E, 2) pixels.
- An outlier mask is True where an entry is an outlier ("positive" = outlier in the
  classification metrics).

numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_float, check_int

__all__ = [
    "AlignedCameras",
    "ClassificationScores",
    "Similarity",
    "align_cameras",
    "align_similarity",
    "apply_similarity",
    "camera_centers",
    "outlier_scores",
    "project",
    "project_entries",
    "registered_cameras",
    "reprojection_errors",
    "rotation_angle_deg",
    "rotation_errors_deg",
    "translation_errors",
    "triangulate_dlt",
]


def _as_array(name: str, value, shape: tuple, dtype=np.float64) -> np.ndarray:
    """`value` as an array of `shape` (None = any size), finite; errors name the argument."""
    a = np.asarray(value, dtype=dtype)
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        want = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} has shape {a.shape}: must be {want}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf: must be finite")
    return a


def camera_centers(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Camera centres `c_i = -R_i^T t_i`.

    Shapes:
        R: (m, 3, 3), t: (m, 3) -> (m, 3)
    """
    return -np.einsum("mji,mj->mi", R, t)


def project(
    K: np.ndarray, R: np.ndarray, t: np.ndarray, X: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Project every point into every camera.

    Args:
        K: intrinsics, one per camera.
        R, t: world-to-camera rotations and translations.
        X: world points.

    Returns:
        `(uv, depth)`: pixels (NaN-free; points behind a camera get a pixel too, mirrored) and
        depths `(R X + t)_z`.

    Shapes:
        K: (m, 3, 3), R: (m, 3, 3), t: (m, 3), X: (n, 3) -> uv (m, n, 2), depth (m, n)
    """
    xc = np.einsum("mij,nj->mni", R, X) + t[:, None, :]
    depth = xc[..., 2]
    safe = np.where(np.abs(depth) < 1e-12, 1e-12, depth)
    h = np.einsum("mij,mnj->mni", K, xc / safe[..., None])
    return h[..., :2], depth


def project_entries(
    K: np.ndarray,
    R: np.ndarray,
    t: np.ndarray,
    X: np.ndarray,
    cam: np.ndarray,
    track: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Project only the observed entries: point `X[track[e]]` into camera `cam[e]`.

    Shapes:
        K, R: (m, 3, 3), t: (m, 3), X: (n, 3), cam, track: (E,) -> uv (E, 2), depth (E,)
    """
    xc = np.einsum("eij,ej->ei", R[cam], X[track]) + t[cam]
    depth = xc[:, 2]
    safe = np.where(np.abs(depth) < 1e-12, 1e-12, depth)
    h = np.einsum("eij,ej->ei", K[cam], xc / safe[:, None])
    return h[:, :2], depth


def reprojection_errors(
    K: np.ndarray,
    R: np.ndarray,
    t: np.ndarray,
    X: np.ndarray,
    cam: np.ndarray,
    track: np.ndarray,
    uv: np.ndarray,
) -> np.ndarray:
    """Pixel reprojection error of each entry (inf where the point is behind the camera).

    Shapes:
        cam, track: (E,), uv: (E, 2) -> (E,)
    """
    proj, depth = project_entries(K, R, t, X, cam, track)
    err = np.linalg.norm(proj - uv, axis=1)
    return np.where(depth > 0, err, np.inf)


def triangulate_dlt(K: np.ndarray, R: np.ndarray, t: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Linear (DLT) triangulation of one track from its views.

    Each view gives two rows of `A X_h = 0` in normalised coordinates (`K^-1 x`, so the system
    is well conditioned); X_h is the right singular vector of the smallest singular value.

    Args:
        K, R, t: the intrinsics and poses of the cameras that see the track.
        uv: the track's pixel in each of those cameras.

    Returns:
        The 3D point. Raises ValueError with fewer than 2 views or a point at infinity.

    Shapes:
        K, R: (v, 3, 3), t: (v, 3), uv: (v, 2) -> (3,)
    """
    uv = np.asarray(uv, dtype=np.float64)
    if uv.ndim != 2 or uv.shape[1] != 2:
        raise ValueError(f"uv has shape {uv.shape}: must be (v, 2)")
    v = uv.shape[0]
    if v < 2:
        raise ValueError(f"a track with {v} view(s) cannot be triangulated: needs >= 2 views")
    if not (len(K) == len(R) == len(t) == v):
        raise ValueError(
            f"K, R, t and uv have {len(K)}, {len(R)}, {len(t)} and {v} views: must be equal"
        )
    xn = np.einsum("vij,vj->vi", np.linalg.inv(K), np.c_[uv, np.ones(v)])
    xn = xn[:, :2] / xn[:, 2:3]
    P = np.concatenate([R, t[:, :, None]], axis=2)  # (v, 3, 4)
    A = np.concatenate(
        [xn[:, 0:1] * P[:, 2] - P[:, 0], xn[:, 1:2] * P[:, 2] - P[:, 1]], axis=0
    )  # (2v, 4)
    A = A / np.linalg.norm(A, axis=1, keepdims=True).clip(1e-12)
    Xh = np.linalg.svd(A)[2][-1]
    if abs(Xh[3]) < 1e-12:
        raise ValueError("the track triangulates to a point at infinity (parallel rays)")
    return Xh[:3] / Xh[3]


@dataclass(frozen=True)
class Similarity:
    """A similarity transform `y = s R x + t` (maps an estimate's frame to the GT frame)."""

    s: float
    R: np.ndarray
    t: np.ndarray


def align_similarity(src: np.ndarray, dst: np.ndarray) -> Similarity:
    """Least-squares similarity `dst ≈ s R src + t` (Umeyama 1991, with the reflection fix).

    Args:
        src: points in the estimate's frame (e.g. estimated camera centres).
        dst: the same points in the target frame (e.g. GT centres).

    Shapes:
        src, dst: (k, 3) with k >= 3 -> Similarity(s: float, R: (3, 3), t: (3,))
    """
    src = _as_array("src", src, (None, 3))
    dst = _as_array("dst", dst, (None, 3))
    if src.shape != dst.shape:
        raise ValueError(f"src has shape {src.shape} and dst {dst.shape}: must be equal")
    if len(src) < 3:
        raise ValueError(f"src has {len(src)} points: a similarity needs >= 3")
    mu_s, mu_d = src.mean(0), dst.mean(0)
    a, b = src - mu_s, dst - mu_d
    var_s = (a**2).sum() / len(src)
    if var_s < 1e-18:
        raise ValueError("src points all coincide: the similarity is undefined")
    cov = b.T @ a / len(src)
    U, S, Vt = np.linalg.svd(cov)
    D = np.eye(3)
    if np.linalg.det(U) * np.linalg.det(Vt) < 0:
        D[2, 2] = -1.0
    Rot = U @ D @ Vt
    s = float(np.trace(np.diag(S) @ D) / var_s)
    return Similarity(s=s, R=Rot, t=mu_d - s * Rot @ mu_s)


def apply_similarity(
    sim: Similarity, R: np.ndarray, t: np.ndarray, X: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Move a reconstruction into the target frame: `X' = s R_a X + t_a`.

    The projections are unchanged: `R' = R R_a^T`, `t' = s t - R' t_a`.

    Shapes:
        R: (m, 3, 3), t: (m, 3), X: (n, 3) or None -> same shapes
    """
    R2 = R @ sim.R.T
    t2 = sim.s * t - np.einsum("mij,j->mi", R2, sim.t)
    X2 = None if X is None else sim.s * X @ sim.R.T + sim.t
    return R2, t2, X2


@dataclass(frozen=True)
class AlignedCameras:
    """An estimate aligned to GT, and its per-camera errors.

    Attributes:
        R, t: the aligned world-to-camera poses, (m, 3, 3) and (m, 3).
        rotation_errors_deg: angle of `R'_i R_gt_i^T` per camera, (m,).
        translation_errors: distance between aligned and GT camera centres (GT units), (m,).
        similarity: the transform used.
    """

    R: np.ndarray
    t: np.ndarray
    rotation_errors_deg: np.ndarray
    translation_errors: np.ndarray
    similarity: Similarity


def rotation_angle_deg(R: np.ndarray) -> np.ndarray:
    """The angle of each rotation matrix, in degrees: atan2(sin, cos) with cos = (trace - 1) / 2
    and sin = |axial vector of (R - R^T) / 2| (arccos of the cosine alone loses precision near
    0: one rounding step of the cosine is already 1e-6 degrees).

    Shapes:
        R: (..., 3, 3) -> (...)
    """
    c = (np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0
    axial = np.stack(
        [R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]],
        axis=-1,
    )
    return np.degrees(np.arctan2(np.linalg.norm(axial, axis=-1) / 2.0, c))


def rotation_errors_deg(R_est: np.ndarray, R_gt: np.ndarray) -> np.ndarray:
    """Per-camera rotation error `angle(R_est_i R_gt_i^T)` in degrees (no alignment here).

    Shapes:
        R_est, R_gt: (m, 3, 3) -> (m,)
    """
    return rotation_angle_deg(R_est @ np.swapaxes(R_gt, -1, -2))


def translation_errors(
    R_est: np.ndarray, t_est: np.ndarray, R_gt: np.ndarray, t_gt: np.ndarray
) -> np.ndarray:
    """Per-camera distance between camera centres (no alignment here).

    Shapes:
        R_est, R_gt: (m, 3, 3), t_est, t_gt: (m, 3) -> (m,)
    """
    return np.linalg.norm(camera_centers(R_est, t_est) - camera_centers(R_gt, t_gt), axis=1)


def align_cameras(
    R_est: np.ndarray,
    t_est: np.ndarray,
    R_gt: np.ndarray,
    t_gt: np.ndarray,
    *,
    rotation_from: str = "centers",
) -> AlignedCameras:
    """Align an estimated set of cameras to GT by a similarity, then measure the errors.

    `rotation_from="centers"` (default) is Umeyama on the camera centres. `"orientations"` is
    the paper's evaluation order: the global rotation from the camera orientations (Procrustes
    on `Σ_i R_gt_i^T R_est_i`), then scale and translation from the centres by least squares.

    # DEVIATION: the paper fits scale and translation by an L1 fit of the centres (cvxpy); both
    # modes here use least squares (numpy only). With a few far-off cameras the L2 fit is pulled
    # towards them, which makes translation errors larger, never smaller, than an L1 fit would.

    Shapes:
        R_est, R_gt: (m, 3, 3), t_est, t_gt: (m, 3) with m >= 3 -> AlignedCameras
    """
    R_est = _as_array("R_est", R_est, (None, 3, 3))
    R_gt = _as_array("R_gt", R_gt, (None, 3, 3))
    t_est = _as_array("t_est", t_est, (None, 3))
    t_gt = _as_array("t_gt", t_gt, (None, 3))
    m = len(R_est)
    if not (len(R_gt) == len(t_est) == len(t_gt) == m):
        raise ValueError(
            f"R_est, t_est, R_gt, t_gt have {m}, {len(t_est)}, {len(R_gt)}, {len(t_gt)} "
            "cameras: must be equal"
        )
    c_est, c_gt = camera_centers(R_est, t_est), camera_centers(R_gt, t_gt)
    if rotation_from == "centers":
        sim = align_similarity(c_est, c_gt)
    elif rotation_from == "orientations":
        M = np.einsum("mji,mjk->ik", R_gt, R_est)  # Σ R_gt^T R_est
        U, _, Vt = np.linalg.svd(M)
        D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
        Ra = U @ D @ Vt
        a = c_est @ Ra.T
        a0, b0 = a - a.mean(0), c_gt - c_gt.mean(0)
        s = float((a0 * b0).sum() / max((a0**2).sum(), 1e-18))
        sim = Similarity(s=s, R=Ra, t=c_gt.mean(0) - s * a.mean(0))
    else:
        raise ValueError(
            f"rotation_from={rotation_from!r} is not allowed: must be 'centers' or 'orientations'"
        )
    R2, t2, _ = apply_similarity(sim, R_est, t_est)
    return AlignedCameras(
        R=R2,
        t=t2,
        rotation_errors_deg=rotation_errors_deg(R2, R_gt),
        translation_errors=translation_errors(R2, t2, R_gt, t_gt),
        similarity=sim,
    )


def registered_cameras(
    K: np.ndarray,
    R: np.ndarray,
    t: np.ndarray,
    X: np.ndarray,
    cam: np.ndarray,
    track: np.ndarray,
    uv: np.ndarray,
    *,
    threshold_px: float = 5.0,
    min_points: int = 1,
) -> np.ndarray:
    """Which cameras count as registered: mean reprojection error of their entries < threshold.

    Pass only the entries the reconstruction kept (e.g. predicted inliers); a camera with fewer
    than `min_points` such entries is not registered.

    Shapes:
        cam, track: (E,), uv: (E, 2) -> (m,) bool
    """
    threshold_px = check_float("threshold_px", threshold_px, 0, None, low_open=True)
    min_points = check_int("min_points", min_points, 1)
    m = len(R)
    err = reprojection_errors(K, R, t, X, cam, track, uv)
    count = np.bincount(cam, minlength=m)
    total = np.bincount(cam, weights=np.where(np.isfinite(err), err, 1e12), minlength=m)
    mean = np.where(count > 0, total / np.maximum(count, 1), np.inf)
    return (count >= min_points) & (mean < threshold_px)


@dataclass(frozen=True)
class ClassificationScores:
    """Outlier classification scores, outlier = positive (NaN where undefined, e.g. 0/0)."""

    accuracy: float
    precision: float
    recall: float
    f1: float


def outlier_scores(predicted: np.ndarray, truth: np.ndarray) -> ClassificationScores:
    """Accuracy, precision, recall and F1 of a predicted outlier mask against the true one.

    Shapes:
        predicted, truth: (E,) bool -> ClassificationScores
    """
    p = np.asarray(predicted)
    y = np.asarray(truth)
    if p.shape != y.shape or p.ndim != 1:
        raise ValueError(f"predicted has shape {p.shape} and truth {y.shape}: must be equal (E,)")
    if p.dtype != bool or y.dtype != bool:
        raise TypeError(f"predicted ({p.dtype}) and truth ({y.dtype}) must be bool masks")
    tp = float(np.sum(p & y))
    fp = float(np.sum(p & ~y))
    fn = float(np.sum(~p & y))
    prec = tp / (tp + fp) if tp + fp > 0 else float("nan")
    rec = tp / (tp + fn) if tp + fn > 0 else float("nan")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn > 0 else float("nan")
    acc = float(np.mean(p == y)) if len(p) else float("nan")
    return ClassificationScores(accuracy=acc, precision=prec, recall=rec, f1=f1)
