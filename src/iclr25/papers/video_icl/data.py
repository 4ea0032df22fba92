"""Procedural sprite videos: scenes, latent actions, pretraining corpora and evaluation episodes.

A *scene* is (shape, colour, background): one sprite of `SHAPES` x `COLOURS` on one of the
`BACKGROUNDS` textures. An *action* is one of `ACTIONS`: the sprite moves up/down/left/right on a
static background, or the camera pans (the whole picture, sprite and background, shifts
horizontally). Frames are `(H, W, 3)` float32 RGB in [0, 1]; a clip is `(T, H, W, 3)`.

The world is a torus: sprite and background wrap around the frame edges, so a shot can be as
long as wanted without the sprite leaving the frame.
# DEVIATION: wrap-around (toroidal) motion; the notes' 12x12 frames had the sprite stop at a wall
# implicitly. A torus lets the single-shot control corpus have the same length as a 2-shot video.

Every clip starts with `n_static` identical frames (nothing moves yet), then moves by `speed`
pixels per frame, so a query whose prefix is only static frames is ambiguous about its action
(notes §4, "1-2 static frames at the start").

Corpora (notes §4, "Data: synthetic sprite video"):

- `make_two_shot_video` / corpus "B": two shots of different scenes joined by a hard cut (no
  separator); the second shot's action equals the first's with probability `p`, otherwise it is
  drawn uniformly from all `ACTIONS`.
  # DEVIATION: "otherwise uniform over all K actions", so P(same) = p + (1 - p) / K and p = 0 is
  # independence (the null), not anti-persistence. The paper relies on natural video; p is the
  # in-context signal injected here.
- `make_single_shot_video` / corpus "A": one continuous shot of the same total length.
- `make_pair_video`: the explicit demonstration -> query pairs of the upper-bound baseline (the
  second shot always repeats the first's action and starts with the evaluation's static prefix).

Held-out combinations (`Split`): a fraction of scenes (shape, colour, background) and a fraction
of (shape, colour, action) triples never occur in a training corpus; evaluation queries and
demonstrations are drawn from them ("unseen scenarios").

Ground truth comes with every clip: the sprite's top-left position and the background's offset
per frame (`Clip.sprite_pos`, `Clip.bg_offset`, `(T, 2)` int (y, x)), which the exact tracker
(`metrics.track_clip`) recovers from rendered frames.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int

SHAPES = ("square", "ring", "plus", "cross")
"""Sprite shapes (4x4 binary masks, see `sprite_mask`)."""

COLOURS = {
    "red": (0.9, 0.1, 0.1),
    "green": (0.1, 0.85, 0.1),
    "blue": (0.15, 0.15, 0.95),
    "yellow": (0.95, 0.9, 0.1),
    "magenta": (0.9, 0.1, 0.9),
    "cyan": (0.1, 0.9, 0.9),
}
"""Saturated sprite colours; backgrounds are grey (equal channels), so colour separates them."""

BACKGROUNDS = ("checker", "stripes", "dots", "noise")
"""Background texture kinds (grey, see `background_texture`)."""

# DEVIATION: K = 6 actions (the pan has two directions so that every action has an opposite)
ACTIONS = ("up", "down", "left", "right", "pan_left", "pan_right")
"""Latent actions. `pan_left`: the camera pans left, so the picture content moves right (+x)."""

CONTRAST = {"up": "down", "down": "up", "left": "right", "right": "left",
            "pan_left": "pan_right", "pan_right": "pan_left"}  # fmt: skip
"""The contrast action of each action: the opposite direction.
# DEVIATION: the paper's "contrast action" is loosely defined (a review point); here it is the
# opposite direction, and the pan has two directions (K = 6 actions, chance 1/6; notes: K = 5)
# so that every action has one."""

SETTINGS = ("similar", "contrast", "random", "none")
"""Demonstration settings of an evaluation episode (the paper's four)."""

SPRITE_SIZE = 4


def _motion(action: str, speed: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Per-frame (dy, dx) of the sprite in the frame and of the background offset."""
    d = {
        "up": ((-speed, 0), (0, 0)),
        "down": ((speed, 0), (0, 0)),
        "left": ((0, -speed), (0, 0)),
        "right": ((0, speed), (0, 0)),
        "pan_left": ((0, speed), (0, speed)),
        "pan_right": ((0, -speed), (0, -speed)),
    }
    return d[action]


def sprite_mask(shape: str) -> np.ndarray:
    """The `(4, 4)` bool mask of `shape` (one of `SHAPES`)."""
    check_choice("shape", shape, SHAPES)
    i, j = np.mgrid[:SPRITE_SIZE, :SPRITE_SIZE]
    if shape == "square":
        m = np.ones((SPRITE_SIZE, SPRITE_SIZE), bool)
    elif shape == "ring":
        m = (i == 0) | (i == 3) | (j == 0) | (j == 3)
    elif shape == "plus":
        m = (i == 1) | (i == 2) | (j == 1) | (j == 2)  # the 4 corners are off
    else:  # cross
        m = (i == j) | (i + j == 3)
    return m


def background_texture(kind: str, size: int) -> np.ndarray:
    """The `(size, size)` grey texture of `kind` (deterministic: the same array on every call).

    A pattern (checker of 3-px cells / diagonal stripes of period 6 / dots / smooth noise) plus
    faint fixed noise, values in [0.2, 0.6], so that no non-zero shift maps a texture onto
    itself (the tracker's background offset is unique); the pattern periods (6 px) are not
    divisors of the 4-px grid, so a pan by one grid step changes the pattern itself, not only
    the faint noise, in a way that tells left from right.
    """
    check_choice("background", kind, BACKGROUNDS)
    size = check_int("size", size, 8)
    g = np.random.default_rng(1000 + BACKGROUNDS.index(kind))  # fixed texture, not data noise
    i, j = np.mgrid[:size, :size]
    if kind == "checker":
        t = np.where(((i // 3) + (j // 3)) % 2 == 0, 0.28, 0.46)
    elif kind == "stripes":
        t = np.where(((i + 2 * j) // 3) % 2 == 0, 0.3, 0.5)
    elif kind == "dots":
        t = np.full((size, size), 0.32)
        t[g.random((size, size)) < 0.15] = 0.55
    else:
        f = g.random((size, size))
        for _ in range(2):
            f = (f + np.roll(f, 1, 0) + np.roll(f, 1, 1) + np.roll(f, (1, 1), (0, 1))) / 4
        t = 0.25 + 0.3 * (f - f.min()) / (np.ptp(f) + 1e-9)
    t = t + g.uniform(-0.04, 0.04, (size, size))
    return np.clip(t, 0.2, 0.6).astype(np.float32)


@dataclass(frozen=True)
class Scene:
    """One scenario: a sprite `shape` and `colour` on a `background` texture kind."""

    shape: str
    colour: str
    background: str

    def __post_init__(self):
        check_choice("shape", self.shape, SHAPES)
        check_choice("colour", self.colour, tuple(COLOURS))
        check_choice("background", self.background, BACKGROUNDS)


ALL_SCENES = tuple(Scene(*s) for s in itertools.product(SHAPES, COLOURS, BACKGROUNDS))


@dataclass(frozen=True)
class Clip:
    """One rendered shot (or a video of several shots joined by cuts).

    Attributes:
        frames: `(T, H, W, 3)` float32 in [0, 1].
        sprite_pos: `(T, 2)` int, the sprite's top-left (y, x) in the frame (mod H, W).
        bg_offset: `(T, 2)` int, the background texture's roll (y, x) (mod H, W).
        scenes: the scene of each shot.
        actions: the action of each shot (indices into `ACTIONS`).
        shot_starts: the first frame of each shot (`(0,)` for a single shot).
        n_static: the number of static frames at the start of each shot.
    """

    frames: np.ndarray
    sprite_pos: np.ndarray
    bg_offset: np.ndarray
    scenes: tuple[Scene, ...]
    actions: tuple[int, ...]
    shot_starts: tuple[int, ...]
    n_static: tuple[int, ...] = field(default=())

    @property
    def num_frames(self) -> int:
        return int(self.frames.shape[0])

    def shot(self, k: int) -> Clip:
        """Shot `k` as a clip of its own."""
        check_int("k", k, 0, len(self.shot_starts) - 1)
        a = self.shot_starts[k]
        b = self.shot_starts[k + 1] if k + 1 < len(self.shot_starts) else self.num_frames
        return Clip(
            self.frames[a:b], self.sprite_pos[a:b], self.bg_offset[a:b], (self.scenes[k],),
            (self.actions[k],), (0,), (self.n_static[k],),
        )  # fmt: skip


def render_frames(
    scene: Scene, sprite_pos: np.ndarray, bg_offset: np.ndarray, size: int
) -> np.ndarray:
    """Frames `(T, size, size, 3)` of `scene` with the sprite at `sprite_pos` `(T, 2)` and the
    background rolled by `bg_offset` `(T, 2)` (both wrap around)."""
    size = check_int("size", size, 8)
    sprite_pos = np.asarray(sprite_pos)
    bg_offset = np.asarray(bg_offset)
    if sprite_pos.ndim != 2 or sprite_pos.shape[1] != 2 or bg_offset.shape != sprite_pos.shape:
        raise ValueError(
            f"sprite_pos {sprite_pos.shape} and bg_offset {bg_offset.shape} must both be (T, 2)"
        )
    tex = background_texture(scene.background, size)
    mask = sprite_mask(scene.shape)
    colour = np.asarray(COLOURS[scene.colour], np.float32)
    my, mx = np.nonzero(mask)
    T = len(sprite_pos)
    out = np.empty((T, size, size, 3), np.float32)
    for t in range(T):
        out[t] = np.roll(tex, tuple(int(v) for v in bg_offset[t]), (0, 1))[..., None]
        y, x = int(sprite_pos[t, 0]), int(sprite_pos[t, 1])
        out[t, (y + my) % size, (x + mx) % size] = colour
    return out


def render_clip(
    scene: Scene,
    action: int | str,
    num_frames: int,
    *,
    size: int = 16,
    n_static: int = 1,
    start_pos: tuple[int, int] = (0, 0),
    start_offset: tuple[int, int] = (0, 0),
    speed: int = 1,
) -> Clip:
    """Render one shot: `n_static` identical frames, then motion by `speed` px per frame.

    Frame t is displaced by `max(0, t - n_static + 1) * speed` pixels in the action's direction
    (`n_static=1`: motion from frame 1 on).

    Returns:
        A `Clip` of `num_frames` frames `(T, size, size, 3)` with its ground truth.
    """
    if isinstance(action, str):
        action = ACTIONS.index(check_choice("action", action, ACTIONS))
    action = check_int("action", action, 0, len(ACTIONS) - 1)
    num_frames = check_int("num_frames", num_frames, 1)
    n_static = check_int("n_static", n_static, 1, num_frames)
    speed = check_int("speed", speed, 1)
    size = check_int("size", size, 8)
    steps = np.maximum(0, np.arange(num_frames) - n_static + 1)[:, None]
    ds, db = _motion(ACTIONS[action], speed)
    # DEVIATION: a toroidal world, positions and offsets wrap around the frame
    pos = (np.asarray(start_pos)[None] + steps * np.asarray(ds)[None]) % size
    off = (np.asarray(start_offset)[None] + steps * np.asarray(db)[None]) % size
    frames = render_frames(scene, pos, off, size)
    return Clip(frames, pos.astype(np.int64), off.astype(np.int64), (scene,), (action,), (0,),
                (n_static,))  # fmt: skip


def concat_clips(clips: list[Clip]) -> Clip:
    """Join shots by hard cuts (no separator frame or token)."""
    if not clips:
        raise ValueError("clips=[] is not allowed: need at least one clip")
    starts, n = [], 0
    for c in clips:
        starts.extend(s + n for s in c.shot_starts)
        n += c.num_frames
    return Clip(
        np.concatenate([c.frames for c in clips]),
        np.concatenate([c.sprite_pos for c in clips]),
        np.concatenate([c.bg_offset for c in clips]),
        tuple(s for c in clips for s in c.scenes),
        tuple(a for c in clips for a in c.actions),
        tuple(starts),
        tuple(s for c in clips for s in c.n_static),
    )


@dataclass(frozen=True)
class Split:
    """Held-out combinations: scenes (shape, colour, background) and (shape, colour, action)
    triples that no training video contains.

    Attributes:
        heldout_scenes: frozenset of `Scene`.
        heldout_moves: frozenset of (shape, colour, action index).
    """

    heldout_scenes: frozenset
    heldout_moves: frozenset

    def is_heldout(self, scene: Scene, action: int) -> bool:
        """True when a shot of `scene` doing `action` is an unseen scenario."""
        return scene in self.heldout_scenes or (scene.shape, scene.colour, action) in (
            self.heldout_moves
        )


def make_split(
    rng: np.random.Generator, scene_fraction: float = 0.2, move_fraction: float = 0.2
) -> Split:
    """Hold out `scene_fraction` of the 96 scenes and `move_fraction` of the 144
    (shape, colour, action) triples, at random; every action keeps at least one training scene
    and at least one held-out scene."""
    scene_fraction = check_float("scene_fraction", scene_fraction, 0.0, 0.9)
    move_fraction = check_float("move_fraction", move_fraction, 0.0, 0.9)
    # DEVIATION: unseen = a held-out scene OR a held-out (shape, colour, action) triple
    moves = list(itertools.product(SHAPES, COLOURS, range(len(ACTIONS))))
    for _ in range(100):
        hs = rng.permutation(len(ALL_SCENES))[: round(scene_fraction * len(ALL_SCENES))]
        hm = rng.permutation(len(moves))[: round(move_fraction * len(moves))]
        split = Split(frozenset(ALL_SCENES[i] for i in hs), frozenset(moves[i] for i in hm))
        ok = all(
            any(not split.is_heldout(s, a) for s in ALL_SCENES)
            and any(split.is_heldout(s, a) for s in ALL_SCENES)
            for a in range(len(ACTIONS))
        )
        if ok or (scene_fraction == 0 and move_fraction == 0):
            return split
    raise RuntimeError(
        "could not draw a split with every action seen and held out"
    )  # pragma: no cover


def _draw_scene(rng, split: Split | None, action: int, heldout: bool, exclude=()) -> Scene:
    for _ in range(10_000):
        s = ALL_SCENES[rng.integers(len(ALL_SCENES))]
        if s in exclude:
            continue
        if split is None or split.is_heldout(s, action) == heldout:
            return s
    raise RuntimeError(f"no {'held-out' if heldout else 'training'} scene for action {action}")


def _start(rng, size: int, grid: int) -> tuple[int, int]:
    return tuple(int(v) * grid for v in rng.integers(size // grid, size=2))


def _random_shot(rng, split, action, num_frames, size, speed, n_static, heldout=False, exclude=(),
                 grid=1):  # fmt: skip
    scene = _draw_scene(rng, split, action, heldout, exclude)
    return render_clip(
        scene, action, num_frames, size=size, n_static=n_static,
        start_pos=_start(rng, size, grid), start_offset=_start(rng, size, grid), speed=speed,
    )  # fmt: skip


def _check_grid(size: int, speed: int, grid) -> int:
    grid = check_int("grid", grid, 1)
    if size % grid or speed % grid:
        raise ValueError(f"grid={grid} is not allowed: must divide size={size} and speed={speed}")
    return grid


def _check_common(shot_len, size, speed, static_range, grid=1):
    shot_len = check_int("shot_len", shot_len, 2)
    size = check_int("size", size, 8)
    speed = check_int("speed", speed, 1)
    grid = _check_grid(size, speed, grid)
    if (
        not isinstance(static_range, tuple)
        or len(static_range) != 2
        or not 1 <= static_range[0] <= static_range[1] < shot_len
    ):
        raise ValueError(
            f"static_range={static_range!r} is not allowed: must be (lo, hi) with "
            f"1 <= lo <= hi < shot_len={shot_len}"
        )
    return shot_len, size, speed, grid


def make_two_shot_video(
    rng: np.random.Generator,
    p: float,
    *,
    split: Split | None = None,
    shot_len: int = 8,
    size: int = 16,
    speed: int = 1,
    grid: int = 1,
    static_range: tuple[int, int] = (1, 2),
) -> Clip:
    """Corpus B: two shots of different training scenes joined by a cut; the second shot keeps the
    first's action with probability `p`, else its action is uniform over `ACTIONS`.

    Returns:
        A `Clip` of `2 * shot_len` frames, `shot_starts == (0, shot_len)`.
    """
    p = check_float("p", p, 0.0, 1.0)
    shot_len, size, speed, grid = _check_common(shot_len, size, speed, static_range, grid)
    a1 = int(rng.integers(len(ACTIONS)))
    # DEVIATION: when the action does not persist it is uniform over all K (p = 0: independence)
    a2 = a1 if rng.random() < p else int(rng.integers(len(ACTIONS)))
    shots = []
    for a in (a1, a2):
        ns = int(rng.integers(static_range[0], static_range[1] + 1))
        exclude = (shots[0].scenes[0],) if shots else ()
        shots.append(
            _random_shot(rng, split, a, shot_len, size, speed, ns, exclude=exclude, grid=grid)
        )
    return concat_clips(shots)


def make_single_shot_video(
    rng: np.random.Generator,
    *,
    split: Split | None = None,
    num_frames: int = 16,
    size: int = 16,
    speed: int = 1,
    grid: int = 1,
    static_range: tuple[int, int] = (1, 2),
) -> Clip:
    """Corpus A (control): one continuous shot of a training scene, `num_frames` long."""
    num_frames, size, speed, grid = _check_common(num_frames, size, speed, static_range, grid)
    a = int(rng.integers(len(ACTIONS)))
    ns = int(rng.integers(static_range[0], static_range[1] + 1))
    return _random_shot(rng, split, a, num_frames, size, speed, ns, grid=grid)


def make_pair_video(
    rng: np.random.Generator,
    *,
    split: Split | None = None,
    shot_len: int = 8,
    size: int = 16,
    speed: int = 1,
    grid: int = 1,
    static_range: tuple[int, int] = (1, 2),
    query_static: int = 2,
) -> Clip:
    """Explicit pairs (upper-bound baseline's training data): a demonstration shot and a query
    shot of another training scene with the same action, the query starting with `query_static`
    static frames as the evaluation queries do."""
    shot_len, size, speed, grid = _check_common(shot_len, size, speed, static_range, grid)
    query_static = check_int("query_static", query_static, 1, shot_len - 1)
    a = int(rng.integers(len(ACTIONS)))
    ns = int(rng.integers(static_range[0], static_range[1] + 1))
    demo = _random_shot(rng, split, a, shot_len, size, speed, ns, grid=grid)
    query = _random_shot(rng, split, a, shot_len, size, speed, query_static,
                         exclude=demo.scenes, grid=grid)  # fmt: skip
    return concat_clips([demo, query])


CORPORA = ("two_shot", "single_shot", "pairs")


def make_corpus(
    rng: np.random.Generator,
    n: int,
    kind: str = "two_shot",
    *,
    p: float = 0.7,
    split: Split | None = None,
    shot_len: int = 8,
    size: int = 16,
    speed: int = 1,
    grid: int = 1,
) -> list[Clip]:
    """`n` training videos of `kind` ("two_shot": corpus B with persistence `p`; "single_shot":
    corpus A of `2 * shot_len` frames; "pairs": the explicit-pairs corpus)."""
    n = check_int("n", n, 1)
    check_choice("kind", kind, CORPORA)
    p = check_float("p", p, 0.0, 1.0)
    kw = dict(split=split, size=size, speed=speed, grid=grid)
    if kind == "two_shot":
        return [make_two_shot_video(rng, p, shot_len=shot_len, **kw) for _ in range(n)]
    if kind == "single_shot":
        return [make_single_shot_video(rng, num_frames=2 * shot_len, **kw) for _ in range(n)]
    return [make_pair_video(rng, shot_len=shot_len, **kw) for _ in range(n)]


@dataclass(frozen=True)
class Episode:
    """One evaluation episode.

    Attributes:
        setting: one of `SETTINGS`.
        demo: the demonstration shot (`None` for "none"); `demo.frames` is `(T_d, H, W, 3)`.
        query: the query's whole true clip (prefix + continuation) doing `action`.
        contrast: the same query continued with the contrast action (for the P-Acc analogue).
        n_prefix: the number of query frames given as context (all static).
        action: the query's true action (index); `demo_action` the demonstration's (-1 if none).
        control: a demonstration of a uniformly random action from another held-out scene, for
            the position-matched delta-NLL (the query sits after a demonstration-long clip
            in both terms, unlike the comparison with no demonstration).
    """

    setting: str
    demo: Clip | None
    query: Clip
    contrast: Clip
    n_prefix: int
    action: int
    demo_action: int
    control: Clip | None = None

    @property
    def query_prefix(self) -> np.ndarray:
        """`(n_prefix, H, W, 3)` frames given as context."""
        return self.query.frames[: self.n_prefix]

    @property
    def target_action(self) -> int:
        """The action a faithful imitator shows: the demonstration's (the query's if none)."""
        return self.demo_action if self.demo is not None else self.action


def make_episode(
    rng: np.random.Generator,
    setting: str,
    *,
    split: Split | None = None,
    shot_len: int = 8,
    n_prefix: int = 2,
    size: int = 16,
    speed: int = 1,
    grid: int = 1,
    action: int | None = None,
) -> Episode:
    """An evaluation episode: a held-out query scene doing `action` (random if None), its first
    `n_prefix` frames static, and a demonstration from another held-out scene doing the same
    action ("similar"), its contrast ("contrast"), a uniform random action ("random") or no
    demonstration ("none").

    The "similar" demonstration's continuation is the query's truth; for "contrast" and "random"
    the target of imitation is the demonstration's action (`Episode.target_action`).
    """
    check_choice("setting", setting, SETTINGS)
    shot_len = check_int("shot_len", shot_len, 2)
    n_prefix = check_int("n_prefix", n_prefix, 1, shot_len - 1)
    size = check_int("size", size, 8)
    speed = check_int("speed", speed, 1)
    grid = _check_grid(size, speed, grid)
    if action is None:
        action = int(rng.integers(len(ACTIONS)))
    action = check_int("action", action, 0, len(ACTIONS) - 1)
    contrast_a = ACTIONS.index(CONTRAST[ACTIONS[action]])  # DEVIATION: the opposite direction
    q_scene = _draw_scene(rng, split, action, heldout=split is not None)
    start = _start(rng, size, grid), _start(rng, size, grid)
    kw = dict(size=size, n_static=n_prefix, start_pos=start[0], start_offset=start[1], speed=speed)
    query = render_clip(q_scene, action, shot_len, **kw)
    contrast = render_clip(q_scene, contrast_a, shot_len, **kw)
    demo, demo_action = None, -1
    if setting != "none":
        demo_action = {
            "similar": action,
            "contrast": contrast_a,
            "random": int(rng.integers(len(ACTIONS))),
        }[setting]
        ns = int(rng.integers(1, 3))
        demo = _random_shot(rng, split, demo_action, shot_len, size, speed, min(ns, shot_len - 1),
                            heldout=split is not None, exclude=(q_scene,), grid=grid)  # fmt: skip
    # a position-matched control: another held-out scene doing a uniformly random action
    ca = int(rng.integers(len(ACTIONS)))
    ns = int(rng.integers(1, 3))
    control = _random_shot(rng, split, ca, shot_len, size, speed, min(ns, shot_len - 1),
                           heldout=split is not None, exclude=(q_scene,), grid=grid)  # fmt: skip
    return Episode(setting, demo, query, contrast, n_prefix, action, demo_action, control)
