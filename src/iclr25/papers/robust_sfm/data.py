"""Synthetic SfM scenes with ground truth and labelled outliers, and the on-disk track format.

`make_scene` builds one calibrated scene (notes §4): cameras on a jittered ring, a sideways
sweep, or a forward-moving path, looking at points on a box and on planes. Visibility is
geometric and sparse (in front, inside the image, within a view range, random dropout), then
pruned to tracks of >= `min_track_length` views, cameras with >= `min_tracks_per_camera` tracks
and the largest connected camera component. Inliers get Gaussian pixel noise; outliers of three
kinds are then introduced at a requested rate:

- `"uniform"`: an entry's pixel is replaced by a uniform random pixel (easy);
- `"near_miss"`: an entry's pixel is replaced by the (noisy) projection of another scene point
  within `near_miss_radius_px` of the true one (repetitive structure, hard);
- `"merge"`: a chaining error: track j is merged with a random track k, and for every camera
  that sees k but not j, k's measurement there is added to track j as a new (outlier) entry.

The outlier rate is the fraction of outlier entries among all final entries; `outlier_mix`
splits it among the kinds. Occlusion is not modelled (points behind the box stay visible).

On disk (`save_tracks` / `load_tracks`), a scene is one `.npz` file:

- ``cam`` (E,) int: camera index of each observation, in [0, m);
- ``track`` (E,) int: track index of each observation, in [0, n);
- ``uv`` (E, 2) float: pixel of each observation (x right, y down);
- ``Ks`` (m, 3, 3) float: intrinsics per camera (or ``K`` (3, 3), shared by all cameras);
- optional ``num_tracks`` () int: n (default max(track) + 1);
- optional ``image_size`` (2,) int: width, height in pixels;
- optional ``is_outlier`` (E,) bool: outlier labels;
- optional ``outlier_type`` (E,) int: 0 inlier, 1 uniform, 2 near-miss, 3 merge;
- optional ``R`` (m, 3, 3) and ``t`` (m, 3) float: GT world-to-camera poses (both or neither);
- optional ``X`` (n, 3) float: GT points.

A (cam, track) pair may appear only once; a camera or track may have no observation. Unknown
keys are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.checks import check_float, check_int
from iclr25.papers.robust_sfm.geometry import project

__all__ = [
    "LAYOUTS",
    "OUTLIER_TYPES",
    "Scene",
    "load_tracks",
    "look_at",
    "make_scene",
    "save_tracks",
]

LAYOUTS = ("ring", "sweep", "forward")
OUTLIER_TYPES = ("uniform", "near_miss", "merge")  # codes 1, 2, 3 in `Scene.outlier_type`


def _fail(field_name: str, msg: str) -> ValueError:
    return ValueError(f"{field_name}: {msg}")


@dataclass
class Scene:
    """Sparse camera x track measurements of one scene, with optional labels and GT.

    Attributes:
        Ks: intrinsics per camera, (m, 3, 3).
        cam, track: indices of each observed entry, (E,) int64.
        uv: pixel of each entry, (E, 2) float64.
        num_tracks: n (tracks with no entry are allowed).
        image_size: (width, height) in pixels, or None.
        is_outlier: (E,) bool labels, or None.
        outlier_type: (E,) int8, 0 inlier, 1 uniform, 2 near-miss, 3 merge, or None.
        R, t, X: GT world-to-camera rotations (m, 3, 3), translations (m, 3) and points
            (n, 3), or None.

    Every field is validated on construction; errors name the field.
    """

    Ks: np.ndarray
    cam: np.ndarray
    track: np.ndarray
    uv: np.ndarray
    num_tracks: int | None = None
    image_size: tuple[int, int] | None = None
    is_outlier: np.ndarray | None = None
    outlier_type: np.ndarray | None = None
    R: np.ndarray | None = None
    t: np.ndarray | None = None
    X: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        Ks = np.asarray(self.Ks, dtype=np.float64)
        if Ks.shape == (3, 3):
            raise _fail("Ks", "has shape (3, 3): must be (m, 3, 3), one per camera")
        if Ks.ndim != 3 or Ks.shape[1:] != (3, 3):
            raise _fail("Ks", f"has shape {Ks.shape}: must be (m, 3, 3)")
        if not np.all(np.isfinite(Ks)):
            raise _fail("Ks", "contains NaN or inf: must be finite")
        if np.any(np.abs(np.linalg.det(Ks)) < 1e-12):
            raise _fail("Ks", "has a singular matrix: each K must be invertible")
        m = len(Ks)
        cam, track = (np.asarray(a) for a in (self.cam, self.track))
        for name, a in (("cam", cam), ("track", track)):
            if a.ndim != 1:
                raise _fail(name, f"has shape {a.shape}: must be (E,)")
            if a.size and a.dtype.kind not in "iu":
                raise _fail(name, f"has dtype {a.dtype}: must be an integer array")
        cam, track = cam.astype(np.int64), track.astype(np.int64)
        E = len(cam)
        if len(track) != E:
            raise _fail("track", f"has {len(track)} entries but cam has {E}: must be equal")
        if E and (cam.min() < 0 or cam.max() >= m):
            raise _fail("cam", f"has values in [{cam.min()}, {cam.max()}]: must be in [0, {m})")
        n = int(track.max()) + 1 if (self.num_tracks is None and E) else self.num_tracks
        n = check_int("num_tracks", 0 if n is None else n, 0)
        if E and (track.min() < 0 or track.max() >= n):
            raise _fail(
                "track", f"has values in [{track.min()}, {track.max()}]: must be in [0, {n})"
            )
        key = cam * max(n, 1) + track
        if len(np.unique(key)) != E:
            raise _fail("cam/track", "a (cam, track) pair appears twice: each may appear once")
        uv = np.asarray(self.uv, dtype=np.float64)
        if uv.shape != (E, 2):
            raise _fail("uv", f"has shape {uv.shape}: must be ({E}, 2)")
        if not np.all(np.isfinite(uv)):
            raise _fail("uv", "contains NaN or inf: must be finite")
        self.Ks, self.cam, self.track, self.uv, self.num_tracks = Ks, cam, track, uv, n
        if self.image_size is not None:
            sz = tuple(int(v) for v in np.asarray(self.image_size).ravel())
            if len(sz) != 2 or min(sz) <= 0:
                raise _fail("image_size", f"is {self.image_size!r}: must be (width, height) > 0")
            self.image_size = sz
        if self.is_outlier is not None:
            y = np.asarray(self.is_outlier)
            if y.shape != (E,) or y.dtype != bool:
                raise _fail(
                    "is_outlier", f"has shape {y.shape}, dtype {y.dtype}: must be ({E},) bool"
                )
            self.is_outlier = y
        if self.outlier_type is not None:
            ot = np.asarray(self.outlier_type)
            if (
                ot.shape != (E,)
                or ot.dtype.kind not in "iu"
                or (E and (ot.min() < 0 or ot.max() > 3))
            ):
                raise _fail("outlier_type", f"must be ({E},) integers in 0..3")
            self.outlier_type = ot.astype(np.int8)
        if (self.R is None) != (self.t is None):
            raise _fail("R/t", "only one of R and t is given: give both or neither")
        if self.R is not None:
            R = np.asarray(self.R, dtype=np.float64)
            t = np.asarray(self.t, dtype=np.float64)
            if R.shape != (m, 3, 3):
                raise _fail("R", f"has shape {R.shape}: must be ({m}, 3, 3)")
            if t.shape != (m, 3):
                raise _fail("t", f"has shape {t.shape}: must be ({m}, 3)")
            if not (np.all(np.isfinite(R)) and np.all(np.isfinite(t))):
                raise _fail("R/t", "contain NaN or inf: must be finite")
            err = np.abs(R @ np.swapaxes(R, 1, 2) - np.eye(3)).max() if m else 0.0
            if err > 1e-6 or (m and np.any(np.linalg.det(R) < 0)):
                raise _fail("R", "is not a stack of rotations (R R^T = I, det +1)")
            self.R, self.t = R, t
        if self.X is not None:
            X = np.asarray(self.X, dtype=np.float64)
            if X.shape != (n, 3) or not np.all(np.isfinite(X)):
                raise _fail("X", f"has shape {X.shape}: must be ({n}, 3), finite")
            self.X = X

    @property
    def num_cameras(self) -> int:
        return len(self.Ks)

    @property
    def num_entries(self) -> int:
        return len(self.cam)

    @property
    def has_gt(self) -> bool:
        return self.R is not None and self.X is not None

    def normalized_uv(self) -> np.ndarray:
        """Calibrated coordinates `K^-1 [u, v, 1]` (first two), the network's input, (E, 2)."""
        h = np.einsum(
            "eij,ej->ei", np.linalg.inv(self.Ks)[self.cam], np.c_[self.uv, np.ones(len(self.uv))]
        )
        return h[:, :2] / h[:, 2:3]

    def track_lengths(self) -> np.ndarray:
        """Number of entries per track, (n,)."""
        return np.bincount(self.track, minlength=self.num_tracks)

    def subset(self, keep: np.ndarray) -> Scene:
        """The scene restricted to the entries where `keep` (E,) is True (same indexing)."""
        keep = np.asarray(keep, dtype=bool)
        opt = lambda a: None if a is None else a[keep]  # noqa: E731
        return Scene(
            Ks=self.Ks, cam=self.cam[keep], track=self.track[keep], uv=self.uv[keep],
            num_tracks=self.num_tracks, image_size=self.image_size,
            is_outlier=opt(self.is_outlier), outlier_type=opt(self.outlier_type),
            R=self.R, t=self.t, X=self.X, meta=dict(self.meta),
        )  # fmt: skip


def look_at(center: np.ndarray, target: np.ndarray, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """World-to-camera rotation of a camera at `center` looking at `target` (x right, y down).

    Shapes:
        center, target: (3,) -> (3, 3)
    """
    z = np.asarray(target, float) - np.asarray(center, float)
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    if np.linalg.norm(x) < 1e-9:
        x = np.cross(z, (0.0, 1.0, 0.0))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.stack([x, y, z])


def _rot_small(rng: np.random.Generator, sigma_rad: float) -> np.ndarray:
    w = rng.normal(0.0, sigma_rad, 3)
    th = np.linalg.norm(w)
    if th < 1e-15:
        return np.eye(3)
    k = w / th
    Kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * Kx + (1 - np.cos(th)) * Kx @ Kx


def _box_surface(rng: np.random.Generator, n: int, lo, hi) -> np.ndarray:
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    size = hi - lo
    areas = np.array([size[1] * size[2], size[0] * size[2], size[0] * size[1]])
    axis = rng.choice(3, size=n, p=areas / areas.sum())
    P = lo + rng.random((n, 3)) * size
    side = rng.integers(0, 2, n)
    P[np.arange(n), axis] = np.where(side == 1, hi[axis], lo[axis])
    N = np.zeros((n, 3))
    N[np.arange(n), axis] = np.where(side == 1, 1.0, -1.0)
    return P, N


def _plane(rng, n, origin, u, v, normal) -> tuple[np.ndarray, np.ndarray]:
    a, b = rng.random((2, n, 1))
    P = np.asarray(origin, float) + a * np.asarray(u, float) + b * np.asarray(v, float)
    return P, np.repeat(np.asarray(normal, float)[None], n, axis=0)


def _stack(parts) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([p for p, _ in parts]), np.concatenate([q for _, q in parts])


def _layout(rng: np.random.Generator, layout: str, m: int, n: int):
    """Camera centres and targets, and the points with their surface normals, for one layout."""
    if layout == "ring":
        n_box, n_ground = int(0.6 * n), int(0.25 * n)
        X, N = _stack([
            _box_surface(rng, n_box, (-1, -1, -1), (1, 1, 1)),
            _plane(rng, n_ground, (-3, -3, -1), (6, 0, 0), (0, 6, 0), (0, 0, 1)),
            _plane(rng, n - n_box - n_ground, (-3, 2.5, -1), (6, 0, 0), (0, 0, 3), (0, -1, 0)),
        ])  # fmt: skip
        ang = 2 * np.pi * (np.arange(m) + rng.uniform(-0.3, 0.3, m)) / m
        r = 6.0 + rng.uniform(-0.4, 0.4, m)
        C = np.c_[r * np.cos(ang), r * np.sin(ang), rng.uniform(0.0, 2.0, m)]
        T = rng.normal(0.0, 0.3, (m, 3))
    elif layout == "sweep":
        n_box, n_wall = int(0.4 * n), int(0.4 * n)
        X, N = _stack([
            _box_surface(rng, n_box, (-1.5, -0.5, -1), (1.5, 1.0, 0.5)),
            _plane(rng, n_wall, (-6, 2, -1), (12, 0, 0), (0, 0, 4), (0, -1, 0)),
            _plane(rng, n - n_box - n_wall, (-6, -3, -1), (12, 0, 0), (0, 5, 0), (0, 0, 1)),
        ])  # fmt: skip
        x = np.linspace(-4.0, 4.0, m) + rng.uniform(-0.15, 0.15, m)
        C = np.c_[x, -7.0 + rng.uniform(-0.3, 0.3, m), rng.uniform(0.0, 1.0, m)]
        T = np.c_[0.5 * x, np.zeros(m), np.zeros(m)] + rng.normal(0.0, 0.2, (m, 3))
    else:  # forward: a corridor (ground, two walls, a few boxes), cameras driving along +y
        # 0.6 units between cameras; the corridor runs from 2 behind the first camera to 6
        # ahead of the last, so the point density per camera does not depend on m
        y0, y1 = -6.0, -6.0 + 0.6 * (m - 1)
        L = y1 - y0 + 8.0
        n_box = int(0.2 * n)
        n_ground = int(0.3 * n)
        n_wall = (n - n_box - n_ground) // 2
        n_right = n - n_box - n_ground - n_wall
        centres = np.c_[rng.uniform(-0.8, 0.8, 4), np.linspace(y0 + 2, y1 + 5, 4), np.full(4, -0.6)]
        boxes = [
            _box_surface(rng, k, c - 0.4, c + 0.4)
            for k, c in zip(np.diff(np.linspace(0, n_box, 5).astype(int)), centres)
        ]
        X, N = _stack([
            *boxes,
            _plane(rng, n_ground, (-1.5, y0 - 2, -1), (3, 0, 0), (0, L, 0), (0, 0, 1)),
            _plane(rng, n_wall, (-1.5, y0 - 2, -1), (0, L, 0), (0, 0, 2.5), (1, 0, 0)),
            _plane(rng, n_right, (1.5, y0 - 2, -1), (0, L, 0), (0, 0, 2.5), (-1, 0, 0)),
        ])  # fmt: skip
        y = np.linspace(y0, y1, m) + rng.uniform(-0.1, 0.1, m)
        C = np.c_[rng.uniform(-0.2, 0.2, m), y, rng.uniform(-0.1, 0.1, m)]
        T = C + np.c_[rng.normal(0, 0.1, m), np.full(m, 5.0), rng.normal(0, 0.05, m)]
    return C, T, X, N


def _prune(vis: np.ndarray, min_len: int, min_per_cam: int) -> tuple[np.ndarray, np.ndarray]:
    """Iteratively drop short tracks and weak cameras, then keep the largest camera component."""
    m, n = vis.shape
    cams, pts = np.ones(m, bool), np.ones(n, bool)
    for _ in range(50):
        v = vis & cams[:, None] & pts[None, :]
        new_pts = pts & (v.sum(0) >= min_len)
        v = v & new_pts[None, :]
        new_cams = cams & (v.sum(1) >= min_per_cam)
        if np.array_equal(new_pts, pts) and np.array_equal(new_cams, cams):
            # largest connected component of the view graph (cameras sharing a track)
            v = vis & cams[:, None] & pts[None, :]
            A = (v.astype(np.int32) @ v.T.astype(np.int32)) > 0
            comp = -np.ones(m, int)
            best, best_size = -1, 0
            for s in np.flatnonzero(cams):
                if comp[s] >= 0:
                    continue
                stack, comp[s], size = [s], s, 0
                while stack:
                    a = stack.pop()
                    size += 1
                    for b in np.flatnonzero(A[a] & cams & (comp < 0)):
                        comp[b] = s
                        stack.append(b)
                if size > best_size:
                    best, best_size = s, size
            in_comp = comp == best
            if np.array_equal(in_comp, cams):
                return cams, pts
            new_cams = in_comp
        cams, pts = new_cams, new_pts
    return cams, pts


def make_scene(
    rng: np.random.Generator,
    *,
    layout: str = "ring",
    num_cameras: int = 20,
    num_points: int = 400,
    focal: float = 500.0,
    image_size: tuple[int, int] = (640, 480),
    noise_px: float = 1.0,
    outlier_rate: float = 0.0,
    outlier_mix: tuple[float, float, float] = (1.0, 1.0, 1.0),
    near_miss_radius_px: float = 30.0,
    dropout: float = 0.1,
    view_range: float | None = None,
    min_track_length: int = 3,
    min_tracks_per_camera: int = 10,
) -> Scene:
    """A synthetic calibrated scene with GT poses and points, noise and labelled outliers.

    Args:
        rng: the only source of randomness.
        layout: `"ring"` (cameras around a box), `"sweep"` (a sideways pass along a facade) or
            `"forward"` (driving down a corridor; short tracks).
        num_cameras, num_points: before pruning (the scene may keep fewer).
        focal, image_size: pinhole intrinsics, principal point at the image centre.
        noise_px: std of the Gaussian pixel noise on inliers and near-miss outliers.
        outlier_rate: fraction of outlier entries among all final entries, in [0, 0.9].
        outlier_mix: relative weights of (uniform, near-miss, merge) outliers.
        near_miss_radius_px: how far a near-miss may land from the true projection.
        dropout: probability that a geometrically visible entry is not observed.
        view_range: maximum depth at which a point is seen (None: 5 for "forward", else no
            limit).
        min_track_length, min_tracks_per_camera: pruning of the inlier visibility.

    Returns:
        A `Scene` with entries sorted by (cam, track), labels, types and GT.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r} is not allowed: must be one of {LAYOUTS}")
    m = check_int("num_cameras", num_cameras, 3)
    n = check_int("num_points", num_points, 10)
    focal = check_float("focal", focal, 0, None, low_open=True)
    W, H = (
        check_int("image_size[0]", image_size[0], 1),
        check_int("image_size[1]", image_size[1], 1),
    )
    noise_px = check_float("noise_px", noise_px, 0)
    rate = check_float("outlier_rate", outlier_rate, 0, 0.9)
    mix = np.asarray(outlier_mix, dtype=np.float64)
    if mix.shape != (3,) or not np.all(np.isfinite(mix)) or mix.min() < 0 or mix.sum() <= 0:
        raise ValueError(
            f"outlier_mix={outlier_mix!r} is not allowed: must be 3 weights >= 0 "
            "(uniform, near_miss, merge) with a positive sum"
        )
    mix = mix / mix.sum()
    radius = check_float("near_miss_radius_px", near_miss_radius_px, 0, None, low_open=True)
    dropout = check_float("dropout", dropout, 0, 1, high_open=True)
    if view_range is None:
        view_range = 5.0 if layout == "forward" else np.inf
    view_range = check_float("view_range", view_range, 0, None, low_open=True, finite=False)
    min_len = check_int("min_track_length", min_track_length, 2)
    min_cam = check_int("min_tracks_per_camera", min_tracks_per_camera, 1)

    C, T, X, N = _layout(rng, layout, m, n)
    R = np.stack([_rot_small(rng, np.radians(1.0)) @ look_at(c, g) for c, g in zip(C, T)])
    t = -np.einsum("mij,mj->mi", R, C)
    K = np.array([[focal, 0.0, W / 2], [0.0, focal, H / 2], [0.0, 0.0, 1.0]])
    Ks = np.repeat(K[None], m, axis=0)
    uv_all, depth = project(Ks, R, t, X)
    inside = (uv_all[..., 0] >= 0) & (uv_all[..., 0] < W) & (uv_all[..., 1] >= 0)
    inside &= uv_all[..., 1] < H
    # back faces and grazing views are not seen (sin 10 deg); no occlusion beyond that
    to_cam = C[:, None, :] - X[None, :, :]
    facing = np.einsum("nk,mnk->mn", N, to_cam) > 0.17 * np.linalg.norm(to_cam, axis=2)
    geo = (depth > 0.1) & (depth < view_range) & inside & facing
    vis = geo & (rng.random(geo.shape) >= dropout)
    cams, pts = _prune(vis, min_len, min_cam)
    if cams.sum() < 3 or pts.sum() < min_len:
        raise ValueError(
            f"the {layout} scene kept {cams.sum()} cameras and {pts.sum()} tracks after pruning "
            "(needs >= 3 cameras): use more points, less dropout or a looser min_tracks_per_camera"
        )
    R, t, Ks = R[cams], t[cams], Ks[cams]
    X = X[pts]
    uv_all, depth, geo = uv_all[cams][:, pts], depth[cams][:, pts], geo[cams][:, pts]
    vis = vis[cams][:, pts]
    m, n = vis.shape
    cam, track = np.nonzero(vis)
    uv_true = uv_all[cam, track]
    uv = uv_true + rng.normal(0.0, noise_px, uv_true.shape)
    otype = np.zeros(len(cam), np.int8)

    E0 = len(cam)
    O = round(rate * E0 / (1.0 - rate * mix[2]))
    n_merge = round(mix[2] * O)
    n_near = round(mix[1] * O)
    n_unif = O - n_merge - n_near
    if n_unif < 0:  # both roundings went up (e.g. a (0, 1, 1) mix): take one from near-miss
        n_near += n_unif
        n_unif = 0
    if n_unif + n_near > E0:
        raise ValueError(f"outlier_rate={outlier_rate!r} asks for more replaced entries than exist")
    # near-miss: another point's projection within the radius of the true one, same camera
    order = rng.permutation(E0)
    chosen_near = np.zeros(0, np.int64)
    if n_near:
        # candidates of entry e: points k != track[e] seen by cam[e] within the radius
        cand = np.zeros((E0, n), bool)
        for c in range(m):
            es = np.flatnonzero(cam == c)
            d = np.linalg.norm(uv_true[es, None, :] - uv_all[c][None], axis=2)
            cand[es] = geo[c][None] & (d < radius)
        cand[np.arange(E0), track] = False
        has = np.flatnonzero(cand.any(1)[order])
        if len(has) < n_near:
            raise ValueError(
                f"only {len(has)} of the {n_near} near-miss outliers asked for have another "
                f"point within near_miss_radius_px={radius:g}: raise it or lower outlier_rate"
            )
        chosen_near = order[has[:n_near]]
        counts = cand[chosen_near].sum(1)
        pick = rng.integers(0, counts)
        k = np.array([np.flatnonzero(cand[e])[p] for e, p in zip(chosen_near, pick)])
        uv[chosen_near] = uv_all[cam[chosen_near], k] + rng.normal(0.0, noise_px, (n_near, 2))
        otype[chosen_near] = 2
    rest = np.setdiff1d(order, chosen_near, assume_unique=True)
    unif = rng.permutation(rest)[:n_unif]
    uv[unif] = rng.random((len(unif), 2)) * [W, H]
    otype[unif] = 1
    # merges: track j absorbs track k's measurements in cameras that see k but not j
    add_cam: list[int] = []
    add_track: list[int] = []
    add_uv: list[np.ndarray] = []
    if n_merge:
        observed = np.zeros((m, n), bool)
        observed[cam, track] = True
        idx = -np.ones((m, n), np.int64)
        idx[cam, track] = np.arange(E0)
        for _ in range(100 * n):
            j, k = rng.choice(n, 2, replace=False)
            cs = np.flatnonzero((idx[:, k] >= 0) & ~observed[:, j])  # k's own entries only
            for c in rng.permutation(cs):
                if len(add_cam) == n_merge:
                    break
                add_cam.append(c)
                add_track.append(j)
                add_uv.append(uv[idx[c, k]])
                observed[c, j] = True
            if len(add_cam) == n_merge:
                break
        if len(add_cam) < n_merge:
            raise ValueError(f"could not place {n_merge} merge outliers: lower outlier_rate")
    cam = np.concatenate([cam, np.asarray(add_cam, np.int64)])
    track = np.concatenate([track, np.asarray(add_track, np.int64)])
    uv = np.concatenate([uv, np.asarray(add_uv, np.float64).reshape(-1, 2)])
    otype = np.concatenate([otype, np.full(len(add_cam), 3, np.int8)])
    srt = np.lexsort((track, cam))
    return Scene(
        Ks=Ks, cam=cam[srt], track=track[srt], uv=uv[srt], num_tracks=n, image_size=(W, H),
        is_outlier=otype[srt] > 0, outlier_type=otype[srt], R=R, t=t, X=X,
        meta={"layout": layout, "noise_px": noise_px, "outlier_rate": rate},
    )  # fmt: skip


_OPTIONAL = ("num_tracks", "image_size", "is_outlier", "outlier_type", "R", "t", "X")


def save_tracks(path: str | os.PathLike, scene: Scene) -> None:
    """Write a scene in the documented `.npz` format (see the module docstring)."""
    arrays = {"cam": scene.cam, "track": scene.track, "uv": scene.uv, "Ks": scene.Ks}
    for k in _OPTIONAL:
        v = getattr(scene, k)
        if v is not None:
            arrays[k] = np.asarray(v)
    np.savez(path, **arrays)


def load_tracks(path: str | os.PathLike) -> Scene:
    """Read a `.npz` track file (see the module docstring); errors name the bad field."""
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    missing = [k for k in ("cam", "track", "uv") if k not in data]
    if "Ks" not in data and "K" not in data:
        missing.append("Ks (or K)")
    if missing:
        raise ValueError(f"{os.fspath(path)}: missing field(s) {', '.join(missing)}")
    unknown = set(data) - {"cam", "track", "uv", "Ks", "K", *_OPTIONAL}
    if unknown:
        raise ValueError(f"{os.fspath(path)}: unknown field(s) {', '.join(sorted(unknown))}")
    if "Ks" in data:
        Ks = data["Ks"]
    else:
        K = data["K"]
        if K.shape != (3, 3):
            raise _fail("K", f"has shape {K.shape}: must be (3, 3)")
        m = int(data["cam"].max()) + 1 if data["cam"].size else 0
        if "R" in data:
            m = len(data["R"])
        Ks = np.repeat(K[None].astype(np.float64), m, axis=0)
    kw = {k: data[k] for k in _OPTIONAL if k in data}
    if "num_tracks" in kw:
        kw["num_tracks"] = int(kw["num_tracks"])
    return Scene(Ks=Ks, cam=data["cam"], track=data["track"], uv=data["uv"], **kw)
