"""`dhtm.sequences_noisy`: the sequence task of `dhtm.sequences` with noisy emissions (each
symbol replaced by a uniformly drawn one with probability 0.1; the oracle stays exact), our
harder stochastic variant beside `dhtm.sequences_stochastic` (stochastic transitions). Same
models, metrics and claims (`iclr25.papers.dhtm.training`); its own presets and expected
verdicts."""

from __future__ import annotations

import functools

from iclr25.core.experiment import Experiment
from iclr25.papers.dhtm import plots
from iclr25.papers.dhtm.training import (
    SEQ_METRICS,
    SEQ_QUICK_SCALE,
    SEQ_SEEDS,
    SequenceConfig,
    run_sequences,
    sequence_claims,
    variant_presets,
)

PRESETS = variant_presets("noisy_emissions")

_NOT_LEARNED = (
    "with noisy emissions DHTM does not learn the aliased contexts at our settings (excess "
    "surprise about 1.0 nats per step before the switch, at the level of first-order Markov "
    "counts; about 650 segments against 35 on the deterministic task; 2.8 nats of excess at the "
    "steps after a replaced symbol, {B} {after}), while {B} averages the noise out"
)
_AFTER = {"LSTM": "0.3", "RWKV": "0.8", "CSCG": "1.1"}


def _not_learned(b: str) -> str:
    return _NOT_LEARNED.format(B=b, after=_AFTER[b])


# quick areas per seed (after the switch, after the switch back); DHTM: 30-39 and 31-40
_QUICK_AREA = {"LSTM": ("28-38", "17-26"), "RWKV": ("19-33", "14-22"), "CSCG": ("16-23", "14-18")}


def _area(b: str, when: str) -> dict[str, tuple[str, str]]:
    back = when.endswith("back")
    quick = (
        SEQ_QUICK_SCALE
        + "with noisy emissions DHTM does not learn the aliased contexts well (excess "
        f"surprise 0.6-1.0 nats per step before the switch) and its area {when} "
        f"({('30-39', '31-40')[back]}) is above {b}'s ({_QUICK_AREA[b][back]}) on every seed"
    )
    full = _not_learned(b) + f", so its area {when} is far above {b}'s"
    if (b, back) == ("LSTM", False):
        return {
            "quick": (
                "inconclusive",
                quick + ", by 0.9-2.3; the 95% t interval of the difference includes 0",
            ),
            "full": ("contradicted", full),
        }
    return {"quick": ("contradicted", quick), "full": ("contradicted", full)}


_CENSORED = (
    "inconclusive",
    SEQ_QUICK_SCALE
    + "under noisy emissions no model recovers within 45 episodes (every recovery time is "
    "censored at 45, a zero difference on every seed)",
)


def _recovery_full(b: str) -> tuple[str, str]:
    return (
        "contradicted",
        _not_learned(b) + "; DHTM's recovery is censored at 300 episodes on 6 of 10 seeds after "
        f"the switch and on all 10 after the switch back, {b} recovers on every seed",
    )


def _sf_full(b: str) -> tuple[str, str]:
    return ("contradicted", _not_learned(b) + f": its SF error is above {b}'s")


CLAIMS = sequence_claims(
    {
        **{f"area_vs_{b}": _area(b.upper(), "after the switch") for b in ("lstm", "rwkv", "cscg")},
        **{
            f"area_back_vs_{b}": _area(b.upper(), "after the switch back")
            for b in ("lstm", "rwkv", "cscg")
        },
        **{
            f"{c}_vs_{b}": {"quick": _CENSORED, "full": _recovery_full(b.upper())}
            for c in ("recovery", "recovery_back")
            for b in ("lstm", "rwkv")
        },
        "recovery_vs_cscg": {
            "quick": _CENSORED,
            "full": (
                "inconclusive",
                "DHTM recovers after the switch on 4 of 10 seeds (79-203 episodes; censored at "
                "300 on 6), CSCG on 8 (116-272; censored on 2): about 232 and 215 episodes on "
                "average; the 95% t interval of the difference includes 0",
            ),
        },
        "recovery_back_vs_cscg": {
            "quick": _CENSORED,
            "full": (
                "contradicted",
                _not_learned("CSCG") + "; DHTM's recovery is censored at 300 episodes after the "
                "switch back on every seed, CSCG recovers on 7 of 10 (82-211 episodes)",
            ),
        },
        **{
            f"sf_error_vs_{b}": {"quick": "reproduced", "full": _sf_full(b.upper())}
            for b in ("lstm", "rwkv", "cscg")
        },
    }
)

EXPERIMENT = Experiment(
    name="dhtm.sequences_noisy",
    summary="The sequence task with noisy emissions (each symbol replaced by a uniform one "
    "with probability 0.1; exact oracle): the same models, metrics and claims.",
    config=SequenceConfig,
    presets=PRESETS,
    run=run_sequences,
    claims=CLAIMS,
    metrics=SEQ_METRICS,
    seeds=SEQ_SEEDS,
    figures=functools.partial(plots.sequence_figures, name="dhtm.sequences_noisy"),
)
