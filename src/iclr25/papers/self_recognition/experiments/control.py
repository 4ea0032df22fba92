"""`self_recognition.control`: the causal tests of the self-recognition vector against
matched-norm random vectors.

Per seed: the vector of `self_recognition.vector` (individual paradigm, train split, correct
judgements or the stated fallback) at the steering block(s); then, on held-out own and human
prompts, the Yes-No margin under **output steering** (k v added at every position, section
5.1) and under **colouring** (k v added only at the judged text's tokens, section 5.2) for each
multiplier k, with the vector scaled to unit norm and k in units of the block's mean residual
norm; the same for matched-norm random vectors; **projection ablation** of the vector against
ablation of a random direction on own texts (section 4.2); and, in full, answers generated
under steering: their Yes-rate and their perplexity under the unsteered model.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.self_recognition import baselines as B
from iclr25.papers.self_recognition import method as M
from iclr25.papers.self_recognition.pipeline import JUDGES, prepare, read_split, residual_norms
from iclr25.papers.self_recognition.prompts import answer_margin


@configclass
class ControlConfig:
    """Data sizes, blocks, multipliers and controls."""

    judge: Literal["smollm2", "tiny"] = "smollm2"
    """The judging model ("tiny": a random 2-block Llama, for smoke runs only)."""
    n_train: Annotated[int, Range(2, None)] = 30
    """Problems whose own and human texts train the vector."""
    n_test: Annotated[int, Range(1, None)] = 6
    """Held-out problems: their own and human prompts are steered and coloured, their own
    prompts ablated."""
    n_tokens: Annotated[int, Range(4, None)] = 48
    """Common length of every judged text, in the judge's tokens."""
    steer_layers: tuple[int, ...] = (10, 15)
    """Blocks that are steered, coloured and ablated, one at a time (the tiny judge uses block
    0: colouring the last block cannot reach the answer position)."""
    fractions: tuple[float, ...] = (-0.5, -0.25, 0.0, 0.25, 0.5)
    """Multipliers in units of the block's mean residual norm at the decision position."""
    n_random: Annotated[int, Range(1, None)] = 2
    """Matched-norm random vectors per block (controls of steering, colouring, ablation)."""
    min_correct: Annotated[int, Range(1, None)] = 5
    """Fewest correct judgements per side for the correct-case vector (else the fallback)."""
    gen_tokens: Annotated[int, Range(0, None)] = 12
    """New tokens generated under output steering at the first steering block; 0: skip."""
    threads: Annotated[int, Range(0, None)] = 0
    """Torch threads of the judge (0: the hf backend's default)."""

    def __post_init__(self) -> None:
        check(self.judge in JUDGES, "judge", self.judge, f"one of {JUDGES}")
        check(len(self.steer_layers) > 0 and all(x >= 0 for x in self.steer_layers),
              "steer_layers", self.steer_layers, "non-empty block indices >= 0")  # fmt: skip
        check(len(set(self.fractions)) >= 2 and bool(np.all(np.isfinite(self.fractions))),
              "fractions", self.fractions, "at least two distinct finite multipliers")  # fmt: skip


# DEVIATION: multipliers in units of the block's mean residual norm (the raw mean difference
# is 4-5% of the residual norm at blocks 10 and 15 of SmolLM2, where raw multipliers of +-4
# moved the margin no more than a random vector did); blocks 10 and 15 of 30 (the paper:
# 14-16 of 32, 16 chosen); full: 30 train and 6 test problems per seed (about 770 forward
# passes: 430-560 s of one core a seed, 22 minutes for 5 seeds at 2 jobs); quick: block 15,
# 3 multipliers, 1 random vector, 4 train and 1 test problem per seed (each ~230-token prompt
# costs ~0.8 s of one core).
PRESETS = {
    "smoke": ControlConfig(judge="tiny", n_train=3, n_test=1, n_tokens=8, steer_layers=(0,),
                           fractions=(-1.0, 0.0, 1.0), n_random=1, min_correct=1, gen_tokens=2),
    "quick": ControlConfig(n_train=4, n_test=1, steer_layers=(15,), fractions=(-0.5, 0.0, 0.5),
                           n_random=1, gen_tokens=0),
    "full": ControlConfig(),
}  # fmt: skip

CLAIMS = (
    Claim(
        id="steering_beyond_random",
        statement="Output steering with the vector raises the Yes-No margin with the multiplier "
        "faster than matched-norm random vectors move it (slope against the mean |slope| of "
        "the random vectors).",
        metric="slope",
        treatment="steer",
        control="random_steer",
        direction="higher",
        paper_value="steering makes the model claim authorship (near 100 %) or deny it",
        expect={
            "quick": (
                "contradicted",
                "slope -1.25 / -0.51 / -2.88 against random |slope| 0.12 / 1.68 / 0.25 on seeds "
                "0-2 (through the runner, session 34): adding the own-minus-human direction "
                "at block 15 pushes SmolLM2 towards 'No', not 'Yes'",
            ),
            "full": (
                "contradicted",
                "slope -1.30 / -1.02 / -1.36 / -0.93 / -1.37 against random |slope| 2.20 / "
                "2.03 / 0.93 / 1.77 / 0.70 on seeds 0-4 (blocks 10 and 15, 2 random vectors, "
                "12 held-out prompts a seed; through the runner from a clean clone of 1a57ab4): "
                "the vector pushes SmolLM2 towards 'No', and random vectors of its norm move "
                "the margin more",
            ),
        },
    ),
    Claim(
        id="colouring_beyond_random",
        statement="Colouring the judged text with the vector raises the Yes-No margin with the "
        "multiplier faster than colouring with matched-norm random vectors moves it.",
        metric="slope",
        treatment="colour",
        control="random_colour",
        direction="higher",
        paper_value="colouring makes the model believe or disbelieve it wrote a text",
        expect={
            "quick": (
                "contradicted",
                "slope -0.14 / -0.13 / -0.17 against random |slope| 0.26 / 0.18 / 0.07 on "
                "seeds 0-2 (through the runner): colouring the text with the vector lowers "
                "the Yes-No margin a little, less than a random vector moves it",
            ),
            "full": (
                "contradicted",
                "slope -0.24 / -0.21 / -0.27 / -0.23 / -0.27 against random |slope| 0.07 / "
                "0.30 / 0.09 / 0.20 / 0.12 on seeds 0-4 (through the runner): colouring with the "
                "vector lowers the margin a little on every seed",
            ),
        },
    ),
    Claim(
        id="ablation_reduces_self_claims",
        statement="Projecting the vector out lowers the Yes-No margin on the model's own texts "
        "more than projecting out a random direction does.",
        metric="margin_own",
        treatment="ablate",
        control="random_ablate",
        direction="lower",
        paper_value="ablation cuts self-authorship claims by about 50-60 %",
        expect={
            "quick": (
                "reproduced",
                "ablated margin -1.00 / -1.37 / -1.08 against -0.89 / -1.12 / -0.84 with a "
                "random direction projected out, on seeds 0-2 (through the runner), one own "
                "prompt per seed: fragile; SmolLM2 answers 'No' to every text before and "
                "after, so no self-claim is removed, only the margin falls",
            ),
            "full": (
                "inconclusive",
                "ablated margin -1.06 / -1.11 / -0.84 / -1.24 / -0.88 against -1.15 / -0.93 / "
                "-1.44 / -1.22 / -0.87 with a random direction projected out (unablated -0.84 "
                "to -1.07), 6 own prompts a seed, seeds 0-4 (through the runner): projecting "
                "out either direction lowers the margin about as much; SmolLM2 answers 'No' to "
                "every own text before and after, so there is no self-claim to remove. The "
                "quick preset's 'reproduced' rests on one prompt a seed",
            ),
        },
    ),
)

METRICS = (
    Metric("vector/basis_correct", "none", "1 if built from correct judgements, 0: fallback"),
    Metric("steer/*", "higher", "output steering with the vector: slope (least squares of the "
           "mean margin on the multiplier), range (margin at the largest minus the smallest "
           "multiplier), monotone (share of rising steps); mean over the steering blocks"),
    Metric("random_steer/*", "none", "the same for matched-norm random vectors, slope and range "
           "as magnitudes (a random direction's sign is arbitrary), mean over vectors and blocks"),
    Metric("colour/*", "higher", "colouring (only the judged text's tokens) with the vector"),
    Metric("random_colour/*", "none", "colouring with matched-norm random vectors (magnitudes)"),
    Metric("none/margin_own", "none", "mean Yes-No margin on own test texts, no intervention"),
    Metric("ablate/margin_own", "lower", "the same with the vector projected out"),
    Metric("random_ablate/margin_own", "none", "the same with a random direction projected out"),
    Metric("*steer_gen/yes_rate_*", "none", "share of answers generated under output steering "
           "that start with 'Yes', at the smallest (bottom), zero and largest (top) multiplier "
           "(steer_gen: the vector; random_steer_gen: the first random vector)"),
    Metric("*steer_gen/nll_*", "none", "mean negative log-probability per token of those "
           "answers under the unsteered model (log-perplexity; 0 when every answer is empty)"),
)  # fmt: skip


def run(cfg: ControlConfig, ctx: RunContext) -> dict[str, float]:
    """One seed: the vector on a train split, the interventions on held-out prompts."""
    lm, probs = prepare(cfg.judge, ("own", "human"), cfg.n_train + cfg.n_test, cfg.n_tokens,
                        ctx.rngs.child("problems").np, threads=cfg.threads or None)  # fmt: skip
    for layer in cfg.steer_layers:
        check(layer < lm.num_layers, "steer_layers", cfg.steer_layers,
              f"block indices < {lm.num_layers} for this judge")  # fmt: skip
    train, test = probs[: cfg.n_train], probs[cfg.n_train :]
    layers = sorted(set(cfg.steer_layers))
    st, mg = read_split(lm, train, ("own", "human"), layers)
    sv = M.find_vectors(st["own"], st["human"], mg["own"], mg["human"], layers, cfg.min_correct)
    resid = dict(zip(layers, residual_norms(st["own"], st["human"]), strict=True))
    rand = B.random_like(sv.vectors, ctx.rngs.child("random").np, n=cfg.n_random)
    out = {"vector/basis_correct": float(sv.basis == "correct")}

    own_prompts = M.individual_prompts(test, "own")
    prompts = own_prompts + M.individual_prompts(test, "human")
    texts = [p.texts["own"] for p in test] + [p.texts["human"] for p in test]
    base = answer_margin(lm, prompts, "individual")
    doses: dict[str, list[dict[str, float]]] = {}
    ablated: dict[str, list[np.ndarray]] = {"ablate": [], "random_ablate": []}
    for i, layer in enumerate(layers):
        directions = {"": sv.vectors[i], **{f"random{r}": rand[r, i] for r in range(cfg.n_random)}}
        for name, vec in directions.items():
            unit = {layer: vec / np.linalg.norm(vec) * resid[layer]}
            nonzero = [k for k in cfg.fractions if k != 0]
            s = M.steered_margins(lm, prompts, "individual", unit, nonzero)
            c = M.coloured_margins(lm, prompts, texts, "individual", unit, nonzero)
            kind = "random_" if name else ""
            for mode, m in (("steer", s), ("colour", c)):
                full = np.stack([base if k == 0 else m[nonzero.index(k)] for k in cfg.fractions])
                d = M.dose_response(cfg.fractions, full)
                if kind:  # a random direction's sign is arbitrary: compare magnitudes
                    d = {k: abs(v) if k != "monotone" else v for k, v in d.items()}
                doses.setdefault(f"{kind}{mode}", []).append(d)
                ctx.log(layer, **{f"{kind}{mode}/slope{name and '_' + name}": d["slope"]})
        with M.project_out(lm, {layer: sv.vectors[i]}):
            ablated["ablate"].append(answer_margin(lm, own_prompts, "individual"))
        with M.project_out(lm, {layer: rand[0, i]}):
            ablated["random_ablate"].append(answer_margin(lm, own_prompts, "individual"))
    for key, ds in doses.items():
        for k in ds[0]:
            out[f"{key}/{k}"] = float(np.mean([d[k] for d in ds]))
    out["none/margin_own"] = float(base[: len(test)].mean())
    for key, ms in ablated.items():
        out[f"{key}/margin_own"] = float(np.mean(ms))

    if cfg.gen_tokens:  # steered answers: do they claim authorship, and are they coherent?
        layer = cfg.steer_layers[0]
        i = layers.index(layer)
        ks = [min(cfg.fractions), max(cfg.fractions), 0.0]
        for name, vec in (("steer_gen", sv.vectors[i]), ("random_steer_gen", rand[0, i])):
            unit = {layer: vec / np.linalg.norm(vec) * resid[layer]}
            if name == "steer_gen":
                answers, lp = M.steered_generations(lm, prompts, unit, ks, cfg.gen_tokens)
            else:  # at k = 0 nothing is added: the vector's unsteered answers are these too
                a, b = M.steered_generations(lm, prompts, unit, ks[:2], cfg.gen_tokens)
                answers, lp = [*a, answers[2]], np.vstack([b, lp[2:]])
            for j, key in enumerate(("bottom", "top", "zero")):
                yes = [t.strip().lower().startswith("yes") for t in answers[j]]
                out[f"{name}/yes_rate_{key}"] = float(np.mean(yes))
                ok = lp[j][np.isfinite(lp[j])]
                out[f"{name}/nll_{key}"] = float(-ok.mean()) if ok.size else 0.0
    return out


EXPERIMENT = Experiment(
    name="self_recognition.control",
    summary="Steering, colouring and projection ablation with the 'self' vector of "
    "SmolLM2-135M-Instruct against matched-norm random vectors (Yes-No margin dose-response), "
    "and the perplexity of steered answers.",
    config=ControlConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    extras=("llm", "sandbox"),
)
