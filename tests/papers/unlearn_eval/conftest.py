"""Shared small fixtures: a 20-author corpus, its tokenizer, and lookup "models" whose greedy
behaviour is known exactly."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from iclr25.papers.unlearn_eval import data

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def corpus():
    return data.make_corpus(seed=3, n_authors=20, n_facts=5, n_perturbed=3)


@pytest.fixture(scope="session")
def tokenizer(corpus):
    transformers = pytest.importorskip("transformers")
    # import the model classes here, once (about 3 s), not inside the first test that builds one
    _ = transformers.GPT2LMHeadModel, transformers.LlamaForCausalLM
    from iclr25.papers.unlearn_eval.models import build_tokenizer

    return build_tokenizer(corpus.texts())


class LookupLM(torch.nn.Module):
    """A causal "model" that knows token sequences by heart.

    At position t of a row it predicts seq[t + 1] for the first stored sequence seq whose first
    t + 1 tokens equal the row's, provided t + 1 is in `known(seq_index, t + 1)`; otherwise
    `wrong`. Logits are one-hot-ish (10 on the prediction), so argmax, NLL and greedy decoding
    are all determined.
    """

    def __init__(self, seqs, vocab_size, known=lambda i, m: True, wrong=1, eos=None):
        super().__init__()
        self.seqs = [list(s) for s in seqs]
        self.V, self.known, self.wrong, self.eos = vocab_size, known, wrong, eos
        self.dummy = torch.nn.Parameter(torch.zeros(()))

    def predict(self, row):
        for i, s in enumerate(self.seqs):
            if len(row) < len(s) and s[: len(row)] == row:
                return s[len(row)] if self.known(i, len(row)) else self.wrong
            if self.eos is not None and s == row:
                return self.eos
        return self.wrong

    def forward(self, input_ids, **_):
        B, T = input_ids.shape
        logits = torch.zeros(B, T, self.V)
        for b in range(B):
            row = input_ids[b].tolist()
            for t in range(T):
                logits[b, t, self.predict(row[: t + 1])] = 10.0
        return SimpleNamespace(logits=logits + 0 * self.dummy)


@pytest.fixture
def lookup_lm():
    return LookupLM
