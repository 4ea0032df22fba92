"""Run llama.cpp's OpenAI-compatible server (llama-cpp-python's `[server]` extra) on loopback,
for the `openai` backend:

    >>> with LlamaCppServer(smollm2_path(), threads=2) as url:
    ...     lm = OpenAILM(url, model=LlamaCppServer.ALIAS)

The server is a child process on 127.0.0.1 at a free port; the context manager waits until it
answers and stops it (by its PID) on exit. llama-cpp-python compiles llama.cpp when installed
(`make llamacpp`; docs/lm.md).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from iclr25.core.checks import check_float, check_int
from iclr25.core.lm.base import LMError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaCppServer:
    """llama-cpp-python's server for one GGUF model, as a context manager yielding its URL.

    Args:
        model: The GGUF file.
        threads: Threads for generation and for prompt processing.
        n_ctx: Context length.
        startup_s: Seconds to wait for the server to answer.
    """

    ALIAS = "local"
    """The model name the server answers to (`OpenAILM(url, model=ALIAS)`)."""

    def __init__(
        self, model: str | Path, threads: int = 1, n_ctx: int = 2048, startup_s: float = 120.0
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ImportError("the llama.cpp server needs llama-cpp-python[server]: make llamacpp")
        self.model = Path(model)
        if not self.model.is_file():
            raise FileNotFoundError(f"GGUF file {str(self.model)!r} does not exist")
        self.threads = check_int("threads", threads, 1)
        self.n_ctx = check_int("n_ctx", n_ctx, 16)
        self.startup_s = check_float("startup_s", startup_s, 0, low_open=True)
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> str:
        """Start the server; its base URL once `/v1/models` answers."""
        port = free_port()
        t = str(self.threads)
        cmd = [
            *(sys.executable, "-m", "llama_cpp.server", "--model", str(self.model)),
            *("--model_alias", self.ALIAS, "--host", "127.0.0.1", "--port", str(port)),
            *("--n_ctx", str(self.n_ctx), "--n_threads", t, "--n_threads_batch", t),
            *("--verbose", "False"),
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode("utf-8", "replace")[-2000:]
                raise LMError(f"llama_cpp.server exited with {self.proc.returncode}: {err}")
            with (
                contextlib.suppress(OSError, ValueError, KeyError, IndexError),
                urllib.request.urlopen(f"{self.url}/v1/models", timeout=2) as reply,  # network-ok
            ):
                if json.loads(reply.read())["data"][0]["id"] == self.ALIAS:  # network-ok
                    return self.url
            time.sleep(0.2)
        self.stop()
        raise LMError(f"llama_cpp.server did not answer within {self.startup_s:g} s")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server process we started (SIGKILL after 20 s)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
