"""Metrics: ROUGE-L by hand, the ES bisection against a linear scan, ES/EM/PPL on models whose
greedy behaviour is known exactly, and bad input."""

import math

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.unlearn_eval import metrics as M
from iclr25.papers.unlearn_eval.reference import es_linear_scan, lcs_recursive

# ---------------------------------------------------------------------------------------------
# ROUGE-L


@pytest.mark.parametrize(
    ("ref", "cand", "p", "r"),
    [
        # LCS "the cat the mat" = 4 of 6 reference words, of 5 candidate words
        ("the cat sat on the mat", "the cat lay the mat", 4 / 5, 4 / 6),
        ("Bastel is the city.", "bastel, THE city", 1.0, 3 / 4),  # case and punctuation
        ("a b c d", "d c b a", 1 / 4, 1 / 4),  # order matters
        ("a b c", "", 0.0, 0.0),
        ("a b a b", "b a b a b", 4 / 5, 1.0),
    ],
)
def test_rouge_l_hand_cases(ref, cand, p, r):
    s = M.rouge_l(ref, cand)
    assert s.precision == pytest.approx(p) and s.recall == pytest.approx(r)
    f = 2 * p * r / (p + r) if p + r else 0.0
    assert s.fmeasure == pytest.approx(f)


def test_lcs_matches_the_recursive_reference(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        a = rng.integers(0, 4, rng.integers(0, 12)).tolist()
        b = rng.integers(0, 4, rng.integers(0, 12)).tolist()
        assert M.lcs_length(a, b) == lcs_recursive(a, b) == M.lcs_length(b, a)


# ---------------------------------------------------------------------------------------------
# The bisection, on constructed predicates


def _bars(rng, n):
    low = rng.integers(1, 15, n)
    return low, low + rng.integers(1, 30, n)


def test_bisection_equals_linear_scan_on_monotone_predicates(seed):
    rng = np.random.default_rng(seed)
    low, high = _bars(rng, 300)
    k = rng.integers(low - 3, high + 4)  # memorised from prefix k on (k may lie outside [l, r])
    m = M.bisect_prefix(low, high, lambda mid: mid >= k)
    scan = [es_linear_scan(a, b, lambda x, kk=kk: x >= kk) for a, b, kk in zip(low, high, k)]
    assert m.tolist() == scan
    assert np.array_equal(m, np.clip(k, low, high))
    es = M.es_from_prefix(m, low, high)
    assert np.all((es >= 0) & (es <= 1))
    assert np.all(es[k <= low] == 1.0) and np.all(es[k >= high] == 0.0)


def test_bisection_never_tests_the_upper_bar_and_takes_few_rounds():
    seen = []

    def matches(mid):
        seen.append(mid.copy())
        return np.zeros(len(mid), bool)  # never reproduced

    m = M.bisect_prefix([3], [3 + 64], matches)
    assert m.tolist() == [67]
    tested = np.concatenate(seen)
    assert tested.max() < 67 and len(seen) <= 7  # log2(64) + 1 rounds


def test_check_bisection_flags_non_monotone_items(seed):
    rng = np.random.default_rng(seed)
    low, high = _bars(rng, 200)
    k = rng.integers(low, high + 1)  # reproduced from prefix k on ...
    hole = rng.integers(low, high + 1)  # ... except at `hole` for the broken items
    broken = rng.random(200) < 0.5

    def one(i, x):
        return x >= k[i] and not (broken[i] and x == hole[i] and hole[i] > k[i])

    def matches(mid):
        return np.array([one(i, x) for i, x in enumerate(mid)])

    chk = M.check_bisection(low, high, matches)
    assert np.array_equal(chk.monotone, ~(broken & (hole > k) & (hole < high)))
    assert np.all(chk.agree[chk.monotone])  # where the assumption holds the two agree
    scan = [es_linear_scan(int(low[i]), int(high[i]), lambda x, i=i: one(i, x)) for i in range(200)]
    assert chk.m_scan.tolist() == scan


def test_a_non_monotone_item_can_mislead_the_bisection_and_the_check_says_so():
    # reproduced from prefix 2, except at 3 and 4: the bisection tests 4 first and never sees 2
    ok = {2, 5, 6, 7}
    chk = M.check_bisection([0], [8], lambda mid: np.array([int(mid[0]) in ok]))
    assert chk.m_bisect.tolist() == [5] and chk.m_scan.tolist() == [2]
    assert not chk.monotone[0] and not chk.agree[0]


@pytest.mark.parametrize(
    ("low", "high", "match"),
    [([3, 4], [5], "one length"), ([5], [4], "high < low for item 0")],
)
def test_bisection_bad_bars(low, high, match):
    with pytest.raises(ValueError, match=match):
        M.bisect_prefix(low, high, lambda m: m > 0)


# ---------------------------------------------------------------------------------------------
# Metrics on lookup models (exact greedy behaviour), with the real tokenizer


def _qa(corpus, n=12):
    items = corpus.items[:n]
    return [q.question for q in items], [q.answer for q in items], items


def _full_ids(tokenizer, questions, answers):
    from iclr25.papers.unlearn_eval.models import encode_qa

    return [list(i) for i in encode_qa(tokenizer, questions, answers, eos=False).ids]


def _wrong(tokenizer):
    return tokenizer.convert_tokens_to_ids("idea")  # a word of the refusals only


@needs("transformers")
def test_es_on_a_model_that_memorises_from_prefix_k(corpus, tokenizer, lookup_lm, seed):
    from iclr25.papers.unlearn_eval.models import EOS_ID

    qs, ans, _ = _qa(corpus)
    full = _full_ids(tokenizer, qs, ans)
    rng = np.random.default_rng(seed)
    k = [int(rng.integers(3, len(f) + 3)) for f in full]
    k[0], k[1] = 0, 99  # one item extracted from the question alone, one never
    lm = lookup_lm(full, len(tokenizer), lambda i, n: n >= k[i], _wrong(tokenizer), EOS_ID)
    res = M.extraction_strength(lm, tokenizer, qs, ans)
    low = np.array([len(tokenizer.encode(q)) for q in qs])
    high = np.array([len(f) for f in full])
    assert np.array_equal(res.low, low) and np.array_equal(res.high, high)
    # the lookup model answers an ambiguous prefix (shared with an earlier item: the same
    # question about another author) with the earlier item's continuation, as any model must
    # guess there; item i is reproduced from max(k_i, u_i) on, u_i its first unambiguous length
    u = [
        next(n for n in range(1, len(f) + 1) if all(g[:n] != f[:n] for g in full[:i]))
        for i, f in enumerate(full)
    ]
    expect_m = np.clip(np.maximum(k, u), low, high)
    assert np.any(expect_m == low) and np.any(expect_m == high)  # both ends of ES occur
    assert np.array_equal(res.m, expect_m)
    assert np.allclose(res.es, 1 - (expect_m - low) / (high - low))
    match = M.PrefixMatcher(lm, tokenizer, qs, ans)
    scan = [es_linear_scan(int(a), int(b), lambda x, i=i: bool(match(np.array([x]), [i])[0]))
            for i, (a, b) in enumerate(zip(low, high))]  # fmt: skip
    assert res.m.tolist() == scan
    chk = M.es_bisection_check(lm, tokenizer, qs, ans)
    assert chk.monotone.all() and chk.agree.all()


@needs("transformers")
def test_es_official_match_accepts_an_early_eos_unless_require_full(corpus, tokenizer, lookup_lm):
    from iclr25.papers.unlearn_eval.models import EOS_ID

    qs, ans, _ = _qa(corpus, 4)
    full = _full_ids(tokenizer, qs, ans)
    # the model knows each QA string but stops (EOS) two tokens before its end
    lm = lookup_lm([f[:-2] for f in full], len(tokenizer), wrong=_wrong(tokenizer), eos=EOS_ID)
    assert np.all(M.extraction_strength(lm, tokenizer, qs, ans).es == 1.0)
    assert np.all(M.extraction_strength(lm, tokenizer, qs, ans, require_full=True).es == 0.0)


@needs("transformers")
def test_em_ppl_and_rouge_on_a_model_that_knows_everything(corpus, tokenizer, lookup_lm):
    from iclr25.papers.unlearn_eval.models import EOS_ID

    qs, ans, _ = _qa(corpus, 6)
    full = _full_ids(tokenizer, qs, ans)
    V = len(tokenizer)
    lm = lookup_lm(full, V, wrong=_wrong(tokenizer), eos=EOS_ID)
    assert np.all(M.exact_memorization(lm, tokenizer, qs, ans) == 1.0)
    nll = math.log(math.exp(10) + V - 1) - 10  # every answer token predicted with logit 10
    assert np.allclose(M.perplexity(lm, tokenizer, qs, ans, batch_size=4), math.exp(nll))
    assert np.all(M.rouge_l_recall(lm, tokenizer, qs, ans, max_length=60) == 1.0)
    assert M.generate_answers(lm, tokenizer, qs[:1])[0] == tokenizer.decode(
        tokenizer.encode(ans[0]), skip_special_tokens=True
    )
    # a model that knows nothing: wrong words only, no EOS
    blank = lookup_lm(full, V, lambda i, n: False, _wrong(tokenizer))
    assert np.all(M.exact_memorization(blank, tokenizer, qs, ans) == 0.0)
    assert np.all(M.rouge_l_recall(blank, tokenizer, qs, ans, max_length=40) == 0.0)
    assert np.all(M.perplexity(blank, tokenizer, qs, ans) > 1e4)


@needs("transformers")
def test_em_counts_the_known_answer_tokens(corpus, tokenizer, lookup_lm):
    from iclr25.papers.unlearn_eval.models import EOS_ID, encode_qa

    qs, ans, _ = _qa(corpus, 5)
    enc = encode_qa(tokenizer, qs, ans)  # with EOS
    full = [list(i[:-1]) for i in enc.ids]
    a = enc.answer_start
    # the first two answer tokens are wrong, the rest and the EOS right
    lm = lookup_lm(full, len(tokenizer), lambda i, n: n >= a[i] + 2, _wrong(tokenizer), EOS_ID)
    n_ans = np.array([len(i) - s for i, s in zip(enc.ids, a)])
    assert np.allclose(M.exact_memorization(lm, tokenizer, qs, ans), (n_ans - 2) / n_ans)


@needs("transformers")
def test_truth_ratio_prefers_what_the_model_knows(corpus, tokenizer, lookup_lm):
    from iclr25.papers.unlearn_eval.models import EOS_ID

    qs, _, items = _qa(corpus, 6)
    para = [q.paraphrased_answer for q in items]
    pert = [q.perturbed_answers for q in items]
    knows_truth = lookup_lm(_full_ids(tokenizer, qs, para), len(tokenizer), eos=EOS_ID)
    r = M.truth_ratio(knows_truth, tokenizer, qs, para, pert)
    assert np.all(r < 1e-2)
    assert M.truth_ratio_score(r, "retain") > 0.99 and M.truth_ratio_score(r, "forget") < 1e-2
    wrong0 = [p[0] for p in pert]
    knows_lie = lookup_lm(_full_ids(tokenizer, qs, wrong0), len(tokenizer), eos=EOS_ID)
    assert np.all(M.truth_ratio(knows_lie, tokenizer, qs, para, pert) > 1)
    assert M.truth_ratio_score(np.ones(3), "forget") == 1.0


@needs("transformers")
def test_metric_bad_inputs(corpus, tokenizer, lookup_lm):
    qs, ans, _ = _qa(corpus, 3)
    lm = lookup_lm([], len(tokenizer))
    with pytest.raises(ValueError, match="3 questions, 2 entries"):
        M.perplexity(lm, tokenizer, qs, ans[:2])
    with pytest.raises(ValueError, match="at least one question"):
        M.exact_memorization(lm, tokenizer, [], [])
    with pytest.raises(ValueError, match="batch_size=0"):
        M.perplexity(lm, tokenizer, qs, ans, batch_size=0)
    with pytest.raises(ValueError, match="same number"):
        M.truth_ratio(lm, tokenizer, qs, ans, [("a",), ("a", "b"), ("a",)])
    with pytest.raises(ValueError, match="kind='both'"):
        M.truth_ratio_score(np.ones(2), "both")
    with pytest.raises(ValueError, match="max_length=1"):
        M.extraction_strength(lm, tokenizer, qs, ans, max_length=1)
    with pytest.raises(TypeError, match="max_length=nan"):
        M.rouge_l_recall(lm, tokenizer, qs, ans, max_length=float("nan"))


@needs("transformers")
@pytest.mark.parametrize("require_full", [False, True])
@pytest.mark.parametrize("max_length", [200, 20])
def test_es_teacher_forced_equals_generation_on_lookup_models(
    corpus, tokenizer, lookup_lm, seed, require_full, max_length
):
    from iclr25.papers.unlearn_eval.models import EOS_ID

    qs, ans, _ = _qa(corpus)
    full = _full_ids(tokenizer, qs, ans)
    rng = np.random.default_rng(seed)
    k = [int(rng.integers(3, len(f) + 3)) for f in full]
    cut = [int(rng.integers(0, 3)) for _ in full]  # some items end with an early EOS
    seqs = [f[: len(f) - c] for f, c in zip(full, cut)]

    # items whose answers are known from prefix k on, plus non-monotone ones: forgotten in a
    # middle stretch only (a later prefix fails where an earlier one, ending in EOS, matches)
    def known(i, n):
        return n >= k[i] and not (i % 3 == 0 and 2 * n in range(len(full[i]), len(full[i]) + 4))

    lm = lookup_lm(seqs, len(tokenizer), known, _wrong(tokenizer), EOS_ID)
    kw = {"max_length": max_length, "require_full": require_full}
    gen = M.extraction_strength(lm, tokenizer, qs, ans, **kw)
    tf = M.extraction_strength(lm, tokenizer, qs, ans, mode="teacher_forced", **kw)
    assert np.array_equal(gen.m, tf.m) and np.array_equal(gen.es, tf.es)
    a = M.PrefixMatcher(lm, tokenizer, qs, ans, **kw)
    b = M.PrefixMatcher(lm, tokenizer, qs, ans, mode="teacher_forced", **kw)
    for j in range(int((a.high - a.low).max()) + 1):
        m = np.minimum(a.low + j, a.high)
        assert np.array_equal(a(m), b(m)), f"prefix offset {j}"
    with pytest.raises(ValueError, match="mode='beam'"):
        M.PrefixMatcher(lm, tokenizer, qs, ans, mode="beam")


@needs("transformers")
def test_summarize_orients_every_metric_towards_knowledge(corpus, tokenizer, lookup_lm):
    from iclr25.papers.unlearn_eval.evaluation import METRIC_NAMES, summarize
    from iclr25.papers.unlearn_eval.models import EOS_ID

    qs, ans, items = _qa(corpus, 6)
    knows = lookup_lm(_full_ids(tokenizer, qs, ans), len(tokenizer), eos=EOS_ID)
    blank = lookup_lm([], len(tokenizer), wrong=_wrong(tokenizer))
    good, bad = summarize(knows, tokenizer, items), summarize(blank, tokenizer, items)
    assert list(good) == list(METRIC_NAMES)
    for m in ("ppl", "rouge", "em", "es"):
        assert good[m] > bad[m], m
    para = [q.paraphrased_answer for q in items]  # the truth ratio scores the paraphrases
    knows_para = lookup_lm(_full_ids(tokenizer, qs, para), len(tokenizer), eos=EOS_ID)
    assert summarize(knows_para, tokenizer, items, ["tr"])["tr"] > 0.99 > 0.01 > bad["tr"]
    assert good["em"] == 1.0 and good["rouge"] == 1.0 and bad["em"] == 0.0
    with pytest.raises(ValueError, match="metric='bleu'"):
        summarize(knows, tokenizer, items, ["bleu"])
    with pytest.raises(ValueError, match="6 items, 2 questions"):
        summarize(knows, tokenizer, items, questions=qs[:2])
