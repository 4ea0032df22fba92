"""The `openai` backend: any OpenAI-compatible HTTP server (vLLM, llama.cpp server, Ollama).

    >>> lm = OpenAILM("http://127.0.0.1:8000", model="my-guard", chat=True)
    >>> lm.generate(["Is this safe?"], max_new_tokens=8)

Only the standard library is used (urllib). Every request has a timeout; connection failures,
timeouts, HTTP 429 and 5xx are retried a bounded number of times with exponential backoff; other
HTTP errors fail at once. Each failure raises an `LMError` subclass whose message names the URL
and what went wrong: `LMConnectionError` (refused, unreachable, timed out), `LMHTTPError` (an
error status, with the start of the server's reply) or `LMResponseError` (not the JSON
expected).

Endpoints used:

- `generate`: `POST /v1/completions`, or `/v1/chat/completions` with `chat=True` (each prompt is
  one user message), one request per prompt.
- `next_token_logits`: the same endpoints with `max_tokens=1`, `temperature=0` and the top
  `top_logprobs` log-probabilities; the chosen ids are turned into token strings with
  `POST /detokenize` and looked up there. Ids outside the top list get `-inf`. The values are
  log-probabilities, which differ from logits by one constant per prompt.
- `score`: `POST /v1/completions` with `echo=True`, `max_tokens=1` and `logprobs`: the echoed
  log-probabilities of the continuation's tokens (vLLM). llama-cpp-python's server echoes values
  one token off for models without BOS, so there each continuation token is scored by its own
  request (the text so far, `max_tokens=1`, a +100 logit bias forcing the token, whose raw
  log-probability the server reports). llama.cpp's llama-server returns no echoed
  log-probabilities. Not available with `chat=True`.
- `encode` / `decode`: `POST /tokenize` and `/detokenize` (vLLM, llama.cpp's llama-server), or
  `/extras/tokenize` and `/extras/detokenize` (llama-cpp-python's server); Ollama has neither.
"""

from __future__ import annotations

import json
import logging
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr25.core.checks import check_float, check_int
from iclr25.core.lm.base import (
    LMConnectionError,
    LMError,
    LMHTTPError,
    LMResponseError,
    check_pairs,
    check_prompts,
    check_sampling,
    check_token_ids,
    cut_at_stop,
    prompt_seed,
)

log = logging.getLogger(__name__)

RETRY_STATUS = (429, 500, 502, 503, 504)


class OpenAILM:
    """Client of an OpenAI-compatible server behind the `LanguageModel` protocol.

    Args:
        url: Base URL, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is accepted).
        model: The model name the server expects.
        chat: Send each prompt as one user message to the chat endpoint.
        api_key: Sent as a bearer token when given.
        timeout_s: Seconds before one request is abandoned.
        retries: Extra attempts after a failed one (connection errors, timeouts, 429, 5xx).
        backoff_s: Wait before the first retry; doubled for each further retry.
        top_logprobs: How many top log-probabilities `next_token_logits` asks for.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        chat: bool = False,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        top_logprobs: int = 20,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url={url!r} is not allowed: must start with http:// or https://")
        if not model:
            raise ValueError("model is empty: name the model the server serves")
        check_float("timeout_s", timeout_s, 0, low_open=True)
        check_int("retries", retries, 0)
        check_float("backoff_s", backoff_s, 0)
        check_int("top_logprobs", top_logprobs, 1, 100)
        self.url = url.rstrip("/").removesuffix("/v1")
        self.model = model
        self.name = f"openai:{model}"
        self.chat = chat
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.top_logprobs = top_logprobs
        self._piece_cache: dict[int, str] = {}
        self._extras_prefix: str | None = None  # "" or "/extras", found on first use
        self._lead: list[int] | None = None  # tokens the server puts before any text

    # ------------------------------------------------------------ HTTP

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST JSON to `path` with retries; the decoded JSON object of the reply."""
        url = self.url + path
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last, status = "", None  # the last attempt's failure, and its HTTP status if any
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            status = None
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:  # network-ok
                    raw = reply.read()  # network-ok
            except urllib.error.HTTPError as err:
                text = err.read()[:300].decode("utf-8", "replace")  # network-ok
                if err.code not in RETRY_STATUS:
                    raise LMHTTPError(f"POST {url}: HTTP {err.code}: {text}", err.code) from None
                last, status = f"HTTP {err.code}: {text}", err.code
            except urllib.error.URLError as err:
                reason = err.reason
                if isinstance(reason, ConnectionRefusedError):
                    last = "connection refused (is the server running at this address?)"
                elif isinstance(reason, TimeoutError | socket.timeout):
                    last = f"no reply within timeout_s={self.timeout_s:g}"
                else:
                    last = f"cannot connect: {reason}"
            except TimeoutError:
                last = f"no reply within timeout_s={self.timeout_s:g}"
            except (ConnectionError, OSError) as err:
                last = f"connection failed: {err}"
            else:
                try:
                    data = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise LMResponseError(
                        f"POST {url}: the reply is not JSON: {raw[:200]!r}"
                    ) from None
                if not isinstance(data, dict):
                    raise LMResponseError(f"POST {url}: expected a JSON object, got {raw[:200]!r}")
                return data
            log.info(
                "POST %s failed (%s); attempt %d of %d", url, last, attempt + 1, self.retries + 1
            )
        if status is not None:
            raise LMHTTPError(f"POST {url}: {last} (after {self.retries + 1} attempts)", status)
        raise LMConnectionError(f"POST {url}: {last} (after {self.retries + 1} attempts)")

    def _choice(self, data: dict[str, Any], path: str) -> dict[str, Any]:
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise LMResponseError(
                f"POST {self.url}{path}: the reply has no choices: {json.dumps(data)[:200]}"
            ) from None
        if not isinstance(choice, dict):
            raise LMResponseError(f"POST {self.url}{path}: malformed choice {choice!r:.200}")
        return choice

    def _request(self, prompt: str, **settings: Any) -> tuple[str, dict[str, Any]]:
        if self.chat:
            path = "/v1/chat/completions"
            payload = {"model": self.model, "messages": [{"role": "user", "content": prompt}]}
        else:
            path = "/v1/completions"
            payload = {"model": self.model, "prompt": prompt}
        payload.update(settings)
        return path, self._choice(self._post(path, payload), path)

    # ------------------------------------------------------------ protocol

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """One request per prompt; the server's sampler seeded by `(seed, prompt)`."""
        prompts = check_prompts(prompts)
        stop = check_sampling(max_new_tokens, temperature, stop, seed)
        out = []
        for p in prompts:
            settings: dict[str, Any] = {"max_tokens": max_new_tokens, "temperature": temperature}
            if stop:
                settings["stop"] = list(stop)
            if temperature > 0:
                settings["seed"] = prompt_seed(seed, p) % (1 << 31)
            path, choice = self._request(p, **settings)
            text = choice.get("message", {}).get("content") if self.chat else choice.get("text")
            if not isinstance(text, str):
                raise LMResponseError(f"POST {self.url}{path}: the choice has no text: {choice}")
            out.append(cut_at_stop(text, stop)[0])
        return out

    def _extras(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST `/<name>` (vLLM, llama.cpp's llama-server), or `/extras/<name>` where that is
        missing (llama-cpp-python's server); the path that answered is remembered."""
        if self._extras_prefix is None:
            try:
                data = self._post(f"/{name}", payload)
            except LMHTTPError as err:
                if err.status != 404:
                    raise
                self._extras_prefix = "/extras"
            else:
                self._extras_prefix = ""
                return data
        return self._post(f"{self._extras_prefix}/{name}", payload)

    def _tokens(self, text: str) -> list[int]:
        payload = {"model": self.model, "add_special_tokens": False}
        data = self._extras("tokenize", {**payload, "prompt": text, "content": text, "input": text})
        tokens = data.get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise LMResponseError(
                f"POST {self.url}{self._extras_prefix}/tokenize: no tokens in {data}"
            )
        return tokens

    def encode(self, text: str) -> list[int]:
        """Token ids from the server's `/tokenize`, without the special tokens a server adds
        in front of every text (llama-cpp-python adds BOS where the model has one)."""
        if self._lead is None:
            self._lead = self._tokens("")
        tokens = self._tokens(text)
        n = len(self._lead)
        return tokens[n:] if n and tokens[:n] == self._lead else tokens

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids from the server's `/detokenize`."""
        ids = [int(i) for i in ids]
        data = self._extras("detokenize", {"model": self.model, "tokens": ids})
        text = next((data[k] for k in ("prompt", "content", "text") if k in data), None)
        if not isinstance(text, str):
            raise LMResponseError(
                f"POST {self.url}{self._extras_prefix}/detokenize: no text in {data}"
            )
        return text

    def _piece(self, token_id: int) -> str:
        if token_id not in self._piece_cache:
            self._piece_cache[token_id] = self.decode([token_id])
        return self._piece_cache[token_id]

    def _top_logprobs(self, prompt: str) -> dict[str, float]:
        """{token string: log-prob} of the top tokens at the first generated position."""
        settings: dict[str, Any] = {"max_tokens": 1, "temperature": 0}
        if self.chat:
            settings.update(logprobs=True, top_logprobs=self.top_logprobs)
        else:
            settings["logprobs"] = self.top_logprobs
        path, choice = self._request(prompt, **settings)
        try:
            if self.chat:
                entries = choice["logprobs"]["content"][0]["top_logprobs"]
                return {e["token"]: float(e["logprob"]) for e in entries}
            top = choice["logprobs"]["top_logprobs"][0]
            return {str(k): float(v) for k, v in top.items()}
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            why = ""
            if choice.get("finish_reason") == "stop" and not (choice.get("text") or "").strip():
                why = (
                    " (the model ended its reply at once, and this server reports no "
                    "log-probabilities for the end-of-sequence token, e.g. llama-cpp-python)"
                )
            raise LMResponseError(
                f"POST {self.url}{path}: no top_logprobs in the reply{why}: {choice}"
            ) from None

    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Log-probabilities of `token_ids` as the next token (`-inf` outside the top list).

        A token is matched by its exact text, else by its text without surrounding spaces
        (tokenizers differ on whether a lone piece keeps its leading space).

        Shapes: (B, K) float64.
        """
        prompts = check_prompts(prompts)
        ids = check_token_ids(token_ids, None)
        pieces = [self._piece(i) for i in ids]
        out = np.full((len(prompts), len(ids)), -np.inf)
        for b, p in enumerate(prompts):
            top = self._top_logprobs(p)
            stripped: dict[str, list[float]] = {}
            for k, v in top.items():
                stripped.setdefault(k.strip(), []).append(v)
            for j, piece in enumerate(pieces):
                if piece in top:
                    out[b, j] = top[piece]
                elif len(stripped.get(piece.strip(), [])) == 1:
                    out[b, j] = stripped[piece.strip()][0]
        return out

    def _forced_score(self, prompt: str, continuation: str) -> float:
        """log p(continuation | prompt), one request per continuation token: the prompt so far,
        `max_tokens=1` and a +100 logit bias on the token, whose log-probability the server
        reports from the raw logits (llama-cpp-python applies the bias to a copy).

        Raises:
            LMError: the text so far does not tokenize to the prompt's tokens plus the
                continuation's so far (a merge across the boundary), so no exact score exists.
        """
        head, tail = self._tokens(prompt), self.encode(continuation)
        total = 0.0
        for k, token in enumerate(tail):
            text = prompt + (self.decode(tail[:k]) if k else "")
            if k and self._tokens(text) != head + tail[:k]:
                raise LMError(
                    f"score({prompt[-30:]!r}, {continuation[:30]!r}): the text after {k} "
                    "continuation tokens tokenizes differently on the server, so its tokens "
                    "cannot be scored one by one"
                )
            path, choice = self._request(
                text, max_tokens=1, temperature=0, logprobs=1, logit_bias={str(token): 100.0}
            )
            try:
                got, value = (
                    choice["logprobs"]["tokens"][0],
                    choice["logprobs"]["token_logprobs"][0],
                )
                total += float(value)
            except (KeyError, IndexError, TypeError, ValueError):
                raise LMResponseError(
                    f"POST {self.url}{path}: no token_logprobs in the reply: {choice}"
                ) from None
            if got != self._piece(token):
                raise LMResponseError(
                    f"POST {self.url}{path}: the logit bias did not force token {token} "
                    f"({self._piece(token)!r}); the server generated {got!r}"
                )
        return total

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Sum of continuation log-probabilities via `echo=True` (completions endpoint only);
        on llama-cpp-python's server with a model without BOS, token by token (see
        `_forced_score`), because its echoed values are one token off there."""
        prompts, continuations = check_pairs(prompts, continuations)
        if self.chat:
            raise LMError("score() needs the completions endpoint: use chat=False")
        if self._lead is None:
            self._lead = self._tokens("")  # also finds which tokenize path the server has
        if self._extras_prefix == "/extras" and not self._lead:
            # llama-cpp-python (0.3.x) pairs each echoed prompt token with the distribution
            # *after* it unless the prompt starts with BOS (it drops BOS from the tokens but
            # not from the logits; abetlen/llama-cpp-python#1983): score token by token instead
            return np.array([self._forced_score(p, c) for p, c in zip(prompts, continuations)])
        out = np.zeros(len(prompts))
        for i, (p, c) in enumerate(zip(prompts, continuations)):
            path = "/v1/completions"
            data = self._post(
                path,
                {
                    "model": self.model,
                    "prompt": p + c,
                    "max_tokens": 1,  # llama-cpp-python reads 0 as "until the context is full"
                    "echo": True,
                    "logprobs": 0,
                    "temperature": 0,
                },
            )
            choice = self._choice(data, path)
            try:
                lp = choice["logprobs"]
                offsets, values = lp["text_offset"], lp["token_logprobs"]
                if len(offsets) != len(values):
                    raise ValueError
            except (KeyError, TypeError, ValueError):
                raise LMResponseError(
                    f"POST {self.url}{path}: no echoed token_logprobs/text_offset in the reply "
                    "(does this server support echo=True with logprobs?)"
                ) from None
            start, end = len(p), len(p) + len(c)  # the one generated token lies past `end`
            picked = [v for o, v in zip(offsets, values) if start <= o < end]
            if any(v is None for v in picked):
                raise LMResponseError(f"POST {self.url}{path}: missing log-probabilities")
            out[i] = float(sum(picked))
        return out
