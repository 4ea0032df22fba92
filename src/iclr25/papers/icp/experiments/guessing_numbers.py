"""`icp.guessing_numbers`: success rate against training episodes for VDN-on-policy,
VDN-off-policy, DIAL with an explicit channel (the "cheating" bound), ICP-RM and ICP-DM at equal
episodes, on our re-designed turn-based Guessing Numbers (N=3 agents, K=4 values, 2 signalling
turns: without hat coding at most 2 of the 3 secrets can be passed on)."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.icp import plots
from iclr25.papers.icp.baselines import train_dial, train_vdn
from iclr25.papers.icp.env import GuessingNumbersSpec
from iclr25.papers.icp.method import TrainSettings, evaluate, train_icp_dm, train_icp_rm

METHODS = ("vdn_on", "vdn_off", "dial", "icp_rm", "icp_dm")
"""Method keys: VDN on-/off-policy, DIAL with an explicit channel, ICP-RM, ICP-DM."""


@configclass
class GuessingConfig:
    """Guessing Numbers: every method trained for the same number of episodes."""

    num_agents: Annotated[int, Range(2, None)] = 3
    """N, agents (each sees every secret but its own)."""
    num_values: Annotated[int, Range(2, None)] = 4
    """K, values of a secret (also the message alphabet M)."""
    num_signals: int = 4
    """S, scouting actions (>= K: φ maps K messages injectively)."""
    signal_turns: Annotated[int, Range(1, None)] = 2
    """T, signalling turns before everyone guesses."""
    methods: tuple[str, ...] = METHODS
    """Methods to train (subset of vdn_on, vdn_off, dial, icp_rm, icp_dm)."""
    episodes: int = 30000
    """Training episodes per method (the equal-steps budget; ICP-DM's two stages share it;
    >= 2 * batch)."""
    batch: Annotated[int, Range(1, None)] = 32
    """Games per update."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 3e-3
    """Adam step size (every method)."""
    gamma: Annotated[float, Range(0, 1)] = 0.99
    """Discount."""
    hidden: Annotated[int, Range(1, None)] = 64
    """GRU width."""
    eps_frac: Annotated[float, Range(0, 1, low_open=True)] = 0.5
    """Fraction of the run over which ε anneals from 1 to 0.05."""
    gumbel_scale: Annotated[float, Range(0, None)] = 1.0
    """Scale of the Gumbel noise on message samples during training."""
    stage1_frac: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.5
    """ICP-DM: fraction of the episodes spent in stage 1 (explicit channel)."""
    replay: int = 5000
    """VDN-off-policy replay capacity, in episodes (>= batch)."""
    eval_points: Annotated[int, Range(1, None)] = 8
    """Greedy evaluations along training (the learning curve)."""
    eval_games: Annotated[int, Range(1, None)] = 2000
    """Games per greedy evaluation."""

    def __post_init__(self) -> None:
        check(
            self.num_signals >= self.num_values,
            "num_signals",
            self.num_signals,
            f">= num_values={self.num_values} (φ maps K messages injectively)",
        )
        check(
            len(self.methods) >= 1 and set(self.methods) <= set(METHODS),
            "methods",
            self.methods,
            f"a non-empty subset of {METHODS}",
        )
        check(
            self.episodes >= 2 * self.batch,
            "episodes",
            self.episodes,
            f">= 2 * batch = {2 * self.batch}",
        )
        check(self.replay >= self.batch, "replay", self.replay, f">= batch = {self.batch}")


# DEVIATION: our hyperparameters (the paper's were not available): GRU width 64, Adam 3e-3,
# batch 32 (quick: 16), 30k episodes per method at full as the notes suggest (they suggest
# batches of 256 vectorised games; we take more, smaller updates), the same for every method.
PRESETS = {
    "smoke": GuessingConfig(
        episodes=64, batch=32, hidden=16, eval_points=1, eval_games=32, replay=64
    ),
    "quick": GuessingConfig(episodes=10000, batch=16, eval_points=4, eval_games=1000),
    "full": GuessingConfig(),
}

CLAIMS = (
    Claim(
        id="dm_beats_vdn",
        statement="At equal episodes ICP-DM's success rate exceeds the better of the two VDN "
        "variants by at least 0.2.",
        metric="success",
        treatment="icp_dm",
        control="vdn_best",
        direction="higher",
        min_effect=0.2,
        paper_value="Guessing Numbers curves: ICP-DIAL-DM well above VDN on/off-policy "
        "(no number in our notes)",
        expect={
            "quick": (
                "inconclusive",
                "At quick (10k episodes, batch 16) ICP-DM leads VDN by 0.49 on average over 3 "
                "seeds, but one seed's ICP-DM has not learned its protocol yet, and with 3 seeds "
                "the 95% t interval of the difference, [-0.16, 1.13], includes 0 (measured on "
                "an idle machine in session 5; the old bootstrap called it reproduced).",
            ),
            "full": "reproduced",
        },
    ),
    Claim(
        id="rm_beats_vdn",
        statement="At equal episodes ICP-RM's success rate exceeds the better of the two VDN "
        "variants by at least 0.2.",
        metric="success",
        treatment="icp_rm",
        control="vdn_best",
        direction="higher",
        min_effect=0.2,
        paper_value="Guessing Numbers curves: ICP-DIAL-RM above VDN (no number in our notes)",
        expect={
            "quick": (
                "inconclusive",
                "ICP-RM stays close to VDN after 10k episodes (0.32 against 0.26 success), far "
                "below the 0.2 margin: one broadcast per signalling turn must serve two "
                "receivers, which needs the hat code, and a random fixed map does not find it.",
            ),
            "full": (
                "inconclusive",
                "ICP-RM is only slightly above VDN (0.41 against 0.29 success over 10 seeds): the "
                "direction holds but the mean effect, 0.12, is below the 0.2 margin. One "
                "broadcast per signalling turn must serve two receivers, which needs the hat "
                "code; DIAL through a random fixed map did not find it, nor reliably a "
                "one-receiver code, within 30k episodes.",
            ),
        },
    ),
    Claim(
        id="dm_near_explicit_bound",
        statement="ICP-DM's success rate is within 0.1 of DIAL with an explicit channel "
        "(the cheating upper bound): dial success - icp_dm success < 0.1.",
        metric="gap_to_explicit",
        treatment="icp_dm",
        control=0.1,
        direction="lower",
        paper_value="ICP-DM close to the explicit-communication upper bound (curves)",
        expect={
            "quick": (
                "inconclusive",
                "After 10k episodes ICP-DM is 0.21 below the explicit channel on average over 3 "
                "seeds; with 3 seeds the 95% t interval of the difference, [-0.67, 0.26], "
                "crosses the margin (measured in session 5; the old bootstrap called it "
                "reproduced only because DIAL itself was far from its bound at quick).",
            ),
            "full": (
                "inconclusive",
                "The gap to the explicit channel is 0.16 on average over 10 seeds with a wide "
                "spread (-0.43 in a seed where DIAL itself stalled at 0.49, up to +0.50), so the "
                "95% t interval of gap - 0.1 is [-0.19, 0.31]. In 8 of 10 seeds ICP-DM's stage-1 "
                "lookup table (15k episodes) still maps two values to one message "
                "(icp_dm/table_injective), and the protocol frozen into the delayed map loses "
                "information (success about 0.5).",
            ),
        },
    ),
)

METRICS = (
    Metric("*/success", "higher", "greedy play: fraction of agents that guess their secret"),
    Metric("*/all_correct", "higher", "greedy play: fraction of games where every agent is right"),
    Metric("*/reward", "higher", "greedy play: team return (correct - wrong early guesses) / N"),
    Metric("*/send_rate", "none", "greedy play: scouting actions per signalling turn"),
    Metric("*/success_auc", "higher", "mean greedy success over the learning-curve points"),
    Metric("*/gap_to_explicit", "lower", "DIAL (explicit channel) success minus this method's"),
    Metric(
        "icp_dm/table_injective",
        "higher",
        "fraction of the used (sender, receiver) rows of ICP-DM's lookup table that are "
        "injective (no two values share a message)",
    ),
)


def run(cfg: GuessingConfig, ctx: RunContext) -> dict[str, float]:
    """Train every method for cfg.episodes episodes; greedy success along the way and at the end."""
    spec = GuessingNumbersSpec(cfg.num_agents, cfg.num_values, cfg.num_signals, cfg.signal_turns)
    updates = cfg.episodes // cfg.batch
    settings = TrainSettings(
        episodes=cfg.episodes,
        batch=cfg.batch,
        lr=cfg.lr,
        gamma=cfg.gamma,
        eps_frac=cfg.eps_frac,
        gumbel_scale=cfg.gumbel_scale,
        eval_every=max(1, updates // cfg.eval_points),
        eval_games=cfg.eval_games,
    )
    metrics: dict[str, float] = {}
    eval_seed = ctx.rngs.child("eval").int_seed()  # the same evaluation games for every method
    for method in ctx.progress(cfg.methods, desc="methods"):
        rngs = ctx.rngs.child(method)
        rng, gen = rngs.child("train").np, rngs.child("gumbel").torch()
        curve: list[float] = []

        def log(episode: int, m: dict[str, float], method=method, curve=curve) -> None:
            curve.append(m["success"])
            ctx.log(episode, **{f"{method}/success": m["success"]})

        with torch_seed(rngs.child("init").int_seed()):
            if method in ("vdn_on", "vdn_off"):
                agent = train_vdn(
                    spec,
                    settings,
                    rng,
                    gen,
                    on_policy=method == "vdn_on",
                    hidden=cfg.hidden,
                    replay=cfg.replay,
                    log=log,
                )
            elif method == "dial":
                agent = train_dial(spec, settings, rng, gen, hidden=cfg.hidden, log=log)
            elif method == "icp_rm":
                agent = train_icp_rm(spec, settings, rng, gen, hidden=cfg.hidden, log=log)
            else:
                agent = train_icp_dm(
                    spec,
                    settings,
                    rng,
                    gen,
                    hidden=cfg.hidden,
                    stage1_frac=cfg.stage1_frac,
                    log=log,
                )
        final = evaluate(agent, cfg.eval_games, np.random.default_rng(eval_seed))
        for k, v in final.items():
            metrics[f"{method}/{k}"] = v
        metrics[f"{method}/success_auc"] = float(np.mean(curve)) if curve else final["success"]
        if method == "icp_dm":
            # rows of the lookup table that are used: senders that act on a signalling turn,
            # receivers other than the sender; a row mapping two values to one message loses
            # information for that receiver
            senders = sorted({spec.active(t) for t in range(spec.signal_turns)})
            rows = [agent.table[s, j] for s in senders for j in range(spec.num_agents) if j != s]
            injective = [len(set(r.tolist())) == cfg.num_values for r in rows]
            metrics["icp_dm/table_injective"] = float(np.mean(injective))
    vdn = [metrics[f"{m}/success"] for m in ("vdn_on", "vdn_off") if f"{m}/success" in metrics]
    if vdn:
        metrics["vdn_best/success"] = max(vdn)
    if "dial/success" in metrics:
        for m in ("icp_rm", "icp_dm"):
            if f"{m}/success" in metrics:
                metrics[f"{m}/gap_to_explicit"] = metrics["dial/success"] - metrics[f"{m}/success"]
    return metrics


EXPERIMENT = Experiment(
    name="icp.guessing_numbers",
    summary="Re-designed Guessing Numbers (3 agents, 4 values, 2 signalling turns): greedy "
    "success of VDN on/off-policy, explicit-channel DIAL, ICP-RM and ICP-DM at equal episodes.",
    config=GuessingConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.guessing_figures,
)
