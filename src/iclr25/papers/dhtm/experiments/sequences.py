"""`dhtm.sequences` (headline): online next-symbol prediction of aliased sequences with a switch
of the generating process and a switch back (A -> B -> A); DHTM against LSTM, RWKV, CSCG and
Markov counts. The task, its config, presets and claims are in `iclr25.papers.dhtm.training`
(shared with `dhtm.sequences_stochastic`); here are the expected verdicts."""

from __future__ import annotations

from iclr25.core.experiment import Experiment
from iclr25.papers.dhtm import plots
from iclr25.papers.dhtm.training import (
    SEQ_METRICS,
    SEQ_PRESETS,
    SequenceConfig,
    run_sequences,
    sequence_claims,
)

_Q = "at quick scale (2 seeds, 100 episodes per phase) "
_T2 = "; with 2 seeds the 95% t interval of the difference includes 0"


def _quick(what: str) -> tuple[str, str]:
    return ("inconclusive", _Q + what + _T2)


_BACK_RNN = (
    "the recurrent baselines still hold much of phase A in their weights, so their surprise "
    "falls back within about one window (recovery 20-21 episodes on average; 20 is the earliest "
    "possible), while DHTM's A segments were punished away in phase B and must be regrown "
    "(about 30 episodes)"
)

CLAIMS = sequence_claims(
    {
        "recovery_vs_lstm": {
            "quick": _quick("DHTM recovers in 26-33 episodes, the tuned LSTM in 33-58"),
            "full": (
                "inconclusive",
                "the tuned LSTM (lr 0.00025, 20 online Adam steps per episode) recovers about "
                "as fast as DHTM (31.1 against 29.3 episodes on average; faster on 1 of 10 "
                "seeds, as fast on 4); the 95% t interval of the difference includes 0 (with "
                "the paper's lr and 5 online steps, an earlier tuning, it was reproduced at "
                "5 seeds)",
            ),
        },
        "area_vs_lstm": {
            "quick": _quick("DHTM's post-switch area is 7.4-7.7, the tuned LSTM's 8.3-18"),
            "full": "reproduced",
        },
        "recovery_back_vs_lstm": {
            "quick": _quick(
                "the tuned LSTM recovers from the switch back in 23-32 episodes, DHTM in 22-40"
            ),
            "full": ("contradicted", _BACK_RNN + ": the LSTM recovers sooner on 9 of 10 seeds"),
        },
        "area_back_vs_lstm": {
            "quick": _quick(
                "the areas after the switch back are close (DHTM 4.3-6.4, LSTM 4.6-5.5)"
            ),
            "full": (
                "inconclusive",
                _BACK_RNN + "; the areas are close (LSTM about 10.3, DHTM about 11.1, DHTM's "
                "larger on 6 of 10 seeds); the 95% t interval of the difference includes 0",
            ),
        },
        "sf_error_vs_lstm": {
            "quick": _quick("DHTM's SF error is 0.04-0.11, the LSTM's 0.28-0.31"),
            "full": "reproduced",
        },
        "recovery_vs_rwkv": {
            "quick": _quick("DHTM recovers in 26-33 episodes, the tuned RWKV in 30-33"),
            "full": "reproduced",
        },
        "area_vs_rwkv": {
            "quick": _quick(
                "DHTM's post-switch area (7.4-7.7) is close to the tuned RWKV's (6.4-9.1)"
            ),
            "full": "reproduced",
        },
        "recovery_back_vs_rwkv": {
            "quick": _quick(
                "the tuned RWKV recovers from the switch back in 21-34 episodes, DHTM in 22-40"
            ),
            "full": ("contradicted", _BACK_RNN + ": RWKV recovers sooner on every seed"),
        },
        "area_back_vs_rwkv": {
            "quick": _quick(
                "the areas after the switch back are close (DHTM 4.3-6.4, RWKV 3.6-5.7)"
            ),
            "full": "reproduced",
        },
        "sf_error_vs_rwkv": {
            "quick": _quick("DHTM's SF error is 0.04-0.11, RWKV's 0.35-0.37"),
            "full": "reproduced",
        },
        "recovery_vs_cscg": {"quick": "reproduced", "full": "reproduced"},
        "area_vs_cscg": {
            "quick": _quick(
                "DHTM's post-switch area (7.4-7.7) is below CSCG's (23-30) on both seeds"
            ),
            "full": "reproduced",
        },
        "recovery_back_vs_cscg": {
            "quick": _quick(
                "CSCG recovers from the switch back in 54 episodes on one seed and is censored "
                "at 100 on the other (DHTM: 22-40)"
            ),
            "full": "reproduced",
        },
        "area_back_vs_cscg": {"quick": "reproduced", "full": "reproduced"},
        "sf_error_vs_cscg": {"quick": "reproduced", "full": "reproduced"},
    }
)

EXPERIMENT = Experiment(
    name="dhtm.sequences",
    summary="Online prediction of aliased sequences (8 symbols, context 4 back) with a "
    "switch of the process: DHTM against LSTM, RWKV, CSCG and Markov counts, surprise "
    "relative to the exact oracle, recovery after the switch, successor-feature error.",
    config=SequenceConfig,
    presets=SEQ_PRESETS,
    run=run_sequences,
    claims=CLAIMS,
    metrics=SEQ_METRICS,
    seeds={"smoke": 1, "quick": 2, "full": 10},
    figures=plots.sequence_figures,
)
