"""The experiments outside their verdicts (those are asserted by tests/contract from the claims'
`expect`): the speed preset's memory-cap point and figures, and the configs' bounds."""

import math

import pytest

from iclr25.core.config import ConfigError, apply_overrides
from iclr25.core.testing import run_preset
from iclr25.papers.flashmask import plots
from iclr25.papers.flashmask.experiments.exactness import PRESETS as EXACTNESS_PRESETS
from iclr25.papers.flashmask.experiments.speed import PRESETS as SPEED_PRESETS
from iclr25.papers.flashmask.experiments.speed import SpeedConfig


def test_speed_smoke_skips_dense_past_the_cap_and_draws_its_figures(tmp_path_factory, tmp_path):
    rep = run_preset(tmp_path_factory, "flashmask.speed", "smoke")
    (result,) = rep.results
    m, cfg = result.metrics, SPEED_PRESETS["smoke"]
    cap = f"causal_document_n{cfg.cap_n}"
    assert m["dense/mask_mb_at_cap"] == cfg.cap_n**2 / 2**20 > cfg.cap_mb
    assert f"dense/ms_{cap}" not in m and f"flashmask/ms_{cap}" in m  # dense not built
    assert m["flashmask/peak_mb_at_cap"] == m[f"flashmask/peak_mb_{cap}"] > 0
    assert math.isfinite(m["flashmask_vs_dense/speedup_at_claim"])
    paths = plots.speed_figures(rep.results, tmp_path)
    assert [p.name for p in paths] == [
        "flashmask-speed-time.png",
        "flashmask-speed-memory.png",
        "flashmask-speed-active_tiles.png",
    ]
    assert all(p.stat().st_size > 1000 for p in paths)


@pytest.mark.parametrize(
    ("preset", "override", "needle"),
    [
        (SPEED_PRESETS["quick"], "cap_mb=nan", "cap_mb"),
        (SPEED_PRESETS["quick"], "cap_mb=inf", "cap_mb"),
        (SPEED_PRESETS["quick"], "cap_mb=0", "cap_mb"),
        (SPEED_PRESETS["quick"], "ns=(1024, 8)", r"ns\[1\]"),
        (SPEED_PRESETS["quick"], "ns=()", "ns"),
        (SPEED_PRESETS["quick"], "reps=0", "reps"),
        (SPEED_PRESETS["quick"], "window=-1", "window"),
        (SPEED_PRESETS["quick"], "kinds=('causal', 'nope')", "kinds"),
        (SPEED_PRESETS["quick"], "cap_n=1024", "cap_n"),
        (EXACTNESS_PRESETS["quick"], "n=8", "n"),
        (EXACTNESS_PRESETS["quick"], "block_m=0", "block_m"),
        (EXACTNESS_PRESETS["quick"], "memory_ns=(1024,)", "memory_ns"),
        (EXACTNESS_PRESETS["quick"], "memory_ns=(1024, 0)", r"memory_ns\[1\]"),
    ],
)
def test_configs_reject_bad_values(preset, override, needle):
    with pytest.raises(ConfigError, match=needle):
        apply_overrides(preset, [override])


def test_speed_config_rejects_non_finite_values_from_the_library():
    with pytest.raises(ConfigError, match="cap_mb=nan"):
        SpeedConfig(cap_mb=float("nan"))
