"""The real-model command line end to end: the openai backend against a stub server that this
test opens on 127.0.0.1 (no other network), the scripted solver answering behind it."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import pytest

pytest.importorskip("pyseccomp", reason="the sandbox tests need the extra 'sandbox'")

from iclr25.core.testing import serve_loopback
from iclr25.papers.sbsc.data import load_problems
from iclr25.papers.sbsc.evaluate import main
from iclr25.papers.sbsc.method import ReplayLM, Transcript
from iclr25.papers.sbsc.simulator import NoisySolver

pytestmark = pytest.mark.xdist_group("sbsc_sandbox")


class Stub(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/completions endpoint whose model is the scripted solver."""

    solver = NoisySolver(load_problems()[:4])
    prompts: ClassVar[list[str]] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path == "/v1/completions" and req["model"] == "stub"
        type(self).prompts.append(req["prompt"])
        text = self.solver.generate([req["prompt"]], temperature=req["temperature"])[0]
        raw = json.dumps({"choices": [{"text": text}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def url():
    Stub.prompts = []
    with serve_loopback(Stub) as base:
        yield base


def test_command_line_over_an_openai_compatible_server(url, tmp_path):
    out = tmp_path / "run"
    argv = ["--data", "generated", "--limit", "4", "--url", url, "--model", "stub"]
    summary = main([*argv, "--methods", "sbsc,tir,pal", "--out", str(out)])
    for m in ("sbsc", "tir", "pal"):
        assert summary[m]["accuracy"] == 1.0 and summary[m]["sandbox_failures"] == 0.0
    assert summary["sbsc"]["executions"] == 2.75  # 2 + 2 + 3 + 4 sub-steps over 4 problems
    assert summary["sandbox"]["seccomp"]
    assert {"sympy", "numpy"} <= set(summary["sandbox"]["preimport"])
    assert json.loads((out / "summary.json").read_text()) == summary
    stored = [
        Transcript.from_json(x) for x in (out / "transcripts.jsonl").read_text().split("\n")[:-1]
    ]
    assert len(stored) == 12 and {t.method for t in stored} == {"sbsc", "tir", "pal"}
    sbsc = [t for t in stored if t.method == "sbsc"]
    seen = [p for t in sbsc for p in t.prompts()]  # the server saw them batched by turn
    assert sorted(seen) == sorted(Stub.prompts[: len(seen)])
    replay = ReplayLM(sbsc)
    assert all(replay.generate([p]) for p in seen)


def test_command_line_bad_input_writes_nothing(url, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(SystemExit):
        main(["--data", "olympiad", "--out", str(out)])
    with pytest.raises(ValueError, match=r"lm\.url"):
        main(["--url", "ftp://x", "--model", "m", "--out", str(out)])
    with pytest.raises(ValueError, match="method='gpt' is not allowed"):
        main(["--data", "generated", "--url", url, "--model", "stub", "--methods", "gpt",
              "--out", str(out)])  # fmt: skip
    assert not out.exists() and Stub.prompts == []
