"""`dhtm.sequences_stochastic`: the sequence task of `dhtm.sequences` with stochastic
transitions (before each of the symbols 2-5 the episode's sequence is redrawn with probability
0.1; the oracle stays exact), the notes' stochastic generator. Same models, metrics and claims
(`iclr25.papers.dhtm.training`); its own presets and expected verdicts. Noisy emissions, our
harder variant, are `dhtm.sequences_noisy`."""

from __future__ import annotations

import functools

from iclr25.core.experiment import Experiment
from iclr25.papers.dhtm import plots
from iclr25.papers.dhtm.training import (
    SEQ_CLAIM_ROWS,
    SEQ_METRICS,
    SEQ_QUICK_SCALE,
    SEQ_SEEDS,
    SequenceConfig,
    run_sequences,
    sequence_claims,
    variant_presets,
)

PRESETS = variant_presets("stochastic_transitions")

_WHY = (
    "DHTM gives a redrawn (unexpected) symbol little probability (-0.1 to 3.8 nats of excess "
    "surprise at such steps over seeds, 2.1 on average, in the few redraws of the second half "
    "of phase A; CSCG -0.8 to 0.9, LSTM and RWKV below the oracle) and, with least-used "
    "bursting, loses its context for the rest of the episode (1.8-2.1 nats at the later steps, "
    "CSCG 0.5-1.0)"
)
_CI = "; the 95% t interval of the difference includes 0"
# quick areas per seed (after the switch, after the switch back); DHTM: 21-31 and 19-23
_QUICK_AREA = {"LSTM": ("28-35", "16-20"), "RWKV": ("15-25", "10-11"), "CSCG": ("12-15", "9-11")}
_QUICK_CONTRADICTED = {("area", "CSCG"), ("area_back", "RWKV"), ("area_back", "CSCG")}
# quick: the one seed on which a baseline recovers after the switch back (episodes)
_QUICK_BACK_RECOVERED = {"RWKV": 29, "CSCG": 31}


def _quick(b: str, metric: str) -> tuple[str, str] | str:
    """Quick expectation of `metric`_vs_`b` as measured (3 seeds)."""
    if metric in ("area", "area_back"):
        back = metric == "area_back"
        areas = f"({('21-31', '19-23')[back]} against {b}'s {_QUICK_AREA[b][back]})"
        if (metric, b) in _QUICK_CONTRADICTED:
            return (
                "contradicted",
                SEQ_QUICK_SCALE + _WHY + f", so its area is above {b}'s {areas}",
            )
        return ("inconclusive", SEQ_QUICK_SCALE + f"DHTM's area {areas} is close to {b}'s" + _CI)
    if metric == "sf_error":
        return "reproduced"
    theirs = f"{b}'s"
    if metric == "recovery_back" and b in _QUICK_BACK_RECOVERED:
        theirs += f" on two seeds ({_QUICK_BACK_RECOVERED[b]} on the third)"
    return (
        "inconclusive",
        SEQ_QUICK_SCALE
        + "DHTM's recovery is censored at 45 episodes on every seed, and so is "
        + theirs
        + _CI,
    )


_WHY_FULL = (
    "at a redraw DHTM's excess surprise is about 2.8 nats (LSTM 0.14, RWKV 0.76, CSCG 0.80: with "
    "no active segment for a rare transition it predicts zero for it), at the later steps of such "
    "an episode 1.55 (LSTM 0.68, RWKV 0.44, CSCG 0.39: least-used bursting starts a fresh chain "
    "of cells), and on the other steps 0.09 (LSTM 0.17, RWKV 0.09, CSCG 0.04)"
)
# full-preset means over the 10 seeds (after the switch, after the switch back)
_FULL_AREA = {"LSTM": (50, 40), "RWKV": (37, 26), "CSCG": (38, 39)}
_FULL_RECOVERY = {"LSTM": (64, 37), "RWKV": (49, 29), "CSCG": (80, 79)}
# the spread over seeds of DHTM's and CSCG's recovery (after the switch, after the switch back)
_FULL_SPREAD = (("47-174", "43-132"), ("20-116", "26-124"))


def _full(b: str, metric: str) -> tuple[str, str] | str:
    """Full expectation of `metric`_vs_`b` as measured (10 seeds)."""
    back = metric.endswith("_back")
    if metric.startswith("area"):
        theirs = _FULL_AREA[b][back]
        return (
            "contradicted",
            f"DHTM's area is about {(101, 105)[back]} against {b}'s {theirs}: " + _WHY_FULL,
        )
    if metric.startswith("recovery"):
        theirs = _FULL_RECOVERY[b][back]
        ours = (94, 62)[back]
        if b == "CSCG":
            return (
                "inconclusive",
                f"DHTM recovers in about {ours} episodes, CSCG in {theirs}, sooner on "
                f"{(4, 5)[back]} of 10 seeds and later on {(4, 5)[back]}; both vary widely "
                f"across seeds ({' and '.join(_FULL_SPREAD[back])} episodes), and the 95% t "
                "interval of the difference includes 0",
            )
        if (b, back) == ("LSTM", False):
            return (
                "inconclusive",
                "DHTM recovers in about 94 episodes, the tuned LSTM (lr 0.000125) in 64, sooner "
                "on 8 of 10 seeds, but both vary widely (47-174 and 29-95), and the 95% t "
                "interval of the difference includes 0",
            )
        return (
            "contradicted",
            f"DHTM recovers in about {ours} episodes, {b} in {theirs}: " + _WHY_FULL,
        )
    return "reproduced"


CLAIMS = sequence_claims(
    {
        f"{row[0]}_vs_{b}": {"quick": _quick(b.upper(), row[0]), "full": _full(b.upper(), row[0])}
        for row in SEQ_CLAIM_ROWS
        for b in ("lstm", "rwkv", "cscg")
    }
)

EXPERIMENT = Experiment(
    name="dhtm.sequences_stochastic",
    summary="The sequence task with stochastic transitions (the sequence redrawn with "
    "probability 0.1 before each symbol; exact oracle): the same models, metrics and claims.",
    config=SequenceConfig,
    presets=PRESETS,
    run=run_sequences,
    claims=CLAIMS,
    metrics=SEQ_METRICS,
    seeds=SEQ_SEEDS,
    figures=functools.partial(plots.sequence_figures, name="dhtm.sequences_stochastic"),
)
