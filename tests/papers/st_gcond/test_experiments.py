"""The st_gcond experiments' shared protocol: arms at their tuned points, common random numbers."""

import dataclasses

import pytest

from iclr25.core.config import apply_overrides
from iclr25.core.context import RunContext
from iclr25.papers.st_gcond.experiments import cross_task, single_task
from iclr25.papers.st_gcond.method import CondenseConfig
from iclr25.papers.st_gcond.protocol import arm_config
from iclr25.papers.st_gcond.tune import TUNED


def test_an_arm_takes_its_tuned_point_and_an_ablation_st_gcond_s():
    base = CondenseConfig(steps=7)
    gcond = arm_config("gcond", base, tuned=True)
    assert gcond == dataclasses.replace(base, **TUNED["gcond"])
    no_mi = arm_config("st_gcond_no_mi", base, tuned=True)
    assert no_mi == dataclasses.replace(base, **TUNED["st_gcond"], beta=0.0)
    assert arm_config("st_gcond_no_meta", base, tuned=False) == dataclasses.replace(
        base, use_meta=False
    )
    assert arm_config("random", base, tuned=True) == base


@pytest.mark.parametrize("module", [single_task, cross_task])
def test_unknown_or_repeated_arms_are_refused(module):
    cfg = module.PRESETS["smoke"]
    for bad in [(), ("krr", "krr"), ("sgdd",)]:
        with pytest.raises(ValueError, match="methods"):
            apply_overrides(cfg, {"methods": bad})


def test_an_arm_s_numbers_do_not_depend_on_the_other_arms():
    smoke = cross_task.PRESETS["smoke"]
    alone = cross_task.run(apply_overrides(smoke, {"methods": ("krr_st",)}), RunContext(seed=3))
    every = cross_task.run(smoke, RunContext(seed=3))
    assert {k: v for k, v in every.items() if k.startswith("krr_st/") and "seconds" not in k} == {
        k: v for k, v in alone.items() if "seconds" not in k
    }
    assert set(every) >= {f"{a}/{m}" for a in smoke.methods for m in cross_task.TASKS}
