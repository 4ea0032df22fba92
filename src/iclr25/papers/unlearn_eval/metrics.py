"""The candidate unlearning metrics of the paper (§4): PPL, ROUGE-L, EM, ES and the truth ratio.

Wang, Han, Yang, Zhu, Liu, Sugiyama. *Towards Effective Evaluations and Comparisons for LLM
Unlearning Methods.* ICLR 2025 (arXiv 2406.09179). Official code:
tmlr-group/Unlearning-with-Control (`evaluation_everything.py` computes ES).

Every metric is per item (higher = more knowledge, except perplexity) on a causal LM with a
Hugging Face-style interface, `model(input_ids).logits` (B, T, V), and a tokenizer with
`encode(text, add_special_tokens=True)` / `decode(ids, skip_special_tokens=True)`:

- perplexity: exp of the mean NLL of the answer tokens given the question;
- ROUGE-L recall of the greedy answer against the true one (LCS of words);
- exact memorisation (EM): the share of answer tokens that the teacher-forced argmax predicts;
- extraction strength (ES): with l the token length of the question alone and r that of the
  whole QA string, m the shortest prefix of the QA string from which greedy decoding
  reproduces the rest,

      ES = 1 - (m - l) / (r - l),

  found by the official bisection (`bisect_prefix`), which assumes that a longer prefix never
  stops reproducing the rest; `es_bisection_check` measures that assumption by a linear scan;
- truth ratio (TOFU): R = P(perturbed | q) / P(paraphrased | q), per-token normalised.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from iclr25.core.checks import check_choice, check_int
from iclr25.papers.unlearn_eval.models import (
    EOS_ID,
    PAD_ID,
    collate,
    encode_qa,
    format_qa,
    greedy_complete,
    nll_from_logits,
)

# ---------------------------------------------------------------------------------------------
# ROUGE-L


def rouge_tokens(text: str) -> list[str]:
    """Words as ROUGE scores them: lower case, runs of letters and digits (punctuation dropped).

    A small LCS-based ROUGE-L written here instead of the rouge-score package.
    """
    # DEVIATION: rouge-score's default tokenizer without its Porter stemmer (TOFU turns the
    # stemmer on); our synthetic words have no inflections to stem.
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).split()


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence of two sequences (O(len(a) len(b)))."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@dataclass(frozen=True)
class RougeL:
    """ROUGE-L of a candidate against a reference.

    Attributes:
        precision: LCS / candidate length.
        recall: LCS / reference length (TOFU's "ROUGE").
        fmeasure: Harmonic mean of the two (0 when both are 0).
    """

    precision: float
    recall: float
    fmeasure: float


def rouge_l(reference: str, candidate: str) -> RougeL:
    """ROUGE-L (Lin 2004) between two strings, on `rouge_tokens`; 0 for an empty side."""
    ref, cand = rouge_tokens(reference), rouge_tokens(candidate)
    lcs = lcs_length(ref, cand)
    p = lcs / len(cand) if cand else 0.0
    r = lcs / len(ref) if ref else 0.0
    return RougeL(p, r, 2 * p * r / (p + r) if p + r > 0 else 0.0)


# ---------------------------------------------------------------------------------------------
# Teacher-forced metrics


def _check_pairs(questions: Sequence[str], *others: Sequence) -> None:
    for o in others:
        if len(o) != len(questions):
            raise ValueError(
                f"need one entry per question: {len(questions)} questions, {len(o)} entries"
            )
    if not questions:
        raise ValueError("need at least one question")
    for s in questions:
        if not isinstance(s, str):
            raise TypeError(f"questions must be strings, got {type(s).__name__}")


@torch.no_grad()
def _answer_token_stats(model, tokenizer, questions, answers, batch_size: int):
    """Per item: the answer tokens' NLLs (sum), their count, and the argmax hits."""
    # DEVIATION: the answer's tokens include the EOS that ends it (TOFU's labels do too); the
    # notes leave it open.
    enc = encode_qa(tokenizer, questions, answers, eos=True)
    nll, count, hits = [], [], []
    for s in range(0, len(enc), batch_size):
        x, target = collate(enc, range(s, min(s + batch_size, len(enc))))
        logits = model(x).logits[:, :-1]  # (B, T-1, V)
        tok = nll_from_logits(logits, x, target)  # (B, T-1)
        hit = (logits.argmax(-1) == x[:, 1:]) & target
        nll.append(tok.sum(1))
        count.append(target.sum(1))
        hits.append(hit.sum(1))
    return (
        torch.cat(nll).double().numpy(),
        torch.cat(count).double().numpy(),
        torch.cat(hits).double().numpy(),
    )


def perplexity(model, tokenizer, questions, answers, batch_size: int = 64) -> np.ndarray:
    """Per item exp(mean NLL of the answer tokens | question). Shapes: N strings -> (N,).

    Raises:
        ValueError: mismatched or empty inputs.
    """
    _check_pairs(questions, answers)
    batch_size = check_int("batch_size", batch_size, 1)
    nll, count, _ = _answer_token_stats(model, tokenizer, questions, answers, batch_size)
    return np.exp(nll / count)


def exact_memorization(model, tokenizer, questions, answers, batch_size: int = 64) -> np.ndarray:
    """Per item the share of answer tokens equal to the teacher-forced argmax (EM).
    Shapes: N strings -> (N,) in [0, 1]."""
    _check_pairs(questions, answers)
    batch_size = check_int("batch_size", batch_size, 1)
    _, count, hits = _answer_token_stats(model, tokenizer, questions, answers, batch_size)
    return hits / count


def truth_ratio(
    model,
    tokenizer,
    questions: Sequence[str],
    paraphrased_answers: Sequence[str],
    perturbed_answers: Sequence[Sequence[str]],
    batch_size: int = 64,
) -> np.ndarray:
    """TOFU's truth ratio R = P̄(perturbed | q) / P̄(paraphrased | q) per item.

    P̄(a | q) = exp(-mean token NLL of a) (the length-normalised probability). R < 1 means the
    model prefers the true (paraphrased) answer to the wrong ones. The perturbed answers'
    P̄ are averaged geometrically (in log space).

    Returns:
        (N,) positive ratios. Summarise with `truth_ratio_score`.
    """
    # DEVIATION: the perturbed answers are averaged in log space (the geometric mean of their
    # P̄, as TOFU's code does); TOFU's paper writes the arithmetic mean.
    _check_pairs(questions, paraphrased_answers, perturbed_answers)
    k = {len(p) for p in perturbed_answers}
    if len(k) != 1 or 0 in k:
        raise ValueError(f"need the same number (>= 1) of perturbed answers per item, got {k}")
    k = k.pop()
    para, pc, _ = _answer_token_stats(model, tokenizer, questions, paraphrased_answers, batch_size)
    qs = [q for q in questions for _ in range(k)]
    flat = [a for p in perturbed_answers for a in p]
    pert, tc, _ = _answer_token_stats(model, tokenizer, qs, flat, batch_size)
    pert_mean = (pert / tc).reshape(-1, k).mean(1)
    return np.exp(para / pc - pert_mean)


def truth_ratio_score(ratio: np.ndarray, kind: str) -> float:
    """TOFU's summary of truth ratios: "retain" -> mean max(0, 1 - R) (knowledge, higher =
    more); "forget" -> mean min(R, 1/R) (1 = no preference for the truth)."""
    check_choice("kind", kind, ("retain", "forget"))
    r = np.asarray(ratio, dtype=float)
    if kind == "retain":
        return float(np.mean(np.maximum(0.0, 1.0 - r)))
    return float(np.mean(np.minimum(r, 1.0 / r)))


# ---------------------------------------------------------------------------------------------
# Generation metrics


def generate_answers(
    model, tokenizer, questions: Sequence[str], max_length: int = 200, batch_size: int = 64
) -> list[str]:
    """Greedy answers to `format_qa(q)`, stopped at EOS or `max_length` tokens in total."""
    _check_pairs(questions)
    max_length = check_int("max_length", max_length, 2)
    prompts = [tokenizer.encode(format_qa(q), add_special_tokens=True) for q in questions]
    out = []
    for s in range(0, len(prompts), batch_size):
        chunk = prompts[s : s + batch_size]
        gen = greedy_complete(model, chunk, [max(0, max_length - len(p)) for p in chunk])
        out += [
            tokenizer.decode(g[len(p) :], skip_special_tokens=True)
            for g, p in zip(gen, chunk, strict=True)
        ]
    return out


def rouge_l_recall(
    model, tokenizer, questions, answers, max_length: int = 200, batch_size: int = 64
) -> np.ndarray:
    """Per item ROUGE-L recall of the greedy answer against the true answer. (N,) in [0, 1]."""
    _check_pairs(questions, answers)
    gen = generate_answers(model, tokenizer, questions, max_length, batch_size)
    return np.array([rouge_l(a, g).recall for a, g in zip(answers, gen, strict=True)])


# ---------------------------------------------------------------------------------------------
# Extraction strength

ES_MODES = ("generate", "teacher_forced")
"""How `PrefixMatcher` decides a prefix: greedy generation as the official code, or one
teacher-forced pass (the same flags for a tokenizer whose decode-encode round trip returns the
same ids, as the word-level one here)."""


def bisect_prefix(
    low: Sequence[int], high: Sequence[int], matches: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """The official ES bisection, all items in lock step.

    Per item the bar [left, right] starts at [low, high]; `right` is taken to match without a
    test (a prefix of the whole string leaves nothing to reproduce). Each round tests
    mid = (left + right) // 2: a match moves right to mid, a miss moves left to mid. It stops
    when no item's mid changes (or after max(high - low) rounds) and returns `right`: the
    smallest matching prefix when `matches` is monotone in the prefix length.

    Args:
        low: (N,) lower bars l (the question's token length).
        high: (N,) upper bars r (the QA string's token length), high >= low.
        matches: Maps (N,) prefix lengths to (N,) bools: does greedy decoding from that prefix
            reproduce the rest?

    Returns:
        (N,) int64 prefix lengths m in [low, high].

    Raises:
        ValueError: bars of different lengths, or high < low.
    """
    left = np.asarray(low, dtype=np.int64).copy()
    right = np.asarray(high, dtype=np.int64).copy()
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError(f"low and high must be 1-D of one length, got {left.shape}, {right.shape}")
    if np.any(right < left):
        i = int(np.flatnonzero(right < left)[0])
        raise ValueError(f"high < low for item {i}: low={left[i]}, high={right[i]}")
    old = None
    for _ in range(int((right - left).max(initial=0))):
        mid = (left + right) // 2
        if old is not None and np.array_equal(mid, old):
            break
        ok = np.asarray(matches(mid), dtype=bool)
        left = np.where(ok, left, mid)
        right = np.where(ok, mid, right)
        old = mid
    return right


class PrefixMatcher:
    """Does greedy decoding from a prefix of each item's QA string reproduce the rest?

    As the official evaluation: the prefix ids are decoded to text and re-encoded (with BOS),
    the model completes them greedily up to `max_length` tokens in total, the output is decoded
    and re-encoded, and its tokens at [m, r) must equal the QA string's (compared over the
    tokens the completion has: one that ends at EOS early matches if what it wrote matches).
    Results are cached per (item, m).

    Attributes:
        full: The QA strings' ids (with BOS, no EOS).
        low: The question-alone token lengths l.
        high: The QA strings' lengths r.
        calls: Number of (item, m) completions run so far.
    """

    def __init__(
        self,
        model,
        tokenizer,
        questions: Sequence[str],
        answers: Sequence[str],
        max_length: int = 200,
        require_full: bool = False,
        batch_size: int = 64,
        mode: str = "generate",
    ) -> None:
        _check_pairs(questions, answers)
        self.mode = check_choice("mode", mode, ES_MODES)
        self.model, self.tokenizer = model, tokenizer
        self.max_length = check_int("max_length", max_length, 2)
        self.batch_size = check_int("batch_size", batch_size, 1)
        self.require_full = bool(require_full)
        enc = lambda s: list(tokenizer.encode(s, add_special_tokens=True))  # noqa: E731
        self.full = [enc(format_qa(q, a)) for q, a in zip(questions, answers, strict=True)]
        self.low = np.array([len(enc(q)) for q in questions], dtype=np.int64)
        self.high = np.array([len(f) for f in self.full], dtype=np.int64)
        self._cache: dict[tuple[int, int], bool] = {}
        self.calls = 0

    @torch.no_grad()
    def __call__(self, m: np.ndarray, items: Sequence[int] | None = None) -> np.ndarray:
        """Match flags for prefix lengths `m` (one per item in `items`, default all)."""
        items = list(range(len(self.full))) if items is None else list(items)
        m = [int(v) for v in np.asarray(m).reshape(-1)]
        if self.mode == "teacher_forced":
            table = self._teacher_forced_table()
            return np.array([table[i][k - self.low[i]] for i, k in zip(items, m, strict=True)])
        todo = [(i, k) for i, k in zip(items, m, strict=True) if (i, k) not in self._cache]
        todo = list(dict.fromkeys(todo))
        if todo:
            dec = lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
            prompts = [
                list(self.tokenizer.encode(dec(self.full[i][:k]), add_special_tokens=True))
                for i, k in todo
            ]
            # DEVIATION: the official code generates up to max_length=200 tokens; only the
            # tokens up to r are compared, so we generate min(r, max_length) - len(prefix):
            # the same result for tokenizers whose re-encoding is prefix-stable (word-level).
            n_new = [
                max(0, min(int(self.high[i]), self.max_length) - len(p))
                for (i, _), p in zip(todo, prompts, strict=True)
            ]
            gens = []
            for s in range(0, len(prompts), self.batch_size):
                part = slice(s, s + self.batch_size)
                gens += greedy_complete(self.model, prompts[part], n_new[part], eos_id=EOS_ID)
            for (i, k), g in zip(todo, gens, strict=True):
                pred = list(self.tokenizer.encode(dec(g), add_special_tokens=True))
                got, want = pred[k : self.high[i]], self.full[i][k:]
                ok = got == want[: len(got)]
                if self.require_full:
                    ok = ok and len(got) == len(want)
                self._cache[(i, k)] = ok
                self.calls += 1
        return np.array([self._cache[(i, k)] for i, k in zip(items, m, strict=True)])

    @torch.no_grad()
    def _teacher_forced_table(self) -> list[np.ndarray]:
        """Per item the match flag of every prefix length m = l .. r, from one forward pass.

        Greedy decoding from a prefix of the QA string writes the true next token for as long
        as every earlier token it wrote was true, so the teacher-forced argmax at each position
        decides every prefix at once: from m, the completion matches unless, at the first
        position t >= m (t < min(r, max_length)) whose argmax differs from the truth, the argmax
        is not EOS (an EOS ends the completion with only true tokens written, which the
        official comparison accepts; `require_full` refuses it and any cut at max_length).
        """
        if getattr(self, "_table", None) is not None:
            return self._table
        table = []
        for s in range(0, len(self.full), self.batch_size):
            rows = self.full[s : s + self.batch_size]
            x = torch.full((len(rows), max(map(len, rows))), PAD_ID, dtype=torch.long)
            for b, r in enumerate(rows):
                x[b, : len(r)] = torch.tensor(r)
            pred = self.model(x).logits.argmax(-1)  # (B, T): pred[:, t - 1] guesses token t
            for b, r in enumerate(rows):
                i, r_len = s + b, len(r)
                stop = min(r_len, self.max_length)
                lo = int(self.low[i])
                flags = np.ones(r_len - lo + 1, dtype=bool)
                verdict = True  # the flag of prefix m, filled from m = r down to l
                for k in range(r_len - 1, lo - 1, -1):
                    if k < stop:
                        guess = int(pred[b, k - 1]) if k > 0 else None
                        if guess != r[k]:
                            verdict = guess == EOS_ID and not self.require_full
                    elif self.require_full:
                        verdict = False  # the completion is cut at max_length before r
                    flags[k - lo] = verdict
                table.append(flags)
                self.calls += 1
        self._table = table
        return table


@dataclass(frozen=True)
class ESResult:
    """Extraction strength per item and the bars it came from.

    Attributes:
        es: (N,) ES = 1 - (m - l) / (r - l) in [0, 1].
        m: (N,) the prefix length the bisection found.
        low: (N,) l, the question's own token length.
        high: (N,) r, the QA string's token length.
    """

    es: np.ndarray
    m: np.ndarray
    low: np.ndarray
    high: np.ndarray


def es_from_prefix(m: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """ES = 1 - (m - l) / (r - l) (r > l). Shapes: (N,) x 3 -> (N,)."""
    m, low, high = (np.asarray(a, dtype=np.float64) for a in (m, low, high))
    if np.any(high <= low):
        raise ValueError("ES needs r > l for every item (the answer adds tokens)")
    return 1.0 - (m - low) / (high - low)


def extraction_strength(
    model,
    tokenizer,
    questions: Sequence[str],
    answers: Sequence[str],
    max_length: int = 200,
    require_full: bool = False,
    batch_size: int = 64,
    mode: str = "generate",
) -> ESResult:
    """Extraction strength of each QA pair, exactly as the official evaluation computes it.

    Pass paraphrased questions for the paper's "perturb" variant. The official evaluation
    scores 50 random items per set; here every item passed in is scored (the caller samples).

    Args:
        model: A causal LM, `model(input_ids).logits` (B, T, V).
        tokenizer: HF-style tokenizer (encode with BOS, decode skipping specials).
        questions: N questions.
        answers: N answers.
        max_length: Generation cap in total tokens (the official 200).
        require_full: Also require that the completion reaches r (off: the official match).
        batch_size: Completions decoded together (does not change the result).
        mode: "generate" (the official greedy completions) or "teacher_forced" (every prefix
            from one forward pass; the same result when decoding then re-encoding a prefix
            returns its ids, as with `models.build_tokenizer`; tested against "generate").

    Returns:
        The per-item ES and its bars.
    """
    match = PrefixMatcher(
        model, tokenizer, questions, answers, max_length, require_full, batch_size, mode
    )
    m = bisect_prefix(match.low, match.high, match)
    return ESResult(es_from_prefix(m, match.low, match.high), m, match.low, match.high)


@dataclass(frozen=True)
class BisectionCheck:
    """How far the bisection's monotonicity assumption holds on a set of items.

    Attributes:
        monotone: (N,) bool, the match flags over m = l .. r-1 (then r) never go True -> False.
        agree: (N,) bool, the bisection's m equals the linear scan's (smallest matching m).
        m_bisect: (N,) the bisection's m.
        m_scan: (N,) the linear scan's m.
    """

    monotone: np.ndarray
    agree: np.ndarray
    m_bisect: np.ndarray
    m_scan: np.ndarray


def check_bisection(
    low: Sequence[int], high: Sequence[int], matches: Callable[[np.ndarray], np.ndarray]
) -> BisectionCheck:
    """Run `bisect_prefix` and a linear scan of every prefix length [l, r) with `matches`.

    Cost: sum(r - l) calls per item; use on a subset for real models.
    """
    low = np.asarray(low, dtype=np.int64)
    high = np.asarray(high, dtype=np.int64)
    m_b = bisect_prefix(low, high, matches)
    n = len(low)
    width = int((high - low).max(initial=0))
    flags = np.ones((n, width + 1), dtype=bool)  # column j: prefix l + j; past r: True
    for j in range(width):
        m = np.minimum(low + j, high)
        flags[:, j] = np.where(low + j < high, matches(m), True)
    m_scan = low + flags.argmax(1)
    monotone = np.all(flags[:, 1:] >= flags[:, :-1], axis=1)
    return BisectionCheck(monotone, m_b == m_scan, m_b, m_scan)


def es_bisection_check(
    model, tokenizer, questions: Sequence[str], answers: Sequence[str], max_length: int = 200
) -> BisectionCheck:
    """`check_bisection` with the official prefix test on a model (the paper's ES)."""
    match = PrefixMatcher(model, tokenizer, questions, answers, max_length)
    return check_bisection(match.low, match.high, match)
