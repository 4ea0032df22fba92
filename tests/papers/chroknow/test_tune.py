"""The training grid's choice rule: the most Known on average over the tuning seeds, ties to
the lower mean loss; the seeds are disjoint from the claim seeds."""

import json
from pathlib import Path

import pytest

from iclr25.core.config import ConfigError, apply_overrides
from iclr25.papers.chroknow.experiments.elicitation import PRESETS
from iclr25.papers.chroknow.training import FORMATS
from iclr25.papers.chroknow.tune import LRS, TUNE_SEEDS, TUNED, chosen

RESULT = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "chroknow_tuning.json"


def test_chosen_maximises_mean_known_then_lowest_loss():
    rows = [
        {"format": "structured", "lr": 1e-3, "known": 0.5, "loss": 0.2},
        {"format": "structured", "lr": 1e-3, "known": 0.7, "loss": 0.2},
        {"format": "structured", "lr": 3e-3, "known": 0.6, "loss": 0.1},
        {"format": "structured", "lr": 3e-3, "known": 0.6, "loss": 0.3},  # tie at 0.6: loss 0.2
        {"format": "structured", "lr": 6e-3, "known": 0.6, "loss": 0.1},
        {"format": "structured", "lr": 6e-3, "known": 0.6, "loss": 0.2},  # 0.6, loss 0.15: wins
        {"format": "prose", "lr": 1e-3, "known": 0.0, "loss": 0.5},
        {"format": "prose", "lr": 3e-3, "known": 0.0, "loss": 0.4},
    ]
    assert chosen(rows) == {"structured": 6e-3, "prose": 3e-3}
    assert not set(TUNE_SEEDS) & set(range(10))


def test_committed_choice_is_the_files_and_interior():
    data = json.loads(RESULT.read_text())
    assert data["chosen"] == TUNED and set(TUNED) == set(FORMATS)
    assert list(data["grid"]) == list(LRS) and list(data["seeds"]) == list(TUNE_SEEDS)
    assert len(data["rows"]) == len(LRS) * len(TUNE_SEEDS) * len(FORMATS)
    for fmt, lr in TUNED.items():
        assert LRS[0] < lr < LRS[-1], f"{fmt}: {lr} on the grid's edge"
        assert getattr(PRESETS["full"], f"lr_{fmt}") == lr


def test_elicitation_refuses_unknown_or_no_formats():
    for bad in ("formats=('structured','xml')", "formats=()"):
        with pytest.raises(ConfigError, match="formats"):
            apply_overrides(PRESETS["quick"], [bad])
