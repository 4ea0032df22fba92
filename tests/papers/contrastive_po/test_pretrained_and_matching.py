"""Pretrained starting models (shipped checkpoints, seeded pretraining, the CLI), the bias
preference pairs and the matched-typographic-accuracy rule (`paint_path`, `clean_at_typo`)."""

import hashlib
import math
import re

import numpy as np
import pytest
import torch

from iclr25.papers.contrastive_po import pretrained
from iclr25.papers.contrastive_po.baselines import clean_at_typo, paint_path
from iclr25.papers.contrastive_po.data import GROUPS, bias_pairs
from iclr25.papers.contrastive_po.model import TinyCLIP
from iclr25.papers.contrastive_po.pretrained import (
    CHECKPOINTS,
    PretrainRecipe,
    load_checkpoint,
    pretrain_tinyclip,
    starting_model,
)
from iclr25.papers.contrastive_po.training import evaluate

TINY = PretrainRecipe(n_images=32, steps=2, batch_size=8, width=2)


@pytest.fixture
def tiny_recipes(monkeypatch):
    """Both recipes replaced by a two-step pretraining on 32 images with a width-2 model."""
    recipes = {"typographic": TINY, "bias": PretrainRecipe(**{**vars(TINY), "group_bias": 0.9})}
    monkeypatch.setattr(pretrained, "RECIPES", recipes)
    return recipes


def _states_equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# --- shipped checkpoints -------------------------------------------------------------------


@pytest.mark.parametrize("recipe", ["typographic", "bias"])
def test_load_checkpoint_matches_asset_file_and_sha(recipe):
    name, sha = CHECKPOINTS[recipe]
    path = pretrained.ASSETS / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    model = load_checkpoint(recipe)
    assert isinstance(model, TinyCLIP)
    assert not model.training
    assert all(not m.training for m in model.modules())
    state = torch.load(path, weights_only=True)
    assert _states_equal(model.state_dict(), state)


def test_load_checkpoint_rejects_damaged_file(monkeypatch, tmp_path):
    name, sha = CHECKPOINTS["typographic"]
    data = bytearray((pretrained.ASSETS / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / name).write_bytes(bytes(data))
    bad_sha = hashlib.sha256(bytes(data)).hexdigest()
    monkeypatch.setattr(pretrained, "ASSETS", tmp_path)
    with pytest.raises(ValueError, match=sha) as info:
        load_checkpoint("typographic")
    assert bad_sha in str(info.value)


def test_load_checkpoint_unknown_recipe():
    with pytest.raises(ValueError, match="recipe='clip' is not allowed") as info:
        load_checkpoint("clip")
    assert "'typographic'" in str(info.value) and "'bias'" in str(info.value)


# --- seeded pretraining --------------------------------------------------------------------


def test_pretrain_tinyclip_deterministic_and_keeps_global_rng(tiny_recipes):
    torch.manual_seed(1234)
    before = torch.get_rng_state()
    a, log_a = pretrain_tinyclip("typographic", 3)
    after = torch.get_rng_state()
    assert torch.equal(before, after)
    b, log_b = pretrain_tinyclip("typographic", 3)
    c, _ = pretrain_tinyclip("typographic", 4)
    assert isinstance(a, TinyCLIP) and not a.training
    assert a.image_proj.in_features == 4 * TINY.width
    assert len(log_a.losses) == TINY.steps
    assert log_a == log_b
    assert _states_equal(a.state_dict(), b.state_dict())
    assert not _states_equal(a.state_dict(), c.state_dict())


def test_starting_model_fresh_is_pretrain_tinyclip(tiny_recipes):
    model, loss = starting_model("fresh", "typographic", 5)
    assert isinstance(model, TinyCLIP)
    assert math.isfinite(loss)
    expected, log = pretrain_tinyclip("typographic", 5)
    assert loss == pytest.approx(float(np.mean(log.losses)))
    assert _states_equal(model.state_dict(), expected.state_dict())


def test_starting_model_shipped_and_errors():
    shipped, nan = starting_model("shipped", "typographic", 0)
    assert math.isnan(nan)
    assert _states_equal(shipped.state_dict(), load_checkpoint("typographic").state_dict())
    with pytest.raises(ValueError, match="pretrained='openai' is not allowed"):
        starting_model("openai", "typographic", 0)


def test_main_writes_checkpoint_and_prints_its_sha(tiny_recipes, tmp_path, capsys):
    out = tmp_path / "ckpt.pt"
    pretrained.main(["--recipe", "typographic", "--seed", "2", "--out", str(out)])
    printed = capsys.readouterr().out
    found = re.findall(r"sha256 ([0-9a-f]{64})", printed)
    assert found == [hashlib.sha256(out.read_bytes()).hexdigest()]
    model, _ = pretrain_tinyclip("typographic", 2)
    assert _states_equal(torch.load(out, weights_only=True), model.state_dict())


# --- bias preference pairs -----------------------------------------------------------------


def test_bias_pairs_shapes_parity_groups_and_determinism():
    p = bias_pairs(10, np.random.default_rng(7), classes=(0, 1, 2, 3), size=32)
    assert len(p) == 10
    assert p.clean.shape == p.typo.shape == (10, 32, 32, 3)
    assert p.clean.dtype == p.typo.dtype == np.uint8
    assert p.labels.shape == p.written.shape == p.groups.shape == (10,)
    assert p.classes == (0, 1, 2, 3)
    assert set(p.labels.tolist()) <= {0, 1, 2, 3}
    assert set(p.written.tolist()) <= {0, 1, 2, 3}
    assert np.all(p.written % 2 != p.labels % 2)
    conflicting = np.where(p.labels % 2 == 0, GROUPS.index("waves"), GROUPS.index("dots"))
    assert np.array_equal(p.groups, conflicting)
    # Aligned and conflicting backgrounds differ, so every pair differs.
    assert all(not np.array_equal(c, t) for c, t in zip(p.clean, p.typo, strict=True))

    q = bias_pairs(10, np.random.default_rng(7), classes=(0, 1, 2, 3), size=32)
    for field in ("clean", "typo", "labels", "written", "groups"):
        assert np.array_equal(getattr(p, field), getattr(q, field))


@pytest.mark.parametrize("classes", [(0, 2), (1, 3, 5)])
def test_bias_pairs_needs_both_parities(classes):
    with pytest.raises(ValueError, match="needs even and odd classes"):
        bias_pairs(4, np.random.default_rng(0), classes=classes, size=32)


# --- matched typographic accuracy ----------------------------------------------------------

PATH = [(0.0, 0.9, 0.2), (0.5, 0.8, 0.4), (1.0, 0.6, 0.8)]


def test_clean_at_typo_first_point_already_above():
    assert clean_at_typo(PATH, 0.1) == 0.9
    assert clean_at_typo(PATH, 0.2) == 0.9


def test_clean_at_typo_interpolates_first_crossing():
    # Between (0.8, 0.4) and (0.6, 0.8): w = (0.6 - 0.4) / 0.4 = 0.5 -> 0.8 - 0.5 * 0.2 = 0.7.
    assert clean_at_typo(PATH, 0.6) == pytest.approx(0.7)
    # Between (0.9, 0.2) and (0.8, 0.4): w = 0.5 -> 0.85.
    assert clean_at_typo(PATH, 0.3) == pytest.approx(0.85)
    assert clean_at_typo(PATH, 0.4) == pytest.approx(0.8)
    assert clean_at_typo(PATH, 0.8) == pytest.approx(0.6)
    # The first crossing counts even when the path later falls below the level again.
    dip = [(0.0, 1.0, 0.0), (0.5, 0.5, 1.0), (1.0, 0.0, 0.0)]
    assert clean_at_typo(dip, 0.25) == pytest.approx(0.875)


def test_clean_at_typo_never_reached_is_nan():
    assert math.isnan(clean_at_typo(PATH, 0.9))
    assert math.isnan(clean_at_typo([(0.0, 0.5, 0.1)], 0.2))


@pytest.mark.parametrize("level", [-0.1, 1.5, float("nan")])
def test_clean_at_typo_level_out_of_range(level):
    with pytest.raises(ValueError, match="level"):
        clean_at_typo(PATH, level)


def test_clean_at_typo_empty_path():
    with pytest.raises(ValueError, match="empty"):
        clean_at_typo([], 0.5)


def test_paint_path_of_model_with_itself(tiny_model, tiny_pairs):
    rows = paint_path(tiny_model, tiny_model, tiny_pairs, [1.0, 0.0, 0.5])
    assert [r[0] for r in rows] == [0.0, 0.5, 1.0]
    acc = evaluate(tiny_model, tiny_pairs)
    for _, clean, typo in rows:
        assert clean == acc["clean"]
        assert typo == acc["typo"]
