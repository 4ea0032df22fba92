"""Procedurally drawn icons with captions and typographic attacks (Pillow, offline, seeded).

The paper fine-tunes OpenAI CLIP on typographic ImageNet-100; no CLIP weights exist offline, so
the whole pipeline is rebuilt at laptop scale on drawn icons:

- 16 icon classes (`CLASSES`), drawn with Pillow primitives at a random position, scale,
  rotation-free jitter and colour (`COLOURS`) on a noisy background.
- A *typographic* image is an icon with a class word written over it in Pillow's built-in
  default font (`ImageFont.load_default`, no font files). The attack writes a word that is not
  the icon's class; `render_icon(..., word=...)` also writes the icon's own word, which is how
  pretraining teaches the model to read.
- Two domains (`DOMAINS`): "solid" (filled icons on grey noise, the training domain) and
  "outline" (outlined icons on a striped background, another font size: the shifted domain,
  the analogue of the paper's transfer datasets).
- Two background groups (`GROUPS`: "dots", "waves") for the synthetic bias analogue of the
  paper's gender experiment: `pretraining_set(..., group_bias=p)` ties each class to one group
  with probability p, spuriously.

Images are uint8 arrays of shape (N, S, S, 3); `to_tensor` gives float (N, 3, S, S) in [0, 1].
Everything draws from a `numpy.random.Generator` passed in; the same generator state gives the
same pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from iclr25.core.checks import check_choice, check_float, check_int

CLASSES: tuple[str, ...] = (
    "ball",
    "box",
    "cone",
    "star",
    "cross",
    "heart",
    "gem",
    "moon",
    "arrow",
    "ring",
    "house",
    "tree",
    "bell",
    "key",
    "cup",
    "fish",
)
"""Icon class names; each is also the word written on typographic images."""

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (50, 80, 220),
    "yellow": (230, 200, 30),
    "purple": (150, 60, 190),
    "orange": (240, 130, 20),
}
"""Icon colours (named in captions)."""

DOMAINS: tuple[str, ...] = ("solid", "outline")
"""Icon styles: "solid" (training domain) and "outline" (the shifted domain)."""

GROUPS: tuple[str, ...] = ("none", "dots", "waves")
"""Background patterns; "dots" and "waves" are the two groups of the bias analogue."""

TRAIN_CLASSES: tuple[int, ...] = tuple(range(8))
"""Class ids fine-tuned on (the analogue of ImageNet-100)."""

HELDOUT_CLASSES: tuple[int, ...] = tuple(range(8, 16))
"""Class ids never fine-tuned on (the analogue of the zero-shot transfer sets)."""

_TEMPLATE_WORDS = ("a", "photo", "of", "the", "word", "sign", "icon")
VOCAB: tuple[str, ...] = ("<pad>", *_TEMPLATE_WORDS, *COLOURS, *CLASSES)
"""The caption vocabulary; index 0 pads."""

_WORD_ID = {w: i for i, w in enumerate(VOCAB)}
MAX_TOKENS = 6
"""Captions are padded (or refused beyond) this many words."""


def tokenize(captions: list[str] | tuple[str, ...]) -> np.ndarray:
    """Word ids of captions, padded with 0.

    Shapes:
        returns (len(captions), MAX_TOKENS) int64.

    Raises:
        ValueError: a word outside `VOCAB` or a caption longer than `MAX_TOKENS` words.
    """
    out = np.zeros((len(captions), MAX_TOKENS), dtype=np.int64)
    for i, cap in enumerate(captions):
        words = cap.split()
        if not words or len(words) > MAX_TOKENS:
            raise ValueError(f"caption {cap!r} is not allowed: must have 1 to {MAX_TOKENS} words")
        for j, w in enumerate(words):
            if w not in _WORD_ID or w == "<pad>":
                raise ValueError(f"caption {cap!r} has the word {w!r}, not in VOCAB")
            out[i, j] = _WORD_ID[w]
    return out


def class_prompt(c: int) -> str:
    """The prompt of class `c` in the policy view, "a photo of a {class}" (as the paper)."""
    return f"a photo of a {CLASSES[c]}"


def all_captions() -> tuple[str, ...]:
    """Every caption `pretraining_set` writes and every class prompt (`class_prompt`), in a
    fixed order: the finite text side of this world (the frozen MiniLM tower embeds each once).
    """
    caps = [class_prompt(c) for c in range(len(CLASSES))]
    for name in CLASSES:
        caps += [f"the word {name}", f"a {name} sign"]
        for colour in COLOURS:
            caps += [f"a {colour} {name}", f"a {colour} {name} icon"]
    return tuple(caps)


def _check_class(name: str, c) -> int:
    return check_int(name, c, 0, len(CLASSES) - 1)


@lru_cache(maxsize=8)
def _font(size: int):
    return ImageFont.load_default(size=size)


def _shape_points(c: int, cx: float, cy: float, r: float) -> list[tuple[str, object]]:
    """Drawing primitives of class `c` centred at (cx, cy) with radius r: (kind, geometry)."""
    name = CLASSES[c]
    box = (cx - r, cy - r, cx + r, cy + r)
    if name == "ball":
        return [("ellipse", box)]
    if name == "box":
        return [("rect", (cx - 0.8 * r, cy - 0.8 * r, cx + 0.8 * r, cy + 0.8 * r))]
    if name == "cone":
        return [("poly", [(cx, cy - r), (cx + 0.7 * r, cy + r), (cx - 0.7 * r, cy + r)])]
    if name == "star":
        pts = []
        for k in range(10):
            a = -np.pi / 2 + k * np.pi / 5
            rr = r if k % 2 == 0 else 0.42 * r
            pts.append((cx + rr * np.cos(a), cy + rr * np.sin(a)))
        return [("poly", pts)]
    if name == "cross":
        w = 0.3 * r
        return [
            ("rect", (cx - w, cy - r, cx + w, cy + r)),
            ("rect", (cx - r, cy - w, cx + r, cy + w)),
        ]
    if name == "heart":
        h = 0.5 * r
        return [
            ("ellipse", (cx - r, cy - r * 0.8, cx, cy - r * 0.8 + 2 * h)),
            ("ellipse", (cx, cy - r * 0.8, cx + r, cy - r * 0.8 + 2 * h)),
            ("poly", [(cx - r * 0.97, cy - r * 0.2), (cx + r * 0.97, cy - r * 0.2), (cx, cy + r)]),
        ]
    if name == "gem":
        return [("poly", [(cx, cy - r), (cx + 0.7 * r, cy), (cx, cy + r), (cx - 0.7 * r, cy)])]
    if name == "moon":
        return [("moon", (box, (cx - 0.3 * r, cy - 1.05 * r, cx + 1.4 * r, cy + 0.85 * r)))]
    if name == "arrow":
        w = 0.22 * r
        return [
            ("rect", (cx - r, cy - w, cx + 0.2 * r, cy + w)),
            ("poly", [(cx + 0.1 * r, cy - 0.7 * r), (cx + r, cy), (cx + 0.1 * r, cy + 0.7 * r)]),
        ]
    if name == "ring":
        return [("ring", box)]
    if name == "house":
        return [
            ("rect", (cx - 0.7 * r, cy - 0.1 * r, cx + 0.7 * r, cy + r)),
            ("poly", [(cx - r, cy - 0.05 * r), (cx, cy - r), (cx + r, cy - 0.05 * r)]),
        ]
    if name == "tree":
        return [
            ("rect", (cx - 0.18 * r, cy + 0.3 * r, cx + 0.18 * r, cy + r)),
            ("poly", [(cx, cy - r), (cx + 0.75 * r, cy + 0.4 * r), (cx - 0.75 * r, cy + 0.4 * r)]),
        ]
    if name == "bell":
        return [
            ("pieslice", (cx - 0.7 * r, cy - r, cx + 0.7 * r, cy + 0.6 * r)),
            ("rect", (cx - r, cy - 0.2 * r, cx + r, cy + 0.55 * r)),
            ("ellipse", (cx - 0.2 * r, cy + 0.55 * r, cx + 0.2 * r, cy + r)),
        ]
    if name == "key":
        return [
            ("ring", (cx - r, cy - 0.45 * r, cx - 0.1 * r, cy + 0.45 * r)),
            ("rect", (cx - 0.15 * r, cy - 0.12 * r, cx + r, cy + 0.12 * r)),
            ("rect", (cx + 0.6 * r, cy, cx + 0.8 * r, cy + 0.45 * r)),
        ]
    if name == "cup":
        return [
            (
                "poly",
                [
                    (cx - 0.75 * r, cy - 0.7 * r),
                    (cx + 0.45 * r, cy - 0.7 * r),
                    (cx + 0.3 * r, cy + r),
                    (cx - 0.6 * r, cy + r),
                ],
            ),
            ("ring", (cx + 0.2 * r, cy - 0.45 * r, cx + r, cy + 0.35 * r)),
        ]
    # fish
    return [
        ("ellipse", (cx - r, cy - 0.5 * r, cx + 0.4 * r, cy + 0.5 * r)),
        ("poly", [(cx + 0.2 * r, cy), (cx + r, cy - 0.55 * r), (cx + r, cy + 0.55 * r)]),
    ]


def _draw_shape(draw: ImageDraw.ImageDraw, prims, colour, bg, outline: bool, width: int) -> None:
    fill = None if outline else colour
    line = colour
    for kind, g in prims:
        if kind == "ellipse":
            draw.ellipse(g, fill=fill, outline=line, width=width)
        elif kind == "rect":
            draw.rectangle(g, fill=fill, outline=line, width=width)
        elif kind == "poly":
            if outline:
                draw.line([*g, g[0]], fill=line, width=width)
            else:
                draw.polygon(g, fill=fill)
        elif kind == "pieslice":
            draw.pieslice(g, 180, 360, fill=fill, outline=line, width=width)
        elif kind == "ring":
            x0, _, x1, _ = g
            draw.ellipse(g, outline=line, width=max(width, int(0.18 * (x1 - x0)) + 1))
        elif kind == "moon":
            outer, cut = g
            draw.ellipse(outer, fill=fill, outline=line, width=width)
            draw.ellipse(cut, fill=bg, outline=line if outline else bg, width=width)


def _background(rng: np.random.Generator, size: int, domain: str, group: str) -> np.ndarray:
    base = rng.uniform(150, 235)
    img = np.full((size, size, 3), base, dtype=np.float64)
    img += rng.normal(0.0, 8.0, size=(size, size, 1))
    yy, xx = np.mgrid[0:size, 0:size]
    if domain == "outline":
        period = rng.uniform(5.0, 8.0)
        img -= 25.0 * (((xx + yy) % period) < period / 2)[..., None]
    if group == "dots":
        step = 6
        ph = rng.integers(0, step, size=2)
        mask = ((xx + ph[0]) % step < 2) & ((yy + ph[1]) % step < 2)
        img[mask] = (60.0, 60.0, 60.0)
    elif group == "waves":
        ph = rng.uniform(0, 2 * np.pi)
        mask = np.abs(np.sin(xx / 2.5 + ph) * 3.0 - ((yy % 8) - 4)) < 0.8
        img[mask] = (60.0, 60.0, 60.0)
    return np.clip(img, 0, 255)


def render_icon(
    c: int,
    rng: np.random.Generator,
    *,
    colour: str | None = None,
    word: int | None = None,
    text_only: bool = False,
    domain: str = "solid",
    group: str = "none",
    size: int = 40,
) -> np.ndarray:
    """One icon image of class `c`, optionally with the class word `word` written on it.

    Args:
        c: Class id in [0, 16).
        rng: Source of the jitter (position, scale, colour shade, noise, word placement).
        colour: A key of `COLOURS`, or None for a random one.
        word: Class id whose name is written on the image (None: no text). `word == c` is an
            image carrying its own class word; `word != c` is a typographic attack.
        text_only: Draw only the word, no icon (then `word` must be given).
        domain: "solid" or "outline" (`DOMAINS`).
        group: Background pattern, one of `GROUPS`.
        size: Image side in pixels (>= 32, so a five-letter word fits).

    Shapes:
        returns (size, size, 3) uint8.
    """
    _check_class("c", c)
    size = check_int("size", size, 32, 256)
    check_choice("domain", domain, DOMAINS)
    check_choice("group", group, GROUPS)
    if colour is None:
        colour = list(COLOURS)[int(rng.integers(len(COLOURS)))]
    check_choice("colour", colour, tuple(COLOURS))
    if word is not None:
        _check_class("word", word)
    if text_only and word is None:
        raise ValueError("text_only=True needs word=<class id>, got word=None")
    bg_arr = _background(rng, size, domain, group)
    img = Image.fromarray(bg_arr.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(img)
    shade = rng.uniform(0.8, 1.1)
    rgb = tuple(int(np.clip(v * shade, 0, 255)) for v in COLOURS[colour])
    bg_mean = tuple(int(v) for v in bg_arr.mean(axis=(0, 1)))
    if not text_only:
        r = size * rng.uniform(0.2, 0.3)
        cx = rng.uniform(r + 1, size - r - 1)
        cy = rng.uniform(r + 1, size - r - 1)
        width = max(2, round(size / 16))
        _draw_shape(draw, _shape_points(c, cx, cy, r), rgb, bg_mean, domain == "outline", width)
    if word is not None:
        font_size = round(size * (0.32 if domain == "solid" else 0.28))
        font = _font(font_size)
        text = CLASSES[word]
        x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=font)
        tw, th = x1 - x0, y1 - y0
        tx = rng.uniform(0, max(size - tw, 0) + 1e-9) - x0
        ty = rng.uniform(0, max(size - th, 0) + 1e-9) - y0
        ink = (255, 255, 255) if rng.random() < 0.5 else (0, 0, 0)
        halo = (0, 0, 0) if ink == (255, 255, 255) else (255, 255, 255)
        draw.text((tx, ty), text, font=font, fill=ink, stroke_width=1, stroke_fill=halo)
    return np.asarray(img, dtype=np.uint8)


def to_tensor(images: np.ndarray):
    """uint8 (N, S, S, 3) -> float32 torch tensor (N, 3, S, S) in [0, 1]."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 255.0


@dataclass(frozen=True)
class CaptionedImages:
    """Image-caption pairs for contrastive pretraining.

    Attributes:
        images: (N, S, S, 3) uint8.
        tokens: (N, MAX_TOKENS) int64 word ids (`tokenize`).
        labels: (N,) int64 class ids.
        kinds: (N,) int64: 0 plain icon, 1 icon with its own word, 2 text only.
        groups: (N,) int64 background group (index into `GROUPS`).
    """

    images: np.ndarray
    tokens: np.ndarray
    labels: np.ndarray
    kinds: np.ndarray
    groups: np.ndarray


def pretraining_set(
    n: int,
    rng: np.random.Generator,
    *,
    own_word: float = 0.5,
    text_only: float = 0.3,
    group_bias: float | None = None,
    outline: float = 0.15,
    size: int = 40,
) -> CaptionedImages:
    """`n` captioned images for pretraining; some carry their own class word so the model reads.

    Captions: "a {colour} {class}" or "a {colour} {class} icon" for icons, "the word {class}"
    or "a {class} sign" for text-only images.

    Args:
        n: Number of pairs.
        rng: Generator for every random choice.
        own_word: Fraction of images that are icons carrying their own class word.
        text_only: Fraction of images that are only a written word.
            # DEVIATION: the notes plan 40 % / 10 %; with those the pilot model was not fooled
            # by typographic images (2 % of attacks succeeded), so more reading data is used.
        group_bias: None: no background pattern. p in [0.5, 1]: every image gets the
            "dots" or "waves" background, the class's spurious group (even classes "dots",
            odd classes "waves") with probability p.
        outline: Fraction of icons drawn in the "outline" domain (rare in pretraining, as
            the transfer sets are for CLIP; with 0 the pilot recognised 22 % of them).
        size: Image side.

    Shapes:
        images (n, size, size, 3); tokens (n, MAX_TOKENS); labels, kinds, groups (n,).
    """
    n = check_int("n", n, 1)
    own_word = check_float("own_word", own_word, 0.0, 1.0)
    text_only = check_float("text_only", text_only, 0.0, 1.0)
    outline = check_float("outline", outline, 0.0, 1.0)
    if own_word + text_only > 1.0:
        raise ValueError(
            f"own_word + text_only = {own_word + text_only} is not allowed: must be <= 1"
        )
    if group_bias is not None:
        group_bias = check_float("group_bias", group_bias, 0.5, 1.0)
    images, caps, labels, kinds, groups = [], [], [], [], []
    colours = list(COLOURS)
    for _ in range(n):
        c = int(rng.integers(len(CLASSES)))
        u = rng.random()
        kind = 2 if u < text_only else (1 if u < text_only + own_word else 0)
        g = 0
        if group_bias is not None:
            spurious = 1 + (c % 2)
            g = spurious if rng.random() < group_bias else 3 - spurious
        colour = colours[int(rng.integers(len(colours)))]
        domain = "outline" if (kind != 2 and rng.random() < outline) else "solid"
        img = render_icon(
            c,
            rng,
            colour=colour,
            word=c if kind > 0 else None,
            text_only=kind == 2,
            domain=domain,
            group=GROUPS[g],
            size=size,
        )
        if kind == 2:
            # DEVIATION: text-only images are captioned "the word {c}" or "a {c} sign" (half
            # each), a stand-in for web captions that name what a written sign denotes; this
            # is what ties reading to the class concept (with "the word" alone the pilot
            # model read poorly and was not fooled).
            cap = f"the word {CLASSES[c]}" if rng.random() < 0.5 else f"a {CLASSES[c]} sign"
        elif rng.random() < 0.5:
            cap = f"a {colour} {CLASSES[c]}"
        else:
            cap = f"a {colour} {CLASSES[c]} icon"
        images.append(img)
        caps.append(cap)
        labels.append(c)
        kinds.append(kind)
        groups.append(g)
    return CaptionedImages(
        images=np.stack(images),
        tokens=tokenize(caps),
        labels=np.asarray(labels, dtype=np.int64),
        kinds=np.asarray(kinds, dtype=np.int64),
        groups=np.asarray(groups, dtype=np.int64),
    )


@dataclass(frozen=True)
class TypographicPairs:
    """Paired clean and typographic images of the same icons (the paper's D_reg and D_pref).

    Image i of `typo` is image i of `clean` with the word of class `written[i]` written on
    it, `written[i] != labels[i]`: the preference triple is (typo[i], labels[i] preferred,
    written[i] rejected).

    Attributes:
        clean: (N, S, S, 3) uint8 icons without text.
        typo: (N, S, S, 3) uint8 the same icons with the attack word.
        labels: (N,) int64 true classes.
        written: (N,) int64 written (attack) classes.
        classes: The candidate class ids (the label set of this split, sorted).
        groups: (N,) int64 background groups.
    """

    clean: np.ndarray
    typo: np.ndarray
    labels: np.ndarray
    written: np.ndarray
    classes: tuple[int, ...]
    groups: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def _stack_pairs(clean, typo, labels, written, classes, groups) -> TypographicPairs:
    """`TypographicPairs` from per-pair lists (images stacked, ids as int64 arrays)."""
    return TypographicPairs(
        clean=np.stack(clean),
        typo=np.stack(typo),
        labels=np.asarray(labels, dtype=np.int64),
        written=np.asarray(written, dtype=np.int64),
        classes=classes,
        groups=np.asarray(groups, dtype=np.int64),
    )


def typographic_pairs(
    n: int,
    rng: np.random.Generator,
    classes: tuple[int, ...] | list[int] = TRAIN_CLASSES,
    *,
    domain: str = "solid",
    group: str = "none",
    size: int = 40,
) -> TypographicPairs:
    """`n` (clean, typographic) pairs over `classes`, classes drawn uniformly.

    The attack word is a uniformly drawn class of `classes` other than the true one.
    # DEVIATION: the paper writes a random wrong ImageNet-100 class name; here the word is
    # drawn from the same candidate set the image is classified over (the attack is always a
    # candidate), for training and evaluation alike.

    The clean and typographic image share every random draw of the icon (same generator
    state), so they differ only by the text.

    Shapes:
        clean, typo (n, size, size, 3); labels, written, groups (n,).
    """
    n = check_int("n", n, 1)
    classes = tuple(sorted({_check_class("classes[i]", c) for c in classes}))
    if len(classes) < 2:
        raise ValueError(f"classes={classes!r} is not allowed: needs >= 2 distinct classes")
    check_choice("domain", domain, DOMAINS)
    check_choice("group", group, GROUPS)
    clean, typo, labels, written, groups = [], [], [], [], []
    colours = list(COLOURS)
    for _ in range(n):
        c = classes[int(rng.integers(len(classes)))]
        others = [k for k in classes if k != c]
        w = others[int(rng.integers(len(others)))]
        colour = colours[int(rng.integers(len(colours)))]
        seed = int(rng.integers(2**63))
        g = group
        clean.append(
            render_icon(
                c, np.random.default_rng(seed), colour=colour, domain=domain, group=g, size=size
            )
        )
        # Same seed: identical icon and background, then the word drawn on top.
        typo.append(
            render_icon(
                c,
                np.random.default_rng(seed),
                colour=colour,
                word=w,
                domain=domain,
                group=g,
                size=size,
            )
        )
        labels.append(c)
        written.append(w)
        groups.append(GROUPS.index(g))
    return _stack_pairs(clean, typo, labels, written, classes, groups)


def bias_pairs(
    n: int,
    rng: np.random.Generator,
    classes: tuple[int, ...] | list[int] = TRAIN_CLASSES,
    *,
    size: int = 40,
) -> TypographicPairs:
    """`n` preference pairs of the bias analogue, in the shape of `TypographicPairs`.

    With `pretraining_set(group_bias=p)` even classes are tied to the "dots" background and odd
    classes to "waves". Here `clean[i]` is an icon of class `labels[i]` on its class's
    *aligned* background (the regularisation half, D_reg) and `typo[i]` an icon of the same
    class, colour and draw seed on the *conflicting* background (the preference half);
    `written[i]` is a class of `classes` of the other parity, one the conflicting background
    points to: the triple (conflicting image, true class preferred, background's class
    rejected) is the analogue of the paper's debiasing preferences. `groups` holds the
    conflicting image's group.

    Shapes:
        clean, typo (n, size, size, 3); labels, written, groups (n,).
    """
    n = check_int("n", n, 1)
    classes = tuple(sorted({_check_class("classes[i]", c) for c in classes}))
    if not {c % 2 for c in classes} == {0, 1}:
        raise ValueError(f"classes={classes!r} is not allowed: needs even and odd classes")
    clean, conflicting, labels, written, groups = [], [], [], [], []
    colours = list(COLOURS)
    for _ in range(n):
        c = classes[int(rng.integers(len(classes)))]
        others = [k for k in classes if k % 2 != c % 2]
        w = others[int(rng.integers(len(others)))]
        colour = colours[int(rng.integers(len(colours)))]
        seed = int(rng.integers(2**63))
        aligned = "dots" if c % 2 == 0 else "waves"
        other = "waves" if aligned == "dots" else "dots"
        for out, g in ((clean, aligned), (conflicting, other)):
            out.append(
                render_icon(c, np.random.default_rng(seed), colour=colour, group=g, size=size)
            )
        labels.append(c)
        written.append(w)
        groups.append(GROUPS.index(other))
    return _stack_pairs(clean, conflicting, labels, written, classes, groups)


def reading_set(
    n: int,
    rng: np.random.Generator,
    classes: tuple[int, ...] | list[int] = TRAIN_CLASSES,
    *,
    size: int = 40,
) -> tuple[np.ndarray, np.ndarray]:
    """`n` text-only images (a class word, no icon) and their classes: the model's reading
    ability, a "retained knowledge" probe (the notes' text-only accuracy).

    Shapes:
        returns images (n, size, size, 3) uint8 and labels (n,) int64.
    """
    n = check_int("n", n, 1)
    classes = tuple(sorted({_check_class("classes[i]", c) for c in classes}))
    labels = np.asarray([classes[int(rng.integers(len(classes)))] for _ in range(n)])
    images = np.stack(
        [render_icon(int(c), rng, word=int(c), text_only=True, size=size) for c in labels]
    )
    return images, labels.astype(np.int64)
