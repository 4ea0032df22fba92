"""Helpers for the project's tests: skip decorators, preset runs and claim assertions."""

from __future__ import annotations

import contextlib
import importlib.util
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from iclr25.core.claims import ClaimResult
from iclr25.core.runner import RunReport, run_experiment


def needs(*modules: str):
    """Skip a test unless every module in `modules` can be imported (reason names them)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


@contextlib.contextmanager
def serve_loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 at a free port in a thread; yields the base URL and stops
    the server on exit (tests talk only to listeners they start on the loopback address)."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def assert_reproduced(verdicts: Sequence[ClaimResult], ids: Sequence[str] | None = None) -> None:
    """Fail with every claim's numbers unless each claim in `ids` (default: all) is reproduced."""
    chosen = [v for v in verdicts if ids is None or v.claim.id in ids]
    if ids is not None:
        missing = set(ids) - {v.claim.id for v in chosen}
        assert not missing, f"no such claims: {sorted(missing)}"
    bad = [v for v in chosen if v.verdict != "reproduced"]
    assert not bad, "\n".join(
        f"{v.claim.id}: {v.verdict} ({v.reason}); treatment {v.treatment.fmt()}, "
        f"control {v.control.fmt() if v.claim.control_key else v.claim.control}, "
        f"difference {v.effect.mean:.4g} [{v.effect.low:.4g}, {v.effect.high:.4g}]"
        for v in bad
    )


def run_preset(tmp_path_factory, name: str, preset: str = "quick") -> RunReport:
    """Run experiment `name` at `preset` (default seeds, one job, one thread) into a fresh
    temporary folder; fail with the first seed's traceback if any seed failed."""
    out = tmp_path_factory.mktemp(name.replace(".", "_") + "_" + preset)
    rep = run_experiment(name, preset=preset, out=out, jobs=1, threads=1)
    assert not rep.failed, rep.failed[0].error
    return rep


def preset_verdicts(tmp_path_factory, name: str, preset: str = "quick") -> list[ClaimResult]:
    """The claim verdicts of `run_preset(tmp_path_factory, name, preset)`."""
    return run_preset(tmp_path_factory, name, preset).verdicts()


def tiny_llama(folder: Path, words: Sequence[str], chat_template: str, max_positions: int = 64):
    """Save a randomly initialised 2-layer Llama (width 32, torch seed 0) with a word-level
    tokenizer over `words` (the first four: pad, unk, bos, eos) and `chat_template` to `folder`,
    for tests and smoke benchmarks of the hf backend. Returns `folder`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from iclr25.core.seeding import torch_seed

    pad, unk, bos, eos = words[:4]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token=unk))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token=pad, unk_token=unk, bos_token=bos, eos_token=eos
    )
    tok.chat_template = chat_template
    cfg = LlamaConfig(
        vocab_size=len(words),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
    )
    with torch_seed(0):
        model = LlamaForCausalLM(cfg)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
