"""Synthetic scenes: shapes, determinism, visibility, outlier rates per kind, the npz format."""

import numpy as np
import pytest

from iclr25.papers.robust_sfm import Scene, load_tracks, make_scene, project, save_tracks


def test_shapes_and_dtypes(outlier_scene):
    s = outlier_scene
    m, n, E = s.num_cameras, s.num_tracks, s.num_entries
    assert s.Ks.shape == (m, 3, 3) and s.R.shape == (m, 3, 3) and s.t.shape == (m, 3)
    assert s.X.shape == (n, 3)
    assert s.cam.shape == s.track.shape == (E,) and s.cam.dtype == np.int64
    assert s.uv.shape == (E, 2) and s.is_outlier.shape == (E,) and s.is_outlier.dtype == bool
    np.testing.assert_array_equal(s.is_outlier, s.outlier_type > 0)
    key = s.cam * n + s.track
    assert len(np.unique(key)) == E  # each (cam, track) once
    assert np.all(np.diff(key) > 0)  # sorted by (cam, track)
    assert s.normalized_uv().shape == (E, 2)


def test_seeded_determinism(seed):
    kw = dict(num_cameras=8, num_points=100, outlier_rate=0.2)
    a = make_scene(np.random.default_rng(seed), **kw)
    b = make_scene(np.random.default_rng(seed), **kw)
    c = make_scene(np.random.default_rng(seed + 1), **kw)
    for f in ("cam", "track", "uv", "is_outlier", "R", "t", "X"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert a.uv.shape != c.uv.shape or not np.array_equal(a.uv, c.uv)


@pytest.mark.parametrize("layout", ["ring", "sweep", "forward"])
def test_visibility_constraints(layout, seed):
    s = make_scene(
        np.random.default_rng(seed), layout=layout, num_cameras=10, num_points=200,
        noise_px=0.0, outlier_rate=0.0,
    )  # fmt: skip
    W, H = s.image_size
    uv, depth = project(s.Ks, s.R, s.t, s.X)
    d = depth[s.cam, s.track]
    assert np.all(d > 0)
    p = uv[s.cam, s.track]
    assert np.all((p[:, 0] >= 0) & (p[:, 0] < W) & (p[:, 1] >= 0) & (p[:, 1] < H))
    assert s.track_lengths().min() >= 3
    assert np.bincount(s.cam, minlength=s.num_cameras).min() >= 10
    if layout == "forward":
        assert d.max() < 5.0  # the default view range
    # the view graph (cameras sharing a track) is connected
    V = np.zeros((s.num_cameras, s.num_tracks), int)
    V[s.cam, s.track] = 1
    A = (V @ V.T) > 0
    reach = np.zeros(s.num_cameras, bool)
    reach[0] = True
    for _ in range(s.num_cameras):
        reach = A[reach].any(0) | reach
    assert reach.all()


def test_forward_regime_gives_short_tracks(seed):
    kw = dict(num_cameras=20, num_points=300, outlier_rate=0.0)
    ring = make_scene(np.random.default_rng(seed), layout="ring", **kw)
    fwd = make_scene(np.random.default_rng(seed), layout="forward", **kw)
    assert np.median(fwd.track_lengths()) <= 5
    assert fwd.track_lengths().mean() < 0.6 * ring.track_lengths().mean()


def test_outlier_rate_per_kind(outlier_scene):
    s = outlier_scene
    assert s.is_outlier.mean() == pytest.approx(0.3, abs=0.005)
    share = np.bincount(s.outlier_type, minlength=4)[1:] / s.num_entries
    np.testing.assert_allclose(share, 0.1, atol=0.005)
    for mix, kind in (((1, 0, 0), 1), ((0, 1, 0), 2), ((0, 0, 1), 3)):
        t = make_scene(np.random.default_rng(5), num_cameras=8, num_points=120, outlier_rate=0.2,
                       outlier_mix=mix)  # fmt: skip
        assert t.is_outlier.mean() == pytest.approx(0.2, abs=0.005)
        assert set(np.unique(t.outlier_type)) == {0, kind}


def test_two_kind_mix_where_both_counts_round_up():
    """(0, 1, 1) at 40 %: both rounded counts went up, the uniform count came out -1, and
    `[:-1]` then replaced every entry but one by a uniform outlier."""
    t = make_scene(np.random.default_rng(7), layout="sweep", num_cameras=16, num_points=300,
                   outlier_rate=0.4, outlier_mix=(0, 1, 1))  # fmt: skip
    assert t.is_outlier.mean() == pytest.approx(0.4, abs=0.005)
    counts = np.bincount(t.outlier_type, minlength=4)
    assert counts[1] == 0 and abs(int(counts[2]) - int(counts[3])) <= 1


def test_outlier_kinds_are_what_they_claim(seed):
    s = make_scene(np.random.default_rng(seed), num_cameras=8, num_points=150, noise_px=0.0,
                   outlier_rate=0.3)  # fmt: skip
    W, H = s.image_size
    uv, _ = project(s.Ks, s.R, s.t, s.X)
    true = uv[s.cam, s.track]
    err = np.linalg.norm(s.uv - true, axis=1)
    ot = s.outlier_type
    assert np.all(err[ot == 0] < 1e-9)
    near = ot == 2  # another point's projection, within 30 px, not the point itself
    assert np.all(err[near] < 30.0) and np.all(err[near] > 0)
    for e in np.flatnonzero(near):
        dist = np.linalg.norm(uv[s.cam[e]] - s.uv[e], axis=1)
        assert dist.min() < 1e-9 and np.argmin(dist) != s.track[e]
    unif = s.uv[ot == 1]
    assert np.all((unif >= 0) & (unif < [W, H]))
    for e in np.flatnonzero(ot == 3):  # a merge copies another track's entry in that camera
        same_cam = np.flatnonzero((s.cam == s.cam[e]) & (s.track != s.track[e]))
        assert np.min(np.linalg.norm(s.uv[same_cam] - s.uv[e], axis=1)) < 1e-12


def test_npz_round_trip(outlier_scene, tmp_path):
    s = outlier_scene
    path = tmp_path / "scene.npz"
    save_tracks(path, s)
    r = load_tracks(path)
    for f in ("Ks", "cam", "track", "uv", "is_outlier", "outlier_type", "R", "t", "X"):
        np.testing.assert_array_equal(getattr(r, f), getattr(s, f))
    assert r.num_tracks == s.num_tracks and r.image_size == s.image_size
    # a user's minimal file: shared K, no labels, no GT
    np.savez(tmp_path / "mine.npz", cam=s.cam, track=s.track, uv=s.uv, K=s.Ks[0])
    mine = load_tracks(tmp_path / "mine.npz")
    assert mine.num_cameras == s.num_cameras and not mine.has_gt and mine.is_outlier is None


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"uv": None}, "missing field.*uv"),
        ({"uv": "nan"}, "uv: contains NaN"),
        ({"cam": "big"}, r"cam: has values in \[0, 99\]"),
        ({"track": "float"}, "track: has dtype float64"),
        ({"cam": "dup"}, "cam/track: a .cam, track. pair appears twice"),
        ({"Ks": "single"}, r"Ks: has shape \(3, 3\)"),
        ({"R": "bad"}, "R: is not a stack of rotations"),
        ({"extra": 1}, "unknown field.*extra"),
    ],
)
def test_load_tracks_names_the_bad_field(outlier_scene, tmp_path, change, match):
    s = outlier_scene
    d = {"cam": s.cam.copy(), "track": s.track.copy(), "uv": s.uv.copy(), "Ks": s.Ks,
         "R": s.R, "t": s.t}  # fmt: skip
    for k, v in change.items():
        if v is None:
            del d[k]
        elif v == "nan":
            d[k][0, 0] = np.nan
        elif v == "big":
            d[k][-1] = 99
        elif v == "float":
            d[k] = d[k].astype(float)
        elif v == "dup":
            d["cam"][1], d["track"][1] = d["cam"][0], d["track"][0]
        elif v == "single":
            d[k] = s.Ks[0]
        elif v == "bad":
            d[k] = 2.0 * s.R
        else:
            d[k] = v
    np.savez(tmp_path / "bad.npz", **d)
    with pytest.raises(ValueError, match=match):
        load_tracks(tmp_path / "bad.npz")


def test_bad_generator_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"outlier_rate=-0.1 is not allowed: must be >= 0"):
        make_scene(rng, outlier_rate=-0.1)
    with pytest.raises(ValueError, match=r"layout='circle' is not allowed: must be one of"):
        make_scene(rng, layout="circle")
    with pytest.raises(ValueError, match=r"outlier_mix=\(1, 1\) is not allowed"):
        make_scene(rng, outlier_mix=(1, 1))
    with pytest.raises(TypeError, match=r"num_cameras=2\.5"):
        make_scene(rng, num_cameras=2.5)
    with pytest.raises(ValueError, match="noise_px=nan"):
        make_scene(rng, noise_px=float("nan"))
    with pytest.raises(ValueError, match="track: has 2 entries but cam has 3"):
        Scene(Ks=np.eye(3)[None], cam=np.zeros(3, int), track=np.zeros(2, int), uv=np.zeros((3, 2)))
