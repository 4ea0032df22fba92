"""The judging model's own solutions to the CHAMP problems: generated once, shipped, checked.

`assets/own_texts.json` holds SmolLM2-135M-Instruct's greedy answers (the packaged Q4_1 GGUF,
dequantised to float32, through the `hf` backend with its chat template) to CHAMP's 0-Shot user
message (`data.SOLVE_PROMPT`), with the generation settings, the GGUF's sha256, the library
versions and a sha256 of the texts. `load_own_texts` verifies the checksum;
tests/papers/self_recognition regenerates a few and compares them with the shipped ones.

Regenerate (about 4 minutes at one thread):

    PYTHONPATH=src python -m iclr25.papers.self_recognition.own_texts --threads 1

# DEVIATION: the own texts are generated without CHAMP's system prompt ("You are an expert on
# mathematics."): the protocol sends one user message, and SmolLM2's template then injects its
# own system prompt, the same one it sees when judging.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iclr25.core.checks import check_int
from iclr25.papers.self_recognition.data import SOLVE_PROMPT, Problem, load_champ

ASSET = Path(__file__).parent / "assets" / "own_texts.json"

GENERATION = {"max_new_tokens": 64, "temperature": 0.0, "decode_batch_size": 32}
"""Settings of the shipped texts: greedy, 64 new tokens (above the 48-token common length),
all 270 prompts in one `generate` call (batches of 32 sorted by prompt length)."""


def texts_sha256(texts: Mapping[str, str]) -> str:
    """sha256 of the texts as canonical JSON (sorted keys, UTF-8)."""
    blob = json.dumps(dict(texts), sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def load_own_texts(path: str | Path = ASSET) -> dict[str, Any]:
    """The shipped own-text record: {"texts": {problem id: text}, "config": {...}}.

    Raises:
        FileNotFoundError: no file at `path`.
        ValueError: the texts do not match the recorded checksum.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"own texts file {str(path)!r} does not exist")
    rec = json.loads(path.read_text(encoding="utf-8"))
    got = texts_sha256(rec["texts"])
    if got != rec["config"]["texts_sha256"]:
        raise ValueError(
            f"{path}: texts_sha256 is {got}, the file records {rec['config']['texts_sha256']}"
        )
    return rec


def own_problems(path: str | Path = ASSET) -> list[Problem]:
    """CHAMP problems with the shipped own texts attached (`data.load_champ(own=...)`)."""
    return load_champ(own=load_own_texts(path)["texts"])


def generate_own_texts(
    lm: Any, problems: Sequence[Problem], max_new_tokens: int = GENERATION["max_new_tokens"]
) -> dict[str, str]:
    """Greedy solutions of `lm` to each problem's 0-Shot prompt, in one batched call.

    Returns:
        {problem id: generated text}.
    """
    check_int("max_new_tokens", max_new_tokens, 1)
    if not problems:
        raise ValueError("problems is empty: pass at least one CHAMP problem")
    outs = lm.generate([p.solve_prompt for p in problems], max_new_tokens=max_new_tokens)
    return {p.id: t for p, t in zip(problems, outs, strict=True)}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Regenerate the shipped file from the packaged SmolLM2 (writes `--out`)."""
    import torch

    from iclr25.core.envinfo import envinfo
    from iclr25.core.lm.hf import HFLM, smollm2_path
    from iclr25.core.results import file_sha256

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ASSET))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="first N problems only (0: all)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    gguf = smollm2_path()
    lm = HFLM.load(gguf, chat=True, threads=args.threads,
                   decode_batch_size=GENERATION["decode_batch_size"])  # fmt: skip
    problems = load_champ()
    if args.limit:
        problems = problems[: args.limit]
    t0 = time.perf_counter()
    texts = generate_own_texts(lm, problems)
    seconds = time.perf_counter() - t0
    env = envinfo()
    config = {
        "model": gguf.name,
        "model_sha256": file_sha256(gguf),
        "backend": "hf",
        "dtype": "float32",
        "chat": True,
        "prompt": SOLVE_PROMPT,
        **GENERATION,
        "threads": args.threads,
        "n_problems": len(problems),
        "seconds": round(seconds, 1),
        "cpu_capability": env["cpu_capability"],
        "versions": {k: env.get(k) for k in ("python", "torch", "numpy")}
        | {"transformers": __import__("transformers").__version__},
        "texts_sha256": texts_sha256(texts),
    }
    rec = {"config": config, "texts": texts}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return config


if __name__ == "__main__":
    main()
