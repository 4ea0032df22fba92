"""The pretrained backbone every embedder starts from, and its shipped checkpoint.

The paper starts from Mistral-7B, an LLM that already has in-context skills. Here a
`model.tiny_llama` is pretrained from scratch by `pretrain_backbone`: the causal-LM stage of
`training.pretrain_lm` on the attribute world (answer questions in the query format with the
query's value of the task's attribute: answer-dense packed sequences first, then mixed with
queries that carry 0 to 5 examples of their task). The seed-0 model is shipped in `assets/`
with its sha256 (`CHECKPOINT`) and used by every preset and seed, as the paper uses one LLM;
the seeds vary the contrastive data, the example draws and the test sets. Regenerate it with

    PYTHONPATH=src python -m iclr25.papers.icl_embedder.pretrained \
        --out src/iclr25/papers/icl_embedder/assets/backbone.pt

which prints the probe accuracies and the file's sha256 (bitwise equal on the machine that
made it, with one torch thread).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from iclr25.core.checks import check_int
from iclr25.core.results import file_sha256
from iclr25.papers.icl_embedder.data import World
from iclr25.papers.icl_embedder.model import tiny_llama
from iclr25.papers.icl_embedder.prompt import build_tokenizer
from iclr25.papers.icl_embedder.training import TrainLog, lm_probe, pretrain_lm

ASSETS = Path(__file__).with_name("assets")


@dataclass(frozen=True)
class BackboneRecipe:
    """The backbone's size and its causal-LM pretraining.

    Attributes:
        width, layers, heads, intermediate: `model.tiny_llama` sizes.
        steps: AdamW steps of `training.pretrain_lm`.
        batch_size: Sequences per step.
        lr: Peak learning rate (linear warm-up over 2 %, linear decay).
        packed_steps: Steps of packed sequences only, first.
        packed_frac: Share of packed sequences in each later batch.
    """

    width: int = 64
    layers: int = 3
    heads: int = 4
    intermediate: int = 256
    steps: int = 3000
    batch_size: int = 32
    lr: float = 1e-3
    packed_steps: int = 1000
    packed_frac: float = 0.5


RECIPE = BackboneRecipe()
"""The shipped backbone's recipe."""

CHECKPOINT: tuple[str, str] | None = None
"""(file in `assets/`, sha256) of the seed-0 backbone; None until one passes the probe gate
(issue 26: no recipe has learned all eight attributes yet)."""


def pretrain_backbone(
    seed: int, recipe: BackboneRecipe = RECIPE, world: World | None = None, callback=None
) -> tuple[torch.nn.Module, TrainLog]:
    """A fresh backbone pretrained with `recipe`; weights and prompts drawn from `seed`.

    Returns:
        The `LlamaForCausalLM` (eval mode) and its pretraining log.
    """
    seed = check_int("seed", seed, 0, 2**63 - 1)
    world = world or World()
    tok = build_tokenizer(world)
    model = tiny_llama(len(tok), width=recipe.width, layers=recipe.layers, heads=recipe.heads,
                       intermediate=recipe.intermediate, seed=seed)  # fmt: skip
    log = pretrain_lm(model, tok, world, steps=recipe.steps, batch_size=recipe.batch_size,
                      lr=recipe.lr, packed_steps=recipe.packed_steps,
                      packed_frac=recipe.packed_frac, rng=np.random.default_rng(seed),
                      callback=callback)  # fmt: skip
    return model, log


def load_backbone(recipe: BackboneRecipe = RECIPE) -> torch.nn.Module:
    """The shipped seed-0 backbone (eval mode), after checking its sha256.

    Raises:
        FileNotFoundError: no backbone is shipped yet.
        ValueError: a file whose sha256 differs from `CHECKPOINT`.
    """
    if CHECKPOINT is None:
        raise FileNotFoundError(
            "no icl_embedder backbone is shipped yet (issue 26): make one with "
            "`python -m iclr25.papers.icl_embedder.pretrained --out <file>`"
        )
    name, expected = CHECKPOINT
    path = ASSETS / name
    blob = path.read_bytes()
    got = hashlib.sha256(blob).hexdigest()
    if got != expected:
        raise ValueError(f"{path} has sha256 {got}, expected {expected}: the file is damaged")
    tok = build_tokenizer(World())
    model = tiny_llama(len(tok), width=recipe.width, layers=recipe.layers, heads=recipe.heads,
                       intermediate=recipe.intermediate, seed=0)  # fmt: skip
    model.load_state_dict(torch.load(io.BytesIO(blob), weights_only=True))
    return model.eval()


def main(argv: list[str] | None = None) -> None:
    """Pretrain the seed-0 backbone, probe it, write it and print its sha256."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=RECIPE.steps)
    parser.add_argument("--lr", type=float, default=RECIPE.lr)
    parser.add_argument("--packed-steps", type=int, default=RECIPE.packed_steps)
    parser.add_argument("--packed-frac", type=float, default=RECIPE.packed_frac)
    parser.add_argument("--probe-every", type=int, default=0, help="print the probe every N steps")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    recipe = replace(RECIPE, steps=args.steps, lr=args.lr, packed_steps=args.packed_steps,
                     packed_frac=args.packed_frac)  # fmt: skip
    world = World()
    tok = build_tokenizer(world)

    def probe(model: torch.nn.Module) -> dict[str, float]:
        return lm_probe(model, tok, world, rng=np.random.default_rng(10**6))

    def callback(step: int, model: torch.nn.Module) -> None:
        if args.probe_every and step % args.probe_every == 0:
            print(step, json.dumps(probe(model)), flush=True)
            model.train()

    model, log = pretrain_backbone(args.seed, recipe, world, callback)
    result = probe(model)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    args.out.write_bytes(buf.getvalue())
    print(json.dumps({"recipe": asdict(recipe), "seconds": round(log.seconds, 1),
                      "final_loss": float(np.mean(log.losses[-50:])), "probe": result,
                      "sha256": file_sha256(args.out)}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
