"""A word-level tokenizer built in code (no files, no downloads) for the `tiny` backend.

Text is split into words, single punctuation marks and newlines; spaces are not tokens. Words
outside the vocabulary map to `<unk>`. Decoding joins words with single spaces (no space
before punctuation or around newlines), so `decode(encode(s))` normalises whitespace.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")
PAD, UNK, BOS, EOS = range(4)
_SPLIT = re.compile(r"\n|[^\W_]+|\S")


def split_words(text: str) -> list[str]:
    """Words, punctuation marks and newlines of `text`, in order."""
    return _SPLIT.findall(text)


class WordTokenizer:
    """Word-level vocabulary with the special tokens `<pad> <unk> <bos> <eos>` first.

    Args:
        words: Vocabulary words (specials are added in front; duplicates are an error).
    """

    def __init__(self, words: Sequence[str]) -> None:
        words = list(words)
        clash = [w for w in words if w in SPECIALS]
        if clash:
            raise ValueError(f"words {clash} clash with the special tokens {SPECIALS}")
        if len(set(words)) != len(words):
            dup = sorted(w for w, c in Counter(words).items() if c > 1)
            raise ValueError(f"duplicate vocabulary words: {dup[:10]}")
        bad = [w for w in words if split_words(w) != [w]]
        if bad:
            raise ValueError(f"vocabulary entries {bad[:5]} are not single tokens")
        self.vocab: list[str] = [*SPECIALS, *words]
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.vocab)}

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 1) -> WordTokenizer:
        """Vocabulary of every token seen at least `min_count` times (sorted, deterministic)."""
        if min_count < 1:
            raise ValueError(f"min_count={min_count!r} is not allowed: must be >= 1")
        counts = Counter(w for t in texts for w in split_words(t))
        return cls(sorted(w for w, c in counts.items() if c >= min_count and w not in SPECIALS))

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` (unknown words become `<unk>`)."""
        return [self.index.get(w, UNK) for w in split_words(text)]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of `ids`; special tokens other than `<unk>` are dropped."""
        out = ""
        for i in ids:
            w = self.vocab[int(i)]
            if int(i) in (PAD, BOS, EOS):
                continue
            if not out or w == "\n" or out.endswith("\n") or not (w[0].isalnum() or w == "<unk>"):
                out += w
            else:
                out += " " + w
        return out
