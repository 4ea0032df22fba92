"""A small CLIP-style dual encoder, its contrastive pretraining and its policy view.

The paper starts from OpenAI CLIP ViT-B/32; no CLIP weights exist offline, so a tiny dual
encoder is pretrained from scratch on `data.pretraining_set` (icons with captions, some
carrying their own class word, so the model learns to read and can be fooled by text).

- `TinyCLIP`: a 4-block CNN image tower and a bag-of-words text tower (word embeddings,
  mean over non-pad words, a 2-layer MLP), both projected to `dim` and L2-normalised, and a
  learned temperature `logit_scale` (CLIP's init log(1/0.07), clamped at log(100)).
- `clip_loss`: the symmetric InfoNCE of CLIP; identical captions in a batch count as positives.
- `pretrain`: Adam + cosine schedule over minibatches, seeded by a torch.Generator.
- `class_logprobs`: the policy view of the paper (Sec. 3), pi_theta(y | x) =
  softmax_y(s * cos(f(x), g(t_y))) over the class prompts "a photo of a {class}".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.contrastive_po.data import (
    VOCAB,
    CaptionedImages,
    all_captions,
    class_prompt,
    tokenize,
)

LOGIT_SCALE_MAX = math.log(100.0)
"""CLIP clamps its learned log temperature at log(100)."""


class TinyCLIP(nn.Module):
    """Image CNN + bag-of-words text encoder with a shared embedding space.

    Args:
        dim: Embedding dimension of both towers.
        width: Channels of the first conv block (doubled in the next two).
        vocab_size: Number of word ids (`len(VOCAB)`).
        word_dim: Word embedding size of the text tower.
        text_tower: "bow" (word embeddings, mean over words, a residual MLP; trained from
            scratch) or "minilm": the frozen all-MiniLM-L6-v2 sentence embedding (384-d) of
            each caption, looked up in `caption_table`, mapped to `word_dim` by a trainable
            linear layer under the same residual MLP (the optional arm with a real pretrained
            text tower).
        caption_table: For "minilm": the (len(all_captions()), 384) embeddings of
            `data.all_captions()`; None computes them with `minilm.embed` (loads the model).

    Shapes:
        encode_image: (B, 3, S, S) float in [0, 1] -> (B, dim), unit norm.
        encode_text: (T, L) int64 word ids (0 pads) -> (T, dim), unit norm.
        forward: images (B, 3, S, S), tokens (T, L) -> logits (B, T) = s * cos.
    """

    def __init__(
        self,
        *,
        dim: int = 64,
        width: int = 16,
        vocab_size: int = len(VOCAB),
        word_dim: int = 64,
        text_tower: str = "bow",
        caption_table: np.ndarray | torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        dim = check_int("dim", dim, 2)
        width = check_int("width", width, 1)
        vocab_size = check_int("vocab_size", vocab_size, 2)
        word_dim = check_int("word_dim", word_dim, 1)
        self.text_tower = check_choice("text_tower", text_tower, ("bow", "minilm"))

        def block(cin: int, cout: int) -> nn.Sequential:
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1),
                nn.GroupNorm(min(4, cout), cout),
                nn.ReLU(),
                nn.MaxPool2d(2),
            )

        # DEVIATION: the paper uses CLIP ViT-B/32; a 4-block CNN is the laptop-scale stand-in.
        # GroupNorm (not BatchNorm): no train/eval difference, so the policy equals its frozen
        # reference exactly at the start of fine-tuning, as with CLIP's LayerNorm.
        self.image_tower = nn.Sequential(
            block(3, width),
            block(width, 2 * width),
            block(2 * width, 4 * width),
            block(4 * width, 4 * width),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.image_proj = nn.Linear(4 * width, dim)
        if text_tower == "minilm":
            captions = all_captions()
            if caption_table is None:
                from iclr25.papers.contrastive_po.minilm import embed

                caption_table = embed(captions)
            table = torch.as_tensor(np.asarray(caption_table), dtype=torch.float32)
            if table.ndim != 2 or table.shape[0] != len(captions):
                raise ValueError(
                    f"caption_table has shape {tuple(table.shape)}: needs ({len(captions)}, d), "
                    "one row per data.all_captions() entry"
                )
            self.register_buffer("caption_table", table)
            keys = tokenize(list(captions))
            self._caption_row = {tuple(k.tolist()): i for i, k in enumerate(keys)}
            self.text_in = nn.Linear(table.shape[1], word_dim)
        else:
            self.word_emb = nn.Embedding(vocab_size, word_dim, padding_idx=0)
        self.text_mlp = nn.Sequential(
            nn.Linear(word_dim, 2 * word_dim), nn.ReLU(), nn.Linear(2 * word_dim, word_dim)
        )
        self.text_proj = nn.Linear(word_dim, dim)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        self.dim = dim

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        """Unit-norm image embeddings (B, dim)."""
        if images.ndim != 4 or images.shape[1] != 3:
            raise ValueError(f"images must have shape (B, 3, S, S), got {tuple(images.shape)}")
        return F.normalize(self.image_proj(self.image_tower(images)), dim=-1)

    def encode_text(self, tokens: torch.Tensor) -> torch.Tensor:
        """Unit-norm text embeddings (T, dim) from padded word ids (T, L)."""
        if tokens.ndim != 2:
            raise ValueError(f"tokens must have shape (T, L), got {tuple(tokens.shape)}")
        if self.text_tower == "minilm":
            try:
                rows = [self._caption_row[tuple(t)] for t in tokens.tolist()]
            except KeyError as err:
                raise ValueError(
                    f"a caption with word ids {list(err.args[0])} is not in data.all_captions(): "
                    "the frozen MiniLM tower only embeds those"
                ) from None
            pooled = self.text_in(self.caption_table[torch.tensor(rows, dtype=torch.long)])
        else:
            mask = (tokens != 0).float().unsqueeze(-1)
            pooled = (self.word_emb(tokens) * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return F.normalize(self.text_proj(pooled + self.text_mlp(pooled)), dim=-1)

    def scale(self) -> torch.Tensor:
        """The temperature s = exp(logit_scale), clamped at 100."""
        return self.logit_scale.clamp(max=LOGIT_SCALE_MAX).exp()

    def forward(self, images: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Logits s * cos(f(x_i), g(t_j)), shape (B, T)."""
        return self.scale() * self.encode_image(images) @ self.encode_text(tokens).T


def prompt_tokens(classes) -> torch.Tensor:
    """Word ids of the class prompts "a photo of a {class}" for the class ids `classes`, (K, L)."""
    return torch.from_numpy(tokenize([class_prompt(int(c)) for c in classes]))


def class_logprobs(model: nn.Module, images: torch.Tensor, prompts: torch.Tensor) -> torch.Tensor:
    """The policy view: log pi(y | x) over the K class prompts (paper Sec. 3).

    pi_theta(y | x) = softmax_y(s * cos(f_theta(x), g_theta(t_y))).

    Shapes:
        images (B, 3, S, S), prompts (K, L) -> (B, K) log-probabilities.
    """
    return F.log_softmax(model(images, prompts), dim=-1)


def clip_loss(logits: torch.Tensor, tokens: torch.Tensor | None = None) -> torch.Tensor:
    """Symmetric InfoNCE of CLIP over a batch of B image-caption pairs.

    The image-to-text and text-to-image cross-entropies are averaged. With `tokens`, pairs whose
    captions are identical are all positives (uniform soft targets over them).
    # DEVIATION: CLIP uses the diagonal only; with a vocabulary of about 35 words, identical
    # captions are common in a batch and would otherwise be pushed apart.

    Shapes:
        logits (B, B), tokens (B, L) or None -> scalar.
    """
    b = logits.shape[0]
    if logits.shape != (b, b):
        raise ValueError(f"logits must be square (B, B), got {tuple(logits.shape)}")
    if tokens is None:
        target = torch.eye(b, dtype=logits.dtype)
    else:
        same = (tokens.unsqueeze(1) == tokens.unsqueeze(0)).all(-1).to(logits.dtype)
        target = same / same.sum(1, keepdim=True)
    loss_i = -(target * F.log_softmax(logits, dim=1)).sum(1).mean()
    loss_t = -(target.T * F.log_softmax(logits.T, dim=1)).sum(1).mean()
    return 0.5 * (loss_i + loss_t)


@dataclass(frozen=True)
class PretrainLog:
    """Losses of a pretraining run (one per step) and the final temperature."""

    losses: tuple[float, ...]
    scale: float


def pretrain(
    model: TinyCLIP,
    data: CaptionedImages,
    *,
    steps: int,
    batch_size: int = 128,
    lr: float = 2e-3,
    weight_decay: float = 1e-4,
    generator: torch.Generator,
) -> PretrainLog:
    """Contrastive pretraining of `model` in place on `data` (symmetric InfoNCE, `clip_loss`).

    AdamW with a cosine schedule over `steps`; minibatches are drawn without replacement per
    epoch from `generator`.
    # DEVIATION: CLIP's recipe (large batches, warm-up, AdamW betas 0.9/0.98) is scaled down.

    Returns:
        The per-step losses and the final temperature s.
    """
    steps = check_int("steps", steps, 1)
    batch_size = check_int("batch_size", batch_size, 2)
    lr = check_float("lr", lr, 0.0, low_open=True)
    weight_decay = check_float("weight_decay", weight_decay, 0.0)
    n = len(data.labels)
    if batch_size > n:
        raise ValueError(f"batch_size={batch_size} is not allowed: must be <= len(data)={n}")
    from iclr25.papers.contrastive_po.data import to_tensor

    images = to_tensor(data.images)
    tokens = torch.from_numpy(np.asarray(data.tokens))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    losses = []
    perm = torch.randperm(n, generator=generator)
    pos = 0
    for _ in range(steps):
        if pos + batch_size > n:
            perm = torch.randperm(n, generator=generator)
            pos = 0
        idx = perm[pos : pos + batch_size]
        pos += batch_size
        logits = model(images[idx], tokens[idx])
        loss = clip_loss(logits, tokens[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return PretrainLog(losses=tuple(losses), scale=float(model.scale().detach()))
