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


def _quick_close(base: str, what: str) -> tuple[str, str]:
    return (
        "inconclusive",
        f"at quick scale (3 seeds, 100 episodes per phase) the tuned {base} (5 online Adam "
        f"steps per episode) {what}; the 95% t interval of the difference includes 0",
    )


_BACK_RNN_FULL = (
    "inconclusive",
    "the recurrent baselines still hold much of phase A in their weights, so their surprise "
    "falls back within about one window (about 21-22 episodes; 20 is the earliest possible), while "
    "DHTM's A segments were punished away in phase B and must be regrown (about 27); the areas "
    "are about equal; the 95% t interval of the difference includes 0",
)

CLAIMS = sequence_claims(
    {
        "recovery_vs_lstm": {
            "quick": _quick_close("LSTM", "recovers about as fast as DHTM (faster on two seeds)"),
            "full": "reproduced",
        },
        "area_vs_lstm": {
            "quick": _quick_close("LSTM", "has a post-switch area close to DHTM's"),
            "full": (
                "inconclusive",
                "DHTM's area is lower on average (about 21 against 35) but one seed (3) is hard "
                "for DHTM after the switch (area 53); with 5 seeds the 95% t interval of the "
                "difference includes 0 (the old percentile bootstrap interval did not: "
                "reproduced)",
            ),
        },
        "recovery_back_vs_lstm": {
            "quick": _quick_close("LSTM", "recovers from the switch back about as fast as DHTM"),
            "full": _BACK_RNN_FULL,
        },
        "area_back_vs_lstm": {
            "quick": (
                "inconclusive",
                "at quick scale after the switch back to A the tuned LSTM's excess surprise is "
                "below DHTM's on every seed (it still holds part of phase A in its weights, "
                "while DHTM's punished A segments have died and are regrown); with 3 seeds the "
                "95% t interval of the difference ([-1.7, 6.2]) includes 0 (the old percentile "
                "bootstrap interval did not: contradicted)",
            ),
            "full": _BACK_RNN_FULL,
        },
        "sf_error_vs_lstm": {"quick": "reproduced", "full": "reproduced"},
        "recovery_vs_rwkv": {
            "quick": _quick_close("RWKV", "recovers as fast as DHTM on some seeds"),
            "full": "reproduced",
        },
        "area_vs_rwkv": {
            "quick": (
                "inconclusive",
                "at quick scale DHTM's post-switch area is below RWKV's on every seed, but by "
                "little on two of them; with 3 seeds the 95% t interval of the difference "
                "([-13.3, 7.1]) includes 0 (the old percentile bootstrap interval did not: "
                "reproduced)",
            ),
            "full": "reproduced",
        },
        "recovery_back_vs_rwkv": {
            "quick": _quick_close("RWKV", "recovers from the switch back about as fast as DHTM"),
            "full": (
                "inconclusive",
                "RWKV recovers from the switch back faster on average (about 21 episodes "
                "against DHTM's 27: its weights still hold phase A, DHTM regrows its punished A "
                "segments); with 5 seeds the 95% t interval of the difference includes 0 (the "
                "old percentile bootstrap interval did not: contradicted)",
            ),
        },
        "area_back_vs_rwkv": {
            "quick": _quick_close("RWKV", "has an area after the switch back close to DHTM's"),
            "full": _BACK_RNN_FULL,
        },
        "sf_error_vs_rwkv": {"quick": "reproduced", "full": "reproduced"},
        "recovery_vs_cscg": {
            "quick": (
                "inconclusive",
                "at quick scale DHTM recovers sooner than CSCG on every seed (22-33 episodes "
                "against 42-100), but CSCG's times vary widely; with 3 seeds the 95% t interval "
                "of the difference ([-110, 35]) includes 0 (the old percentile bootstrap "
                "interval did not: reproduced)",
            ),
            "full": "reproduced",
        },
        "area_vs_cscg": {
            "quick": (
                "inconclusive",
                "at quick scale DHTM's post-switch area is below CSCG's on every seed (about 8 "
                "against 19-38); with 3 seeds the 95% t interval of the difference "
                "([-44.6, 2.1]) includes 0 (the old percentile bootstrap interval did not: "
                "reproduced)",
            ),
            "full": "reproduced",
        },
        "recovery_back_vs_cscg": {
            "quick": (
                "inconclusive",
                "at quick scale (3 seeds) CSCG, refit every 25 episodes, recovers from the "
                "switch back at the earliest possible episode (one window) on every seed; the "
                "95% t interval of the difference includes 0",
            ),
            "full": "reproduced",
        },
        "area_back_vs_cscg": {
            "quick": (
                "inconclusive",
                "at quick scale (3 seeds) the areas after the switch back are close and vary "
                "across seeds; the 95% t interval of the difference includes 0",
            ),
            "full": "reproduced",
        },
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
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.sequence_figures,
)
