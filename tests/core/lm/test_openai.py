"""The openai backend against a stub server on loopback (no other network)."""

import contextlib
import json
import socket
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest

from iclr25.core.lm import LMConfig, LMConnectionError, LMHTTPError, LMResponseError, load_lm
from iclr25.core.lm.openai_api import OpenAILM
from iclr25.core.testing import serve_loopback

PIECES = {1: " yes", 2: " no", 3: "maybe"}


class Stub(BaseHTTPRequestHandler):
    mode = "ok"  # ok | flaky | bad_json | http400 | slow | extras
    calls = 0

    def log_message(self, *args):
        pass

    def _send(self, status, body):
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # "slow": the client hung up first
            self.wfile.write(raw)

    def do_POST(self):
        type(self).calls += 1
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        mode = type(self).mode
        if mode == "flaky" and type(self).calls <= 2:
            return self._send(503, {"error": "busy"})
        if mode == "bad_json":
            return self._send(200, b"<html>not json")
        if mode == "http400":
            return self._send(400, {"error": "bad model"})
        if mode == "slow":
            import time

            time.sleep(0.5)
        if mode == "extras":  # llama-cpp-python's server: /extras/..., BOS (9) before any text
            if self.path in ("/tokenize", "/detokenize"):
                return self._send(404, {"detail": "Not Found"})
            if self.path == "/extras/tokenize":
                tokens = [9] + ([1] if "yes" in req["input"] else [2] if req["input"] else [])
                return self._send(200, {"tokens": tokens})
            if self.path == "/extras/detokenize":
                return self._send(200, {"text": "".join(PIECES[t] for t in req["tokens"])})
        if self.path == "/detokenize":
            return self._send(200, {"prompt": "".join(PIECES[t] for t in req["tokens"])})
        if self.path == "/tokenize":
            tokens = [1] if "yes" in req["prompt"] else [2] if req["prompt"] else []
            return self._send(200, {"tokens": tokens})
        if self.path == "/v1/chat/completions":
            top = [{"token": " yes", "logprob": -0.1}, {"token": " no", "logprob": -2.5}]
            msg = {"content": "chat: " + req["messages"][0]["content"]}
            return self._send(
                200,
                {"choices": [{"message": msg, "logprobs": {"content": [{"top_logprobs": top}]}}]},
            )
        prompt = req["prompt"]
        if req.get("echo"):  # one token per character, log-prob -0.5 each
            return self._send(
                200,
                {
                    "choices": [
                        {
                            "text": prompt,
                            "logprobs": {
                                "text_offset": list(range(len(prompt))),
                                "token_logprobs": [None] + [-0.5] * (len(prompt) - 1),
                            },
                        }
                    ]
                },
            )
        if req.get("logprobs"):
            top = {" no": -0.2, "yes": -1.9}
            return self._send(
                200, {"choices": [{"text": " no", "logprobs": {"top_logprobs": [top]}}]}
            )
        text = f"echo {prompt} STOP more"
        return self._send(200, {"choices": [{"text": text}]})


@pytest.fixture
def server():
    Stub.mode, Stub.calls = "ok", 0
    with serve_loopback(Stub) as base:
        yield base


def _lm(url, **kw):
    return OpenAILM(url, "stub", retries=2, backoff_s=0.01, timeout_s=2, **kw)


def test_completions_chat_logits_and_score(server):
    lm = _lm(server)
    assert lm.generate(["hi", "yo"], stop=["STOP"]) == ["echo hi ", "echo yo "]
    assert lm.encode("yes") == [1] and lm.decode([1, 2]) == " yes no"
    z = lm.next_token_logits(["q"], [1, 2, 3])  # " yes" matched without its space
    np.testing.assert_allclose(z, [[-1.9, -0.2, -np.inf]])
    assert lm.score(["ab"], ["cde"])[0] == pytest.approx(-1.5)
    chat = _lm(server, chat=True)
    assert chat.generate(["hi"]) == ["chat: hi"]
    np.testing.assert_allclose(chat.next_token_logits(["q"], [1, 2]), [[-0.1, -2.5]])


def test_llama_cpp_python_extras_endpoints(server):
    Stub.mode = "extras"
    lm = _lm(server)
    assert lm.encode("yes") == [1] and lm.encode("no") == [2] and lm.encode("") == []
    assert lm.decode([1, 2]) == " yes no"
    assert lm._extras_prefix == "/extras"


def test_retries_then_succeeds(server):
    Stub.mode = "flaky"
    assert _lm(server).generate(["x"]) == ["echo x STOP more"]
    assert Stub.calls == 3


def test_clear_errors(server):
    Stub.mode = "bad_json"
    with pytest.raises(LMResponseError, match="not JSON"):
        _lm(server).generate(["x"])
    Stub.mode = "http400"
    with pytest.raises(LMHTTPError, match="HTTP 400"):
        _lm(server).generate(["x"])
    assert Stub.calls == 2  # a 4xx is not retried
    Stub.mode = "flaky"
    Stub.calls = -10
    with pytest.raises(LMHTTPError, match=r"503.*after 3 attempts") as err:
        _lm(server).generate(["x"])
    assert err.value.status == 503
    Stub.mode = "slow"
    with pytest.raises(LMConnectionError, match=r"timeout_s=0.1"):
        OpenAILM(server, "stub", retries=0, timeout_s=0.1).generate(["x"])


def test_unreachable_server_is_reported():
    with socket.socket() as s:  # a free port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lm = load_lm(LMConfig(backend="openai", url=f"http://127.0.0.1:{port}", model="m", retries=1))
    lm.backoff_s = 0.01
    with pytest.raises(LMConnectionError, match=r"refused.*after 2 attempts"):
        lm.generate(["x"])


def test_bad_settings():
    with pytest.raises(ValueError, match="url="):
        OpenAILM("localhost:8000", "m")
    with pytest.raises(ValueError, match=r"lm.url"):
        LMConfig(backend="openai", model="m")
    with pytest.raises(ValueError, match="retries"):
        OpenAILM("http://127.0.0.1:1", "m", retries=-1)
