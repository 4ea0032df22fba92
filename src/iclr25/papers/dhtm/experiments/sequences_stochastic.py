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
    SequenceConfig,
    run_sequences,
    sequence_claims,
    variant_presets,
)

PRESETS = variant_presets("stochastic_transitions")

_WHY = (
    "DHTM gives a redrawn (unexpected) symbol almost no probability (about 4.4 nats of excess "
    "surprise at such steps, CSCG about 2.5, LSTM below the oracle) and, with least-used "
    "bursting, loses its context for the rest of the episode (about 1.6 nats at the later "
    "steps, CSCG 0.5); on the other steps it is as good as CSCG and RWKV"
)
_QUICK = "at quick scale (2 seeds, 100 episodes per phase) "
# quick areas per seed of the baselines (after the switch, after the switch back)
_QUICK_AREA = {"LSTM": ("31", "21-25"), "RWKV": ("21-25", "16-25"), "CSCG": ("20-21", "11-15")}


def _quick(b: str, metric: str) -> tuple[str, str] | str:
    """Quick expectation of `metric`_vs_`b` as measured (2 seeds)."""
    if metric in ("area", "area_back"):
        back = metric == "area_back"
        return (
            "inconclusive",
            _QUICK + _WHY + f", so its area {('after the switch', 'after the switch back')[back]} "
            f"({('38-46', '24-46')[back]}) is above {b}'s ({_QUICK_AREA[b][back]}) on both "
            "seeds; with 2 seeds the 95% t interval of the difference still includes 0",
        )
    if metric == "sf_error":
        if b != "RWKV":
            return "reproduced"
        return (
            "inconclusive",
            _QUICK + "DHTM's successor features at the end of phase B are closer to the exact "
            "ones than RWKV's on both seeds (L1 0.31-0.34 against 0.62-0.70), but with 2 seeds "
            "the 95% t interval of the difference includes 0",
        )
    return (
        "inconclusive",
        _QUICK + "the 95% t interval of the difference includes 0 (recovery times censored "
        "at 100 episodes on most seeds)",
    )


_WHY_FULL = (
    "at a redraw DHTM's excess surprise is about 2.8 nats (LSTM 0.04, RWKV 0.6, CSCG 1.1: with "
    "no active segment for a rare transition it predicts zero for it), at the later steps of such "
    "an episode 1.55 (CSCG 0.3: least-used bursting starts a fresh chain of cells), and on the "
    "other steps 0.09 (LSTM 0.14, CSCG 0.05)"
)
# full-preset means over the 10 seeds (after the switch, after the switch back)
_FULL_AREA = {"LSTM": (41, 30), "RWKV": (32, 19), "CSCG": (44, 43)}
_FULL_RECOVERY = {"LSTM": (61, 33), "RWKV": (58, 25), "CSCG": (108, 95)}


def _full(b: str, metric: str) -> tuple[str, str] | str:
    """Full expectation of `metric`_vs_`b` as measured (10 seeds)."""
    back = metric.endswith("_back")
    if metric.startswith("area"):
        theirs = _FULL_AREA[b][back]
        return (
            "contradicted",
            f"DHTM's area is about {(101, 105)[back]} against {b}'s {theirs}: " + _WHY_FULL,
        )
    if metric == "recovery_back" and b == "CSCG":
        return "reproduced"
    if metric.startswith("recovery"):
        theirs = _FULL_RECOVERY[b][back]
        ours = (94, 62)[back]
        if b == "CSCG":
            return (
                "inconclusive",
                f"DHTM recovers in about {ours} episodes, CSCG in {theirs}; both vary widely "
                "across seeds (47-174 and 43-300 after the switch), and the 95% t interval of "
                "the difference includes 0",
            )
        return (
            "contradicted",
            f"DHTM recovers in about {ours} episodes, {b} in {theirs}: " + _WHY_FULL,
        )
    if b == "RWKV":
        return (
            "inconclusive",
            "DHTM's SF error at the end of phase B (about 0.40) is below RWKV's (0.47) on "
            "average, but the 95% t interval of the difference includes 0",
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
    seeds={"smoke": 1, "quick": 2, "full": 10},
    figures=functools.partial(plots.sequence_figures, name="dhtm.sequences_stochastic"),
)
