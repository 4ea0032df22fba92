"""The query format, the tokenizer and the official rules that turn examples into a query.

A query with k examples is, as token ids (official layout, FlagEmbedding's ICL data set and
inference code):

    <s> ex_1 \\n\\n ... ex_k \\n\\n <instruct>{instruction}\\n<query>{text} \\n<response> </s>
    ex_j = <instruct>{instruction}\\n<query>{q_j} \\n<response> {d_j}

- Training (`build_train_query`): the examples come from the same batch
  (`sample_example_ids`: k drawn by a policy, `POLICIES`, the query's own pair never used).
  Each example's formatted query is head-truncated to `example_query_max_len` tokens (the
  instruction counts) and its response to `example_passage_max_len`. Examples are added one at
  a time while the prefix, counted with BOS and EOS, stays within `query_max_len - reserve`;
  the first that does not fit ends the loop (a later, shorter one is not tried). Then prefix +
  formatted query is head-truncated to `query_max_len - 1 - len(suffix + EOS)` tokens (the
  examples survive, the query text's tail is cut), and the suffix and EOS are appended.
- Inference (`build_eval_query`): the formatted query alone is truncated to the same length;
  the fixed examples are put in front untruncated and unbudgeted, each followed by `\\n\\n`.
- Passages (`build_passage`): raw text between BOS and EOS, truncated to `passage_max_len`;
  the symmetric (STS, clustering) variant is formatted like a query, with the suffix.

Shapes: token-id lists; L <= `query_max_len` for training queries, L <= `passage_max_len` for
passages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_choice, check_int
from iclr25.papers.icl_embedder.data import INSTRUCTION_WORDS, World

try:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError("icl_embedder needs transformers: pip install 'iclr25[embedder]'") from None

# DEVIATION: the official code decodes each truncated piece back to text and tokenizes the
# joined string again (with SentencePiece the round trip can drift, and the collator may then
# cut into the suffix); here everything stays in token ids, and `build_tokenizer`'s word-level
# tokenizer round-trips exactly, so the official truncation arithmetic holds to the token.
# DEVIATION: BOS and EOS are added and counted explicitly (`bos_id`, `eos_id`), where the
# official code relies on a tokenizer loaded with `add_eos_token=True`; the counts are the same,
# and the same code serves tokenizers that append nothing.

SPECIALS: tuple[str, ...] = ("<pad>", "<unk>", "<s>", "</s>")
"""pad, unk, BOS, EOS: ids 0, 1, 2, 3 of `build_tokenizer`'s tokenizers."""
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
MARKUP: tuple[str, ...] = ("<instruct>", "<query>", "<response>")
"""The three special tokens the paper adds (ids 4, 5, 6)."""
NEWLINES: tuple[str, ...] = ("\n", "\n\n")
"""Newline tokens (ids 7, 8); spaces are not tokens."""


def build_tokenizer(world: World, *, padding_side: str = "left") -> PreTrainedTokenizerFast:
    """A word-level tokenizer over the world's words, the instruction words and the markup.

    Ids are `SPECIALS`, `MARKUP`, `NEWLINES`, `INSTRUCTION_WORDS`, the attribute names, then the
    value words (`world.words`), so the same world gives the same ids. Text splits into `\\n\\n`,
    `\\n` and space-separated words (other words map to `<unk>`); nothing is added by `encode`.
    `decode` joins words with single spaces and puts none next to markup or newlines (except
    between two newline tokens), so `encode(decode(ids)) == ids` for every id list and
    `decode(encode(s)) == s` for the strings the format builds.

    Args:
        world: Whose attribute names and value words form the vocabulary.
        padding_side: "left" (official) or "right".
    """
    check_choice("padding_side", padding_side, ("left", "right"))
    words = (*SPECIALS, *MARKUP, *NEWLINES, *INSTRUCTION_WORDS, *world.attributes, *world.words)
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex(r"\n\n|\n|\S+"), behavior="removed", invert=True)
    tk.decoder = decoders.Sequence(
        [
            decoders.WordPiece(prefix="\x00", cleanup=False),  # every token joined by a space
            decoders.Fuse(),
            decoders.Replace(Regex(r"(?<=>) | (?=<)"), ""),  # none beside a special token
            decoders.Replace(Regex(r"(?<=[^\n]) (?=\n)|(?<=\n) (?=[^\n])"), ""),  # nor newline
        ]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        additional_special_tokens=list(MARKUP),
        padding_side=padding_side,
        clean_up_tokenization_spaces=False,
    )


@dataclass(frozen=True)
class QueryFormat:
    """The query format and length limits (official names; defaults are ours).

    | Field | Official | Ours |
    |---|---|---|
    | instruction_format | "<instruct>{}\\n<query>{}" | same |
    | suffix | "\\n<response>" | same |
    | example_sep | "\\n\\n" | same |
    | query_max_len | 2048 | 160 |
    | reserve | 512 | 32 |
    | example_query_max_len | 256 | 16 |
    | example_passage_max_len | 256 | 12 |
    | passage_max_len | 512 | 16 |

    Attributes:
        instruction_format: Formats (instruction, text); exactly two `{}`.
        suffix: Appended after the formatted query, and between an example's query and response.
        example_sep: Follows every example.
        query_max_len: Longest training query in tokens, BOS and EOS included (>= 3).
        reserve: Tokens kept for the query itself when budgeting examples (0 to
            `query_max_len`; official 512 hard-coded; `reserve == query_max_len` adds none).
        example_query_max_len: Tokens kept of an example's formatted query (>= 1).
        example_passage_max_len: Tokens kept of an example's response (>= 1).
        passage_max_len: Longest passage in tokens, BOS and EOS included (>= 3).

    Raises:
        TypeError, ValueError: a field of the wrong kind or out of range (our addition: the
            official code would compute negative lengths). Limits that depend on the tokenizer
            (room for the suffix) are checked where a query is built.
    """

    # DEVIATION: lengths scaled, formulas kept. At ours 5 examples of the attribute world
    # (24 tokens each) fit the budget; at a faithful 1/16 scaling (128/32) only 3 would, and
    # "always 5" would silently be "always 3".
    instruction_format: str = "<instruct>{}\n<query>{}"
    suffix: str = "\n<response>"
    example_sep: str = "\n\n"
    query_max_len: int = 160
    reserve: int = 32
    example_query_max_len: int = 16
    example_passage_max_len: int = 12
    passage_max_len: int = 16

    def __post_init__(self) -> None:
        for name in ("instruction_format", "suffix", "example_sep"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name}={getattr(self, name)!r} is not allowed: must be a str")
        fmt = self.instruction_format
        try:
            ok = fmt.count("{}") == 2 and fmt.format("", "") == fmt.replace("{}", "")
        except (IndexError, KeyError, ValueError):
            ok = False
        if not ok:
            raise ValueError(
                f"instruction_format={fmt!r} is not allowed: must hold exactly two '{{}}' "
                "(instruction, then text) and no other braces"
            )
        check_int("query_max_len", self.query_max_len, 3)
        check_int("reserve", self.reserve, 0, self.query_max_len)
        check_int("example_query_max_len", self.example_query_max_len, 1)
        check_int("example_passage_max_len", self.example_passage_max_len, 1)
        check_int("passage_max_len", self.passage_max_len, 3)


OFFICIAL_FORMAT = QueryFormat(
    query_max_len=2048,
    reserve=512,
    example_query_max_len=256,
    example_passage_max_len=256,
    passage_max_len=512,
)
"""The research README's training command (after the #1158 fix: 2048, 256, 256)."""

_DEFAULT = QueryFormat()


def _check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}={value!r:.60} is not allowed: must be a str")
    return value


def format_query(instruction: str, text: str, *, fmt: QueryFormat = _DEFAULT) -> str:
    """`fmt.instruction_format` filled with (instruction, text), e.g.
    `"<instruct>match colour\\n<query>red dog"`."""
    return fmt.instruction_format.format(
        _check_str("instruction", instruction), _check_str("text", text)
    )


def format_example(
    instruction: str, query: str, response: str, *, fmt: QueryFormat = _DEFAULT
) -> str:
    """One example: the formatted query, the suffix, the response, e.g.
    `"<instruct>match colour\\n<query>red dog\\n<response>red cat"` (no separator)."""
    return format_query(instruction, query, fmt=fmt) + fmt.suffix + _check_str("response", response)


def sample_example_ids(i: int, n_pairs: int, k: int, rng: np.random.Generator) -> list[int]:
    """The official draw of query `i`'s example pairs from a batch of `n_pairs`.

    Draw min(k + 1, n_pairs) distinct pair indices without replacement, drop `i` if drawn, keep
    the first k in the order drawn: k examples when n_pairs > k, else n_pairs - 1; never `i`.
    (The paper-time code drew k + 1 with no min and raised on batches under k + 1 rows.)

    Args:
        i: The query's own row, in [0, n_pairs).
        n_pairs: Rows of the batch (>= 1).
        k: Examples wanted (>= 0).
        rng: The generator.

    Returns:
        Distinct pair indices, in draw order.
    """
    n_pairs = check_int("n_pairs", n_pairs, 1)
    i = check_int("i", i, 0, n_pairs - 1)
    k = check_int("k", k, 0)
    if k == 0:
        return []
    # DEVIATION: an explicit numpy generator instead of Python's global `random`.
    drawn = rng.choice(n_pairs, size=min(k + 1, n_pairs), replace=False)
    return [int(j) for j in drawn if j != i][:k]


POLICIES: dict[str, tuple[int, ...]] = {
    "random": (0, 1, 2, 3, 4, 5),
    "none": (0,),
    "always5": (5,),
}
"""How many examples a training query gets, drawn uniformly from the tuple: the paper's
U{0..5} ("random"), instruction-only training ("none") and always five ("always5")."""


def draw_k(policy: str, rng: np.random.Generator) -> int:
    """A number of examples drawn uniformly from `POLICIES[policy]` (one draw from `rng`)."""
    check_choice("policy", policy, tuple(POLICIES))
    ks = POLICIES[policy]
    return ks[int(rng.integers(len(ks)))]


def _ids(tokenizer, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


def _bos_eos(tokenizer, bos_id: int | None, eos_id: int | None) -> tuple[int, int]:
    out = []
    for name, given, attr in (
        ("bos_id", bos_id, "bos_token_id"),
        ("eos_id", eos_id, "eos_token_id"),
    ):
        v = getattr(tokenizer, attr, None) if given is None else given
        if v is None:
            raise ValueError(f"{name}=None is not allowed: the tokenizer has no {attr}; pass it")
        out.append(check_int(name, v, 0))
    return out[0], out[1]


def _room(fmt: QueryFormat, field: str, suffix: list[int]) -> int:
    """Tokens left for the body once BOS, the suffix and EOS are counted (checked >= 1)."""
    max_len = getattr(fmt, field)
    room = max_len - 1 - len(suffix) - 1
    if room < 1:
        raise ValueError(
            f"{field}={max_len} is not allowed with this tokenizer: must be >= "
            f"{len(suffix) + 3} (BOS, one token, the suffix's {len(suffix)} tokens and EOS)"
        )
    return room


def build_train_query(
    tokenizer,
    text: str,
    instruction: str,
    pool: Sequence[tuple[str, str]],
    example_ids: Sequence[int],
    *,
    fmt: QueryFormat = _DEFAULT,
    bos_id: int | None = None,
    eos_id: int | None = None,
) -> list[int]:
    """Token ids of a training query with the official truncation and length budget.

    Args:
        tokenizer: Anything with `encode(text, add_special_tokens=False) -> list[int]`.
        text: The query text.
        instruction: The task instruction (the examples' too: one per batch).
        pool: The batch's (query, response) pairs; pair index = row index.
        example_ids: Pairs to use, in order (from `sample_example_ids`).
        fmt: The format and limits.
        bos_id, eos_id: Added ids; default the tokenizer's `bos_token_id` / `eos_token_id`.

    Returns:
        (L,) ids, BOS first and EOS last, L <= `fmt.query_max_len`.
    """
    bos, eos = _bos_eos(tokenizer, bos_id, eos_id)
    suffix, sep = _ids(tokenizer, fmt.suffix), _ids(tokenizer, fmt.example_sep)
    room = _room(fmt, "query_max_len", suffix)
    query = _ids(tokenizer, format_query(instruction, text, fmt=fmt))
    budget = fmt.query_max_len - fmt.reserve
    prefix: list[int] = []
    for n, j in enumerate(example_ids):
        j = check_int(f"example_ids[{n}]", j, 0, len(pool) - 1)
        q_j, d_j = pool[j]
        example = (
            _ids(tokenizer, format_query(instruction, q_j, fmt=fmt))[: fmt.example_query_max_len]
            + suffix
            + _ids(tokenizer, _check_str("response", d_j))[: fmt.example_passage_max_len]
        )
        if len(prefix) + len(example) + len(sep) + 2 > budget:  # + 2: BOS and EOS counted
            break  # official: the first example that does not fit ends the loop
        prefix += example + sep
    return [bos, *(prefix + query)[:room], *suffix, eos]


def build_eval_query(
    tokenizer,
    text: str,
    instruction: str,
    examples: Sequence[tuple[str, str] | tuple[str, str, str]] = (),
    *,
    fmt: QueryFormat = _DEFAULT,
    bos_id: int | None = None,
    eos_id: int | None = None,
) -> list[int]:
    """Token ids of an inference query with fixed examples (official inference rules).

    The formatted query alone is head-truncated to `query_max_len - 1 - len(suffix + EOS)`
    tokens; the examples go in front untruncated and unbudgeted, each followed by
    `example_sep`, so the result may be longer than `query_max_len`.

    Args:
        tokenizer: As `build_train_query`.
        text: The query text.
        instruction: The task instruction.
        examples: (query, response) pairs formatted with `instruction`, or (instruction,
            query, response) triples with their own (the official dicts' "instruct").
        fmt, bos_id, eos_id: As `build_train_query`.

    Returns:
        (L,) ids, BOS first and EOS last.
    """
    bos, eos = _bos_eos(tokenizer, bos_id, eos_id)
    suffix, sep = _ids(tokenizer, fmt.suffix), _ids(tokenizer, fmt.example_sep)
    # DEVIATION: one `query_max_len` for both paths; the official inference has its own
    # `query_max_length` (default 512) beside training's 2048. Nothing binds at our lengths.
    room = _room(fmt, "query_max_len", suffix)
    prefix: list[int] = []
    for n, ex in enumerate(examples):
        if not isinstance(ex, tuple | list) or len(ex) not in (2, 3):
            raise ValueError(
                f"examples[{n}]={ex!r:.60} is not allowed: must be (query, response) or "
                "(instruction, query, response)"
            )
        inst, q_j, d_j = (instruction, *ex) if len(ex) == 2 else ex
        prefix += _ids(tokenizer, format_example(inst, q_j, d_j, fmt=fmt)) + sep
    query = _ids(tokenizer, format_query(instruction, text, fmt=fmt))[:room]
    return [bos, *prefix, *query, *suffix, eos]


def build_passage(
    tokenizer,
    text: str,
    *,
    fmt: QueryFormat = _DEFAULT,
    instruction: str | None = None,
    bos_id: int | None = None,
    eos_id: int | None = None,
) -> list[int]:
    """Token ids of a passage, at most `fmt.passage_max_len` long.

    Raw (retrieval and classification, `instruction=None`): BOS, the text's first
    `passage_max_len - 2` tokens, EOS. Symmetric (STS, clustering: an instruction given): BOS,
    the formatted passage head-truncated to `passage_max_len - 1 - len(suffix + EOS)` tokens,
    the suffix, EOS; no examples.

    Args:
        tokenizer, fmt, bos_id, eos_id: As `build_train_query`.
        text: The passage.
        instruction: None for a raw passage, else the symmetric task's instruction.

    Returns:
        (L,) ids, BOS first and EOS last.
    """
    bos, eos = _bos_eos(tokenizer, bos_id, eos_id)
    if instruction is None:
        return [bos, *_ids(tokenizer, _check_str("text", text))[: fmt.passage_max_len - 2], eos]
    suffix = _ids(tokenizer, fmt.suffix)
    room = _room(fmt, "passage_max_len", suffix)
    body = _ids(tokenizer, format_query(instruction, text, fmt=fmt))[:room]
    return [bos, *body, *suffix, eos]
