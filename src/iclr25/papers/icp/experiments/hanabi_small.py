"""`icp.hanabi_small`: Small Hanabi score against environment steps for VDN, ICP-RM and ICP-DM at
equal environment steps (3 players, 2 colours x 5 ranks, hand size 2; hints are the scouting
actions)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Literal

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.icp import plots
from iclr25.papers.icp.hanabi import SCORING, HanabiSpec
from iclr25.papers.icp.hanabi_agents import evaluate_hanabi, train_hanabi
from iclr25.papers.icp.training import TUNED, TeamTraining, compare

# DEVIATION: Hanabi hyperparameters are ours (the paper's were not available), the same for
# every method: GRU width 64, Adam, 64 games per update, on-policy (no replay), 300k
# environment steps per method at full, 4 messages. The step size, discount and target sync
# are each method's own, tuned under the HLE's rules (`icp.tuning`, `TUNED`).
TRAINING = TeamTraining(
    **TUNED["icp.hanabi_small"],
    steps=300000,
    batch=64,
    hidden=64,
    eval_points=6,
)
"""The full preset's training group."""


@configclass
class HanabiConfig:
    """Small Hanabi: every method trained for the same number of environment steps."""

    num_players: Annotated[int, Range(2, None)] = 3
    """N, players."""
    colours: Annotated[int, Range(1, None)] = 2
    """C, colours."""
    ranks: Annotated[int, Range(2, None)] = 5
    """R, ranks (per colour three 1s, two of each middle rank, one R)."""
    hand_size: Annotated[int, Range(1, None)] = 2
    """H, cards per hand (num_players * hand_size below the deck size)."""
    hint_tokens: Annotated[int, Range(1, None)] = 3
    """Hint tokens (maximum and start)."""
    lives: Annotated[int, Range(1, None)] = 1
    """Lives (a misplay costs one; the game ends at 0)."""
    scoring: Literal["official", "keep_score"] = "official"
    """The rule the training reward follows: "official" (the Hanabi Learning Environment's: the
    score drops to 0 when the last life is lost, so that turn's reward takes back every point)
    or "keep_score" (a documented variant: the fireworks' sum is kept). The evaluation records
    both (`*/score` official, `*/score_keep`) from the same games whatever this is."""
    hint_rule: Literal["official", "any"] = "official"
    """Hint legality: "official" (the HLE's: a hint must touch a card of the target) or "any"
    (a documented variant: a hint that touches no card is legal too)."""
    draw_rule: Literal["official", "same_slot"] = "official"
    """Where a drawn card goes: "official" (the HLE's: the later cards shift left and the new
    card is appended) or "same_slot" (a documented variant: it takes the freed slot)."""
    num_messages: int = 4
    """M, messages (mapped injectively onto M of the 2(N-1) channels "hint the colour / rank of
    the target's first card": 2..2(N-1))."""
    eps_frac: Annotated[float, Range(0, 1, low_open=True)] = 0.5
    """Fraction of the steps over which ε anneals from 1 to 0.05."""
    train: TeamTraining = TRAINING
    """Training of every method (steps = environment steps: turns of live games)."""

    def __post_init__(self) -> None:
        check(
            self.scoring in SCORING,
            "scoring",
            self.scoring,
            "one of " + ", ".join(map(repr, SCORING)),
        )
        deck = 2 * self.colours * self.ranks  # three 1s, two of each middle rank, one R
        check(
            self.num_players * self.hand_size < deck,
            "hand_size",
            self.hand_size,
            f"num_players * hand_size below the deck size {deck}",
        )
        channels = 2 * (self.num_players - 1)
        check(
            2 <= self.num_messages <= channels,
            "num_messages",
            self.num_messages,
            f"in 2..{channels} (the message channels; φ is injective)",
        )

    def spec(self) -> HanabiSpec:
        """The game sizes."""
        return HanabiSpec(
            self.num_players,
            self.colours,
            self.ranks,
            self.hand_size,
            self.hint_tokens,
            self.lives,
            self.scoring,
            self.hint_rule,
            self.draw_rule,
        )


PRESETS = {
    "smoke": HanabiConfig(
        train=replace(TRAINING, steps=400, batch=8, hidden=16, eval_points=1, eval_games=16)
    ),
    "quick": HanabiConfig(train=replace(TRAINING, steps=20000, eval_points=2, eval_games=300)),
    "full": HanabiConfig(),
}

CLAIMS = (
    Claim(
        id="dm_beats_vdn",
        statement="At equal environment steps ICP-DM's greedy Small Hanabi score exceeds VDN's "
        "by at least 0.5 points (of 10).",
        metric="score",
        treatment="icp_dm",
        control="vdn",
        direction="higher",
        min_effect=0.5,
        paper_value="full Hanabi (5 colours, 2 players): ICP 24.91/25 vs 23.81 for the best "
        "learning baseline; no Small Hanabi number",
        comparable=False,
        expect={
            "quick": (
                "inconclusive",
                "under the HLE's rules (a lost last life scores 0, a hint must touch a card, "
                "drawn cards go last), with the tuned settings, after 20k environment steps per "
                "method every team plays a little and loses its life in about half to two "
                "thirds of the greedy games: ICP-DM 0.33 of 10 (0.50, 0.25, 0.24 per seed), "
                "VDN 0.28 (0.34, 0.20, 0.29), ICP-RM 0.18; 3 seeds, the difference's interval "
                "includes 0.",
            ),
            "full": (
                "reproduced",
                "Under the HLE's rules (a lost last life scores 0, a hint must touch a card, "
                "drawn cards go last), each method with its own tuned step size, discount and "
                "target sync (tuning seeds 100-101, 22 points per method): ICP-DM 2.77 of 10 "
                "(2.00-3.31 per seed), VDN 1.52 (1.14-1.71), ICP-RM 1.39 (1.24-1.66); ICP-DM "
                "minus VDN 1.25, 95% t interval [0.45, 2.06] (5 seeds). ICP-DM loses its life "
                "in 4.5% of the greedy games, VDN in 19%. Curves over the last 50k of 300k "
                "steps: ICP-DM -0.07 [-0.25, 0.11], VDN +0.16 [-0.02, 0.35] (no gain beyond "
                "seed noise, though VDN's mean still rises). Untuned (every method at Adam "
                "1e-3, discount 0.9, no target network) the same rules gave ICP-DM 0.74 and "
                "VDN 0.96 (inconclusive).",
            ),
        },
    ),
)

METRICS = (
    Metric(
        "*/score",
        "higher",
        "greedy play: mean final score under the official (HLE) rule: the sum of the fireworks "
        "(max C*R), 0 for a game that lost its last life; the claim uses this",
    ),
    Metric(
        "*/score_keep",
        "higher",
        "greedy play, the same games: mean final score under the keep-score variant (the sum of "
        "the fireworks even when the last life is lost)",
    ),
    Metric("*/score_auc", "higher", "mean greedy official score over the learning-curve points"),
    Metric("*/bombed", "lower", "greedy play: fraction of games that lost their last life"),
    Metric("*/hint_rate", "none", "greedy play: fraction of turns spent hinting or sending"),
    Metric("*/turns", "none", "greedy play: mean game length in turns"),
)


def run(cfg: HanabiConfig, ctx: RunContext) -> dict[str, float]:
    """Train every method for cfg.train.steps environment steps; greedy score along the way and
    at the end (the same evaluation games for every method)."""
    return compare(
        cfg.train,
        cfg.num_messages,
        ctx,
        cfg.spec(),
        train_hanabi,
        evaluate_hanabi,
        "score",
        eps_frac=cfg.eps_frac,
    )


EXPERIMENT = Experiment(
    name="icp.hanabi_small",
    summary="Small Hanabi (3 players, 2 colours x 5 ranks, hand size 2, 3 hint tokens, 1 life; "
    "hints are the scouting actions): greedy score of VDN, ICP-RM and ICP-DM at equal "
    "environment steps.",
    config=HanabiConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    figures=plots.hanabi_figures,
)
