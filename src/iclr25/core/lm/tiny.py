"""The `tiny` backend: a small decoder-only transformer with a word-level tokenizer, trained in
code on CPU, saved to and loaded from a folder. Used by tests and by default experiments.

    >>> tok = WordTokenizer.build(texts)
    >>> lm = train_tiny_lm([("the cat", " sat"), ...], tok, epochs=5, seed=0)
    >>> lm.generate(["the cat"], max_new_tokens=3)
    >>> lm.save("runs/my_tiny_lm"); lm = TinyLM.load("runs/my_tiny_lm")

The model is pre-LayerNorm GPT: learned token and position embeddings, `n_layers` blocks of
causal multi-head self-attention and a 4x GELU MLP, a final LayerNorm and an output head tied to
the token embedding. Batches are left-padded; positions count from each sequence's first real
token, so a prompt gives the same outputs whatever batch it is in. Every sequence starts with
`<bos>`, so an empty prompt is valid. Generation recomputes the whole prefix at each step (no
key/value cache): simple and exact, and fast enough at this size.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
import torch._dynamo
from torch import nn
from torch.nn import functional as F

from iclr25.core.checks import check_int
from iclr25.core.lm.base import (
    Positions,
    check_layers,
    check_pairs,
    check_prompts,
    check_sampling,
    check_token_ids,
    check_vectors,
    cut_at_stop,
    position_mask,
    prompt_seed,
)
from iclr25.core.lm.tokenizer import BOS, EOS, PAD, WordTokenizer
from iclr25.core.seeding import torch_seed

# torch.optim imports torch._dynamo when the first optimizer of a process is built (1-4 s on
# 2 cores); the import above pays that once at module import instead of inside the first
# training run, whose wall time the smoke contract (<= 3 s) measures.

FORMAT = "iclr25-tiny-lm"
FORMAT_VERSION = 1

Edit = Callable[[int, torch.Tensor, torch.Tensor], torch.Tensor]
"""`edit(layer, h, pos) -> h` applied to the output of each block; pos holds absolute positions.
Shapes: h (B, T, D), pos (B, T)."""


class Block(nn.Module):
    """Pre-LN transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        """Shapes: x (B, T, D), attn_mask (B, 1, T, T) bool (True = may attend) -> (B, T, D)."""
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)  # (B, H, T, D/H)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    """A small GPT over left-padded batches.

    Args:
        vocab_size: V.
        d_model: Width D of the residual stream.
        n_layers: Number of blocks.
        n_heads: Attention heads (must divide d_model).
        max_len: Longest sequence (learned position embeddings).
    """

    def __init__(
        self,
        *,
        vocab_size: int,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        max_len: int = 128,
    ) -> None:
        super().__init__()
        for name, v in (
            ("vocab_size", vocab_size),
            ("d_model", d_model),
            ("n_layers", n_layers),
            ("n_heads", n_heads),
            ("max_len", max_len),
        ):
            check_int(name, v, 1)
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.max_len = max_len
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    def forward(
        self, ids: torch.Tensor, mask: torch.Tensor, edit: Edit | None = None
    ) -> torch.Tensor:
        """Next-token logits at every position.

        Shapes: ids (B, T) long, mask (B, T) bool (False = left padding) -> (B, T, V).
        """
        T = ids.shape[1]
        if self.max_len < T:
            raise ValueError(f"sequence of {T} tokens is longer than max_len={self.max_len}")
        pos = (mask.long().cumsum(-1) - 1).clamp(min=0)  # (B, T) absolute positions
        causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
        eye = torch.eye(T, dtype=torch.bool, device=ids.device)  # padding rows see themselves
        attn_mask = (causal & (mask[:, None, :] | eye))[:, None]  # (B, 1, T, T)
        h = self.tok(ids) + self.pos(pos)
        for layer, block in enumerate(self.blocks):
            h = block(h, attn_mask)
            if edit is not None:
                h = edit(layer, h, pos)
        return self.norm(h) @ self.tok.weight.T


def _left_pad(seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Shapes: B lists -> ids (B, T) long, mask (B, T) bool."""
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), PAD, dtype=torch.long)
    mask = torch.zeros((len(seqs), T), dtype=torch.bool)
    for i, s in enumerate(seqs):
        if s:
            ids[i, T - len(s) :] = torch.as_tensor(list(s), dtype=torch.long)
            mask[i, T - len(s) :] = True
    return ids, mask


class TinyLM:
    """The `tiny` backend: a `TinyTransformer` and its `WordTokenizer` (a `WhiteBoxLM`).

    Args:
        model: The network (kept in eval mode; the backend never trains it).
        tokenizer: Its vocabulary (len(tokenizer) == the model's vocab_size).
        name: Model name after "tiny:" in `self.name` (used by generation caches).
        batch_size: Sequences per forward pass.
    """

    def __init__(
        self,
        model: TinyTransformer,
        tokenizer: WordTokenizer,
        name: str = "model",
        batch_size: int = 256,
    ) -> None:
        if model.tok.num_embeddings != len(tokenizer):
            raise ValueError(
                f"tokenizer has {len(tokenizer)} tokens but the model's vocab_size is "
                f"{model.tok.num_embeddings}"
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = f"tiny:{name}"
        self.batch_size = batch_size
        self.num_layers = len(model.blocks)
        self.hidden_size = model.tok.embedding_dim
        self._edits: list[Edit] = []

    # ------------------------------------------------------------ tokens

    def encode(self, text: str) -> list[int]:
        """Word ids of `text` (no `<bos>`)."""
        return self.tokenizer.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of word ids."""
        return self.tokenizer.decode(ids)

    def _prompt_ids(self, prompt: str) -> list[int]:
        return [BOS, *self.tokenizer.encode(prompt)]

    # ------------------------------------------------------------ forward passes

    def _edit(self, layer: int, h: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        for e in self._edits:
            h = e(layer, h, pos)
        return h

    @torch.no_grad()
    def _logits(self, seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Shapes: B id lists -> logits (B, T, V) float32, mask (B, T)."""
        ids, mask = _left_pad(seqs)
        return self.model(ids, mask, self._edit if self._edits else None), mask

    def _batches(self, n: int) -> Iterator[slice]:
        for i in range(0, n, self.batch_size):
            yield slice(i, min(n, i + self.batch_size))

    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Logits of `token_ids` after each prompt. Shapes: (B, K) float64."""
        prompts = check_prompts(prompts)
        ids = check_token_ids(token_ids, len(self.tokenizer))
        seqs = [self._prompt_ids(p) for p in prompts]
        out = []
        for sl in self._batches(len(seqs)):
            logits, _ = self._logits(seqs[sl])
            out.append(logits[:, -1, ids].double().numpy())
        return np.concatenate(out)

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Sum of log p(continuation tokens | prompt). Shapes: (B,) float64."""
        prompts, continuations = check_pairs(prompts, continuations)
        heads = [self._prompt_ids(p) for p in prompts]
        tails = [self.tokenizer.encode(c) for c in continuations]
        out = np.zeros(len(heads))
        for sl in self._batches(len(heads)):
            seqs = [h + t for h, t in zip(heads[sl], tails[sl])]
            logits, _ = self._logits(seqs)
            logp = torch.log_softmax(logits.double(), dim=-1)
            T = logits.shape[1]
            for j, t in enumerate(tails[sl]):
                if t:  # token at index T-k is predicted by the logits at T-k-1
                    k = len(t)
                    rows = logp[j, T - k - 1 : T - 1]
                    out[sl.start + j] = float(rows.gather(1, torch.tensor(t)[:, None]).sum())
        return out

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """Greedy (temperature 0) or sampled continuations, cut before any stop string."""
        prompts = check_prompts(prompts)
        stop = check_sampling(max_new_tokens, temperature, stop, seed)
        seqs = [self._prompt_ids(p) for p in prompts]
        longest = max(len(s) for s in seqs) + max_new_tokens
        if longest > self.model.max_len:
            raise ValueError(
                f"prompt plus max_new_tokens={max_new_tokens} is {longest} tokens, longer than "
                f"this model's max_len={self.model.max_len}"
            )
        gens = [
            torch.Generator().manual_seed(prompt_seed(seed, p)) if temperature > 0 else None
            for p in prompts
        ]
        new: list[list[int]] = [[] for _ in prompts]
        texts = [""] * len(prompts)
        active = list(range(len(prompts)))
        for _ in range(max_new_tokens):
            if not active:
                break
            still = []
            for sl in self._batches(len(active)):
                rows = active[sl]
                logits, _ = self._logits([seqs[i] + new[i] for i in rows])
                last = logits[:, -1].double()
                for j, i in enumerate(rows):
                    if temperature > 0:
                        probs = torch.softmax(last[j] / temperature, dim=-1)
                        tok = int(torch.multinomial(probs, 1, generator=gens[i]))
                    else:
                        tok = int(last[j].argmax())
                    if tok == EOS:
                        continue
                    new[i].append(tok)
                    texts[i], hit = cut_at_stop(self.tokenizer.decode(new[i]), stop)
                    if not hit:
                        still.append(i)
            active = still
        return texts

    def hidden_states(self, prompts: Sequence[str], layers: Sequence[int]) -> list[np.ndarray]:
        """Residual stream after the chosen blocks, over each prompt's tokens (`<bos>` first).

        Shapes: B arrays (len(layers), T_b, D) float32, T_b = 1 + number of prompt tokens.
        """
        prompts = check_prompts(prompts)
        layers = check_layers(layers, self.num_layers)
        seqs = [self._prompt_ids(p) for p in prompts]
        out: list[np.ndarray] = []
        for sl in self._batches(len(seqs)):
            grabbed: dict[int, torch.Tensor] = {}

            def grab(
                layer: int, h: torch.Tensor, pos: torch.Tensor, grabbed=grabbed
            ) -> torch.Tensor:
                if layer in layers:
                    grabbed[layer] = h
                return h

            self._edits.append(grab)  # after any steering edit, so steered states are seen
            try:
                _, mask = self._logits(seqs[sl])
            finally:
                self._edits.remove(grab)
            stack = torch.stack([grabbed[layer] for layer in layers], dim=1)  # (B, L, T, D)
            for j in range(stack.shape[0]):
                out.append(stack[j][:, mask[j]].float().numpy())
        return out

    @contextlib.contextmanager
    def steer(
        self, vectors: Mapping[int, np.ndarray], positions: Positions = None, scale: float = 1.0
    ) -> Iterator[None]:
        """Add `scale * vectors[layer]` to the output of block `layer` at `positions` (absolute
        positions, `<bos>` = 0) in every forward pass inside the block. Blocks nest and add up."""
        vecs = {
            k: torch.as_tensor(v)
            for k, v in check_vectors(vectors, self.num_layers, self.hidden_size).items()
        }
        if not math.isfinite(scale):
            raise ValueError(f"scale={scale!r} is not allowed: must be finite")

        def add(layer: int, h: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
            if layer not in vecs:
                return h
            sel = torch.as_tensor(position_mask(positions, pos.numpy()))  # (B, T)
            return h + scale * sel[..., None].to(h.dtype) * vecs[layer].to(h.dtype)

        self._edits.insert(0, add)
        try:
            yield
        finally:
            self._edits.remove(add)

    # ------------------------------------------------------------ files

    def save(self, folder: str | Path) -> Path:
        """Write `config.json` (sizes and vocabulary) and `model.pt` (weights) to `folder`."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        m = self.model
        config = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "name": self.name.removeprefix("tiny:"),
            "d_model": self.hidden_size,
            "n_layers": self.num_layers,
            "n_heads": m.blocks[0].n_heads,
            "max_len": m.max_len,
            "vocab": self.tokenizer.vocab[4:],
        }
        (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n")
        torch.save(m.state_dict(), folder / "model.pt")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> TinyLM:
        """Load a model written by `save` (raises naming the folder when it is not one)."""
        folder = Path(folder)
        cfg_path = folder / "config.json"
        if not cfg_path.is_file() or not (folder / "model.pt").is_file():
            raise FileNotFoundError(
                f"{str(folder)!r} is not a tiny LM folder (needs config.json and model.pt)"
            )
        cfg = json.loads(cfg_path.read_text())
        if cfg.get("format") != FORMAT or cfg.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"{str(cfg_path)!r} has format {cfg.get('format')!r} v{cfg.get('version')!r}; "
                f"expected {FORMAT!r} v{FORMAT_VERSION}"
            )
        tok = WordTokenizer(cfg["vocab"])
        with torch_seed(0):  # construction draws an init that the weights then replace
            model = TinyTransformer(
                vocab_size=len(tok),
                d_model=cfg["d_model"],
                n_layers=cfg["n_layers"],
                n_heads=cfg["n_heads"],
                max_len=cfg["max_len"],
            )
        model.load_state_dict(torch.load(folder / "model.pt", weights_only=True))
        return cls(model, tok, name=cfg["name"])


def train_tiny_lm(
    examples: Sequence[tuple[str, str]],
    tokenizer: WordTokenizer,
    *,
    d_model: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    max_len: int = 128,
    epochs: int = 10,
    batch_size: int = 64,
    lr: float = 3e-3,
    weight_decay: float = 0.0,
    loss_on: str = "completion",
    seed: int = 0,
    name: str = "model",
    log: Callable[[int, float], None] | None = None,
) -> TinyLM:
    """Train a `TinyTransformer` on (prompt, completion) pairs with AdamW and cosine decay.

    Args:
        examples: Pairs; the model learns to continue `prompt` with `completion` then `<eos>`.
        tokenizer: The vocabulary.
        d_model, n_layers, n_heads, max_len: Model sizes.
        epochs: Passes over the examples (shuffled each epoch).
        batch_size: Pairs per step.
        lr: Peak learning rate.
        weight_decay: AdamW weight decay.
        loss_on: "completion" (loss on the completion and `<eos>` only) or "all" (every token).
        seed: Seeds the initialisation and the shuffling.
        name: The model's name (`"tiny:<name>"`).
        log: Called as `log(epoch, mean_loss)` after each epoch.

    Returns:
        The trained model as a `TinyLM`.
    """
    if not examples:
        raise ValueError("examples is empty: pass at least one (prompt, completion) pair")
    if loss_on not in ("completion", "all"):
        raise ValueError(f"loss_on={loss_on!r} is not allowed: use 'completion' or 'all'")
    if epochs < 1 or batch_size < 1 or not lr > 0:
        raise ValueError(
            f"epochs={epochs!r}, batch_size={batch_size!r}, lr={lr!r}: must be >= 1, >= 1, > 0"
        )
    seqs, starts = [], []
    for prompt, completion in examples:
        head = [BOS, *tokenizer.encode(prompt)]
        seqs.append(head + tokenizer.encode(completion) + [EOS])
        starts.append(1 if loss_on == "all" else len(head))
    ids, mask = _left_pad(seqs)  # (N, T)
    T = ids.shape[1]
    # targets[:, t] = ids[:, t + 1] where the loss counts, else -100 (ignored)
    first = torch.tensor([T - len(s) + st for s, st in zip(seqs, starts)])  # first target index
    targets = torch.full_like(ids, -100)
    targets[:, :-1] = ids[:, 1:]
    keep = torch.arange(T)[None, :] >= (first[:, None] - 1)
    targets[~keep] = -100
    return fit_tiny_lm(
        ids,
        mask,
        targets,
        tokenizer,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        max_len=max_len,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        weight_decay=weight_decay,
        seed=seed,
        name=name,
        log=log,
    )


def fit_tiny_lm(
    ids: torch.Tensor,
    mask: torch.Tensor,
    targets: torch.Tensor,
    tokenizer: WordTokenizer,
    *,
    d_model: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    max_len: int = 128,
    epochs: int = 10,
    batch_size: int = 64,
    lr: float = 3e-3,
    weight_decay: float = 0.0,
    seed: int = 0,
    name: str = "model",
    log: Callable[[int, float], None] | None = None,
) -> TinyLM:
    """Train a `TinyTransformer` on token tensors with AdamW and cosine decay: the loop of
    `train_tiny_lm`, for callers that choose the tokens the loss counts themselves.

    Args:
        ids: (N, T) long, left-padded sequences, each starting with `<bos>`.
        mask: (N, T) bool, False on padding.
        targets: (N, T) long, the token to predict after `ids[:, t]` where the loss counts
            there, else -100; the loss is the mean over the counted tokens of a batch.
        tokenizer, d_model, n_layers, n_heads, max_len, epochs, batch_size, lr, weight_decay,
            seed, name: As in `train_tiny_lm`.
        log: Called as `log(epoch, mean over rows of their batch's loss)` after each epoch.

    Returns:
        The trained model as a `TinyLM`.
    """
    if ids.ndim != 2 or ids.shape != mask.shape or ids.shape != targets.shape or not len(ids):
        raise ValueError(
            f"ids, mask, targets: shapes {tuple(ids.shape)}, {tuple(mask.shape)}, "
            f"{tuple(targets.shape)}: must be the same (N, T) with N >= 1"
        )
    if epochs < 1 or batch_size < 1 or not lr > 0:
        raise ValueError(
            f"epochs={epochs!r}, batch_size={batch_size!r}, lr={lr!r}: must be >= 1, >= 1, > 0"
        )
    with torch_seed(seed):
        model = TinyTransformer(
            vocab_size=len(tokenizer),
            d_model=d_model,
            n_layers=n_layers,
            n_heads=n_heads,
            max_len=max_len,
        )
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    n = ids.shape[0]
    steps = epochs * math.ceil(n / batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps))
    )
    rng = np.random.default_rng(seed)
    model.train()
    for epoch in range(epochs):
        order = torch.as_tensor(rng.permutation(n))
        total, count = 0.0, 0
        for i in range(0, n, batch_size):
            b = order[i : i + batch_size]
            width = int(mask[b].sum(1).max())  # drop columns that are padding in every row
            logits = model(ids[b, -width:], mask[b, -width:])
            loss = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets[b, -width:].reshape(-1)
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(b)
            count += len(b)
        if log is not None:
            log(epoch + 1, total / count)
    model.eval()
    return TinyLM(model, tokenizer, name=name)
