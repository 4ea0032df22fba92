"""The classical baselines on our tracks: COLMAP (incremental) and GLOMAP (global) mapping
through pycolmap 4.x's database path (ground check §1.2), and COLMAP export of any result.

    >>> res = run_colmap(scene)                # or run_glomap(scene, ClassicalSettings(...))
    >>> res.final.cameras, res.final.R         # registered input cameras and their poses
    >>> export_colmap(res, scene, "out/sparse/0")

The baselines see exactly what RESfM sees: the measurement matrix, outliers included.

1. `write_database`: a COLMAP database with one PINHOLE camera per image (the scene's
   intrinsics), a trivial rig and a frame per image (pycolmap >= 3.12 keeps poses in
   rigs/frames), the image's keypoints = its observed entries (in entry order), and for every
   image pair that shares tracks the raw matches = the pairs of entries of the same track.
2. `pycolmap.verify_matches` on those pairs: RANSAC two-view geometry (essential matrix, the
   cameras being calibrated) with `max_num_trials=300` (the ground check: 12 s instead of 62 s
   at COLMAP's default 10k for 30 cameras, same accuracy); the inlier matches and their
   geometry are written back to the database.
3. `pycolmap.incremental_mapping` (`run_colmap`) or `pycolmap.global_mapping` (`run_glomap`)
   with the intrinsics held fixed.
4. The largest model (most registered images, then most points) becomes a `SfMState` indexed
   into the input scene, like the pipeline's `PipelineResult.final`, so the same `geometry`
   functions score both.

COLMAP builds its own 3D points from the verified matches; since matches only join entries of
the same input track, every 3D point's observations lie in one input track. COLMAP may split
one input track into several 3D points (observations it filtered and re-triangulated).

# DEVIATION: the paper runs COLMAP, GLOMAP (and Theia, not provided here) on images with their
# own features and matching; here they get our tracks as keypoints and raw matches (every pair
# of entries of a track), so the three methods see the same measurements and only verification
# and mapping differ. GLOMAP is COLMAP 4.x's integrated global mapper
# (`pycolmap.global_mapping`), not the standalone glomap 1.x binary.
# DEVIATION: the intrinsics are known and held fixed in both mappers (as in RESfM's BA); the
# paper does not say how its classical runs treated the calibration.
# DEVIATION: RANSAC verification runs 300 trials per pair instead of COLMAP's 10k (ground
# check: same accuracy, 5x faster); everything not set in `ClassicalSettings` keeps COLMAP
# 4.x's defaults (e.g. incremental initialisation needs 100 inliers, relaxed by COLMAP itself
# when no pair qualifies; registration needs 30 2D-3D inliers).
# DEVIATION: of several models, the largest (most registered images, then most 3D points) is
# the result; the others are only counted (`model_sizes`). Unregistered cameras are failures.
# DEVIATION: when several 3D points belong to the same input track, the one with the most
# observations (then the lowest point id) is that track's point; the other points'
# observations are not in `final.entries`. Points on no input track cannot occur (see above);
# a point whose observations span several tracks would be assigned to its majority track.

pycolmap writes glog INFO/WARNING lines to stderr (not silenceable from Python, ground check
§1.6), including "Could not read image" lines: there are no image files, colours stay black.
Needs the `sfm` extra (pycolmap 4.2.1).
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.checks import check_float, check_int
from iclr25.papers.robust_sfm.data import Scene
from iclr25.papers.robust_sfm.pipeline import PipelineResult, SfMState

__all__ = [
    "ClassicalResult",
    "ClassicalSettings",
    "export_colmap",
    "run_colmap",
    "run_glomap",
    "write_database",
]

MAPPERS = ("incremental", "global")


@dataclass(frozen=True)
class ClassicalSettings:
    """Settings of `run_colmap` / `run_glomap` (and the verification both share).

    Attributes:
        num_threads: threads of verification and mapping (1: deterministic, see the card).
        random_seed: seed of RANSAC and of the mappers (pycolmap's `random_seed` options and
            `pycolmap.set_random_seed`); -1 leaves them unseeded.
        max_num_trials: RANSAC trials per image pair in `verify_matches` (300, ground check;
            COLMAP's default is 10000).
        ransac_max_error_px: RANSAC inlier threshold in pixels (COLMAP's default 4).
        min_num_inliers: a pair with fewer verified inliers is dropped (COLMAP's default 15).
        min_num_matches: the mappers ignore pairs with fewer inlier matches (COLMAP's 15).
        min_model_size: models with fewer registered images are discarded; None keeps the
            mapper's default (10 incremental, where the first model is always kept; 3 global).
        multiple_models: let the mapper return several models (the largest is kept).
        mapper_options: further pycolmap mapper options by dotted name, set after the ones
            above, e.g. `{"mapper.init_min_num_inliers": 30}` (incremental) or
            `{"mapper.global_positioning.loss_function_scale": 0.05}` (global); a name the
            chosen mapper's options do not have raises ValueError.
    """

    num_threads: int = 1
    random_seed: int = 0
    max_num_trials: int = 300
    ransac_max_error_px: float = 4.0
    min_num_inliers: int = 15
    min_num_matches: int = 15
    min_model_size: int | None = None
    multiple_models: bool = True
    mapper_options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # num_threads and random_seed: pycolmap has no other seed; at 1 thread and a fixed
        # seed two runs gave identical results (tests; the pilot repeated exactly)
        check_int("num_threads", self.num_threads, -1)
        if self.num_threads == 0:
            raise ValueError("num_threads=0 is not allowed: must be >= 1, or -1 for all cores")
        check_int("random_seed", self.random_seed, -1)
        check_int("max_num_trials", self.max_num_trials, 1)
        check_float("ransac_max_error_px", self.ransac_max_error_px, 0, None, low_open=True)
        check_int("min_num_inliers", self.min_num_inliers, 1)
        check_int("min_num_matches", self.min_num_matches, 1)
        if self.min_model_size is not None:
            check_int("min_model_size", self.min_model_size, 1)
        if not isinstance(self.multiple_models, bool):
            raise ValueError(f"multiple_models={self.multiple_models!r}: must be True or False")
        if not isinstance(self.mapper_options, dict) or not all(
            isinstance(k, str) for k in self.mapper_options
        ):
            raise ValueError(
                f"mapper_options={self.mapper_options!r}: must be a dict of dotted option names"
            )


@dataclass
class ClassicalResult:
    """A classical reconstruction of a scene.

    Attributes:
        final: the largest model as a `SfMState` (registered input cameras, input tracks with
            a 3D point, the input entries that are that point's observations, poses, points);
            empty (0 cameras) when the mapper produced no model.
        mapper: "incremental" (COLMAP) or "global" (GLOMAP).
        num_models: how many models the mapper returned.
        model_sizes: registered images per model, largest first.
        num_pairs: image pairs with raw matches; num_verified_pairs: pairs whose verified
            geometry has >= `min_num_inliers` inlier matches.
        seconds: wall time of "database", "verify", "mapping" and "total".
        failed: None, or why there is no model.
    """

    final: SfMState
    mapper: str
    num_models: int
    model_sizes: list[int]
    num_pairs: int
    num_verified_pairs: int
    seconds: dict[str, float] = field(default_factory=dict)
    failed: str | None = None


def _image_name(i: int) -> str:
    return f"{i:06d}.png"


def _check_scene(scene) -> Scene:
    if not isinstance(scene, Scene):
        raise TypeError(f"scene is a {type(scene).__name__}: must be a robust_sfm Scene")
    if len(scene.Ks) < 2:
        raise ValueError(f"scene has {len(scene.Ks)} camera(s): must have >= 2")
    if np.any(np.abs(scene.Ks[:, 0, 1]) > 1e-12):
        raise ValueError("scene.Ks has a nonzero skew: COLMAP's PINHOLE model needs skew 0")
    if np.any(np.abs(scene.Ks[:, 2] - np.array([0.0, 0.0, 1.0])) > 1e-12):
        raise ValueError("scene.Ks has a third row other than (0, 0, 1): must be (0, 0, 1)")
    return scene


def _camera(pycolmap, scene: Scene, i: int):
    K = scene.Ks[i]
    if scene.image_size is not None:
        w, h = (int(v) for v in scene.image_size)
    else:  # DEVIATION: without an image size, the principal point is taken as the centre
        w, h = max(1, int(np.ceil(2 * K[0, 2]))), max(1, int(np.ceil(2 * K[1, 2])))
    camera = pycolmap.Camera(
        model="PINHOLE", width=w, height=h,
        params=[K[0, 0], K[1, 1], K[0, 2], K[1, 2]], camera_id=i + 1,
    )  # fmt: skip
    camera.has_prior_focal_length = True
    return camera


def _keypoint_index(scene: Scene) -> np.ndarray:
    """Each entry's keypoint index within its image (entries of an image in entry order)."""
    idx = np.empty(len(scene.cam), np.int64)
    for i in range(len(scene.Ks)):
        es = np.flatnonzero(scene.cam == i)
        idx[es] = np.arange(len(es))
    return idx


def write_database(scene: Scene, database_path: str | os.PathLike) -> list[tuple[int, int]]:
    """Write a scene's tracks into a new COLMAP database (cameras, rigs, frames, images,
    keypoints, raw matches). Image i gets camera, rig, frame and image id i + 1 and the name
    `f"{i:06d}.png"`; its keypoints are its entries in entry order (outliers included).

    Returns the image pairs (a, b), a < b, input camera indices, that got matches: one match
    per track the two images share.

    Shapes:
        scene with m cameras and E entries -> database with E keypoints and
        sum_j C(len_j, 2) matches over tracks j of len_j entries
    """
    import pycolmap

    scene = _check_scene(scene)
    if os.path.exists(database_path):
        raise ValueError(f"database_path={str(database_path)!r} exists: must be a new file")
    m = len(scene.Ks)
    kp = _keypoint_index(scene)
    db = pycolmap.Database.open(str(database_path))
    try:
        for i in range(m):
            cid = db.write_camera(_camera(pycolmap, scene, i), use_camera_id=True)
            sensor = pycolmap.sensor_t(type=pycolmap.SensorType.CAMERA, id=cid)
            rig = pycolmap.Rig(rig_id=i + 1)
            rig.add_ref_sensor(sensor)
            rid = db.write_rig(rig, use_rig_id=True)
            image = pycolmap.Image(name=_image_name(i), camera_id=cid, image_id=i + 1)
            iid = db.write_image(image, use_image_id=True)
            frame = pycolmap.Frame(frame_id=i + 1, rig_id=rid)
            frame.add_data_id(pycolmap.data_t(sensor_id=sensor, id=iid))
            db.write_frame(frame, use_frame_id=True)
            es = np.flatnonzero(scene.cam == i)
            db.write_keypoints(iid, np.ascontiguousarray(scene.uv[es], dtype=np.float32))
        # entries sorted by (track, cam): the pairs of a track are the pairs within its block
        order = np.lexsort((scene.cam, scene.track))
        tr = scene.track[order]
        bounds = np.flatnonzero(np.diff(tr)) + 1
        pair_a, pair_b, kp_a, kp_b = [], [], [], []
        for block in np.split(order, bounds):
            if len(block) < 2:
                continue
            ia, ib = np.triu_indices(len(block), 1)
            ea, eb = block[ia], block[ib]  # cam[ea] < cam[eb] (sorted by cam in the block)
            pair_a.append(scene.cam[ea])
            pair_b.append(scene.cam[eb])
            kp_a.append(kp[ea])
            kp_b.append(kp[eb])
        pairs: list[tuple[int, int]] = []
        if pair_a:
            pa, pb = np.concatenate(pair_a), np.concatenate(pair_b)
            ka, kb = np.concatenate(kp_a), np.concatenate(kp_b)
            key = pa * m + pb
            o = np.argsort(key, kind="stable")
            key, ka, kb = key[o], ka[o], kb[o]
            starts = np.r_[0, np.flatnonzero(np.diff(key)) + 1, len(key)]
            for s, e in itertools.pairwise(starts):
                a, b = divmod(int(key[s]), m)
                matches = np.c_[ka[s:e], kb[s:e]].astype(np.uint32)
                db.write_matches(a + 1, b + 1, matches)
                pairs.append((a, b))
    finally:
        db.close()
    return pairs


def _verify(pycolmap, database_path: str, pairs, directory: str, s: ClassicalSettings) -> None:
    pairs_path = os.path.join(directory, "pairs.txt")
    with open(pairs_path, "w") as f:
        f.writelines(f"{_image_name(a)} {_image_name(b)}\n" for a, b in pairs)
    opts = pycolmap.TwoViewGeometryOptions()
    opts.min_num_inliers = s.min_num_inliers
    opts.ransac.max_num_trials = s.max_num_trials
    # COLMAP's default min_num_trials (100) must not exceed max_num_trials
    opts.ransac.min_num_trials = min(opts.ransac.min_num_trials, s.max_num_trials)
    opts.ransac.max_error = s.ransac_max_error_px
    opts.ransac.random_seed = s.random_seed
    opts.ransac.num_threads = s.num_threads
    pycolmap.verify_matches(database_path, pairs_path, opts)


def _mapper_options(pycolmap, mapper: str, s: ClassicalSettings):
    if mapper == "incremental":
        o = pycolmap.IncrementalPipelineOptions()
        o.extract_colors = False
        o.ba_refine_focal_length = False
        o.ba_refine_principal_point = False
        o.ba_refine_extra_params = False
        o.mapper.abs_pose_refine_focal_length = False
        o.mapper.abs_pose_refine_extra_params = False
        o.mapper.num_threads = s.num_threads
        o.mapper.random_seed = s.random_seed
        o.triangulation.random_seed = s.random_seed
    else:
        o = pycolmap.GlobalPipelineOptions()
        ba = o.mapper.bundle_adjustment
        ba.refine_focal_length = False
        ba.refine_principal_point = False
        ba.refine_extra_params = False
        ba.ceres.solver_options.num_threads = s.num_threads
        o.mapper.num_threads = s.num_threads
        o.mapper.random_seed = s.random_seed
        o.mapper.rotation_averaging.random_seed = s.random_seed
        o.mapper.global_positioning.random_seed = s.random_seed
        o.mapper.retriangulation.random_seed = s.random_seed
    o.num_threads = s.num_threads
    o.random_seed = s.random_seed
    o.min_num_matches = s.min_num_matches
    o.multiple_models = s.multiple_models
    if s.min_model_size is not None:
        o.min_model_size = s.min_model_size
    for name, value in s.mapper_options.items():
        *parents, leaf = name.split(".")
        target = o
        try:
            for part in parents:
                target = getattr(target, part)
            getattr(target, leaf)
        except AttributeError:
            raise ValueError(
                f"mapper_options has {name!r}: not an option of {type(o).__name__}"
            ) from None
        try:
            setattr(target, leaf, value)
        except (TypeError, ValueError) as err:
            raise ValueError(f"mapper_options[{name!r}]={value!r} is refused: {err}") from None
    return o


def _to_state(rec, scene: Scene) -> SfMState:
    """A pycolmap reconstruction of our database as a `SfMState` in input indices."""
    m = len(scene.Ks)
    entry_of = [np.flatnonzero(scene.cam == i) for i in range(m)]
    cameras = np.array(sorted(iid - 1 for iid in rec.reg_image_ids()), np.int64)
    R = np.zeros((len(cameras), 3, 3))
    t = np.zeros((len(cameras), 3))
    for k, i in enumerate(cameras):
        pose = rec.image(int(i) + 1).cam_from_world()
        R[k] = pose.rotation.matrix()
        t[k] = pose.translation
    best: dict[int, tuple[int, int, np.ndarray, np.ndarray]] = {}  # track -> (-len, id, X, es)
    for pid in sorted(rec.point3D_ids()):
        p = rec.point3D(pid)
        es = np.array(
            [entry_of[el.image_id - 1][el.point2D_idx] for el in p.track.elements], np.int64
        )
        tracks, counts = np.unique(scene.track[es], return_counts=True)
        j = int(tracks[np.argmax(counts)])
        es = es[scene.track[es] == j]
        cand = (-len(es), pid, np.asarray(p.xyz, np.float64), es)
        if j not in best or cand[:2] < best[j][:2]:
            best[j] = cand
    tracks = np.array(sorted(best), np.int64)
    X = np.array([best[j][2] for j in tracks]).reshape(-1, 3)
    entries = np.sort(np.concatenate([best[j][3] for j in tracks])) if len(tracks) else []
    return SfMState(cameras, tracks, np.asarray(entries, np.int64), R, t, X)


def _empty_state() -> SfMState:
    e = np.zeros(0, np.int64)
    return SfMState(e, e, e, np.zeros((0, 3, 3)), np.zeros((0, 3)), np.zeros((0, 3)))


def _run(scene: Scene, mapper: str, settings: ClassicalSettings | None) -> ClassicalResult:
    import pycolmap

    scene = _check_scene(scene)
    s = ClassicalSettings() if settings is None else settings
    if not isinstance(s, ClassicalSettings):
        raise TypeError(f"settings is a {type(s).__name__}: must be ClassicalSettings")
    if s.random_seed >= 0:
        pycolmap.set_random_seed(s.random_seed)
    opts = _mapper_options(pycolmap, mapper, s)  # bad option names fail before any work
    seconds: dict[str, float] = {}
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="iclr25_colmap_") as d:
        db_path = os.path.join(d, "database.db")
        t0 = time.perf_counter()
        pairs = write_database(scene, db_path)
        seconds["database"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if pairs:
            _verify(pycolmap, db_path, pairs, d, s)
        db = pycolmap.Database.open(db_path)
        try:
            _, inliers = db.read_two_view_geometry_num_inliers()
            num_verified = int(np.sum(np.asarray(inliers) >= s.min_num_inliers))
        finally:
            db.close()
        seconds["verify"] = time.perf_counter() - t0
        out = os.path.join(d, "sparse")
        os.makedirs(out)
        t0 = time.perf_counter()
        # image_path: an empty folder (there are no images; colours are not extracted)
        if mapper == "incremental":
            models = pycolmap.incremental_mapping(db_path, d, out, opts)
        else:
            models = pycolmap.global_mapping(db_path, d, out, opts)
        seconds["mapping"] = time.perf_counter() - t0
        recs = sorted(
            models.values(), key=lambda r: (r.num_reg_images(), r.num_points3D()), reverse=True
        )
        sizes = [int(r.num_reg_images()) for r in recs]
        if recs and sizes[0] > 0:
            state, failed = _to_state(recs[0], scene), None
        else:
            state = _empty_state()
            failed = f"{mapper} mapping produced no model ({num_verified} verified pairs)"
    seconds["total"] = time.perf_counter() - t_all
    return ClassicalResult(
        final=state, mapper=mapper, num_models=len(recs), model_sizes=sizes,
        num_pairs=len(pairs), num_verified_pairs=num_verified, seconds=seconds, failed=failed,
    )  # fmt: skip


def run_colmap(scene: Scene, settings: ClassicalSettings | None = None) -> ClassicalResult:
    """COLMAP incremental mapping (`pycolmap.incremental_mapping`) on the scene's tracks.

    Intrinsics fixed (no focal length, principal point or extra parameter refinement, in BA or
    in absolute pose estimation); the rest are COLMAP 4.x defaults. See the module docstring.

    Shapes:
        scene with m cameras -> ClassicalResult, final.R (k, 3, 3), final.t (k, 3),
        final.X (p, 3) for the k registered cameras and p reconstructed tracks
    """
    return _run(scene, "incremental", settings)


def run_glomap(scene: Scene, settings: ClassicalSettings | None = None) -> ClassicalResult:
    """GLOMAP global mapping (`pycolmap.global_mapping`: rotation averaging, global
    positioning, BA, re-triangulation) on the scene's tracks, intrinsics fixed in its BA.

    Shapes:
        as `run_colmap`
    """
    return _run(scene, "global", settings)


def export_colmap(
    result: SfMState | PipelineResult | ClassicalResult,
    scene: Scene,
    path: str | os.PathLike,
    *,
    image_names: list[str] | None = None,
) -> None:
    """Write a reconstruction (RESfM's or a classical one) as a COLMAP binary model
    (`cameras.bin`, `images.bin`, `points3D.bin`, `rigs.bin`, `frames.bin`) into the folder
    `path` (created if missing), readable by `pycolmap.Reconstruction(path)`, COLMAP and
    gsplat tooling.

    Every camera of the result becomes a PINHOLE camera with a trivial rig and an image with
    its pose; the image's 2D points are all of that camera's observed entries in the scene, in
    entry order; every track with a finite point becomes a 3D point (id = track index + 1)
    observed by the result's entries of that track. Camera/image ids are input camera
    index + 1; names are `image_names[i]` (default `f"{i:06d}.png"`).

    Shapes:
        result over k cameras and p tracks of `scene` -> k images, <= p points3D
    """
    import pycolmap

    scene = _check_scene(scene)
    state = result.final if isinstance(result, PipelineResult | ClassicalResult) else result
    if not isinstance(state, SfMState):
        raise TypeError(
            f"result is a {type(result).__name__}: must be SfMState, PipelineResult or "
            "ClassicalResult"
        )
    m = len(scene.Ks)
    if image_names is None:
        image_names = [_image_name(i) for i in range(m)]
    if len(image_names) != m or len(set(image_names)) != m:
        raise ValueError(f"image_names has {len(image_names)} names: must be {m} unique names")
    cams, trs, ents = (
        np.asarray(a, np.int64) for a in (state.cameras, state.tracks, state.entries)
    )
    if len(cams) and (cams.min() < 0 or cams.max() >= m):
        raise ValueError(f"result.cameras has values outside [0, {m}): not from this scene")
    if len(trs) and (trs.min() < 0 or trs.max() >= scene.num_tracks):
        raise ValueError(f"result.tracks has values outside [0, {scene.num_tracks})")
    if len(ents) and (ents.min() < 0 or ents.max() >= len(scene.cam)):
        raise ValueError(f"result.entries has values outside [0, {len(scene.cam)})")
    if not (np.all(np.isin(scene.cam[ents], cams)) and np.all(np.isin(scene.track[ents], trs))):
        raise ValueError("result.entries has entries of cameras or tracks not in the result")
    if os.path.isfile(path):
        raise ValueError(f"path={str(path)!r} is a file: must be a folder")
    kp = _keypoint_index(scene)
    rec = pycolmap.Reconstruction()
    for k, i in enumerate(cams):
        i = int(i)
        rec.add_camera_with_trivial_rig(_camera(pycolmap, scene, i))
        es = np.flatnonzero(scene.cam == i)
        image = pycolmap.Image(
            name=image_names[i], keypoints=scene.uv[es].reshape(-1, 2), camera_id=i + 1,
            image_id=i + 1,
        )  # fmt: skip
        rec.add_image_with_trivial_frame(image, pycolmap.Rigid3d(np.c_[state.R[k], state.t[k]]))
    for k, j in enumerate(trs):
        es = ents[scene.track[ents] == j]
        if len(es) == 0 or not np.all(np.isfinite(state.X[k])):
            continue
        tr = pycolmap.Track()
        for e in es:
            tr.add_element(int(scene.cam[e]) + 1, int(kp[e]))
        point = pycolmap.Point3D()
        point.xyz = state.X[k]
        point.track = tr
        rec.add_point3D_with_id(int(j) + 1, point)
    rec.update_point_3d_errors()
    os.makedirs(path, exist_ok=True)
    rec.write(str(path))
