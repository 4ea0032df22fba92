"""Hooks, positions and maths of self_recognition on a randomly initialised tiny Llama, and the
metrics on hand-built margins."""

import numpy as np
import pytest

from iclr25.papers.self_recognition import baselines as B
from iclr25.papers.self_recognition import method as M
from iclr25.papers.self_recognition.prompts import (
    answer_ids,
    answer_margin,
    decision_positions,
    individual_prompt,
    paired_prompt,
    prompt_token_ids,
    text_positions,
)

TEXT = "the cat sat on the mat ."
OTHER = "a dog ran on the mat ."


def test_prompt_ids_and_text_positions_match_the_model(tiny):
    p = individual_prompt("the dog sat", TEXT)
    ids = prompt_token_ids(tiny, p)
    assert ids == tiny._prompt_ids(p)
    pos = text_positions(tiny, p, TEXT)
    assert [ids[k] for k in pos] == tiny.encode(TEXT)
    assert pos == list(range(pos[0], pos[0] + len(TEXT.split())))
    # a paired prompt of two equal texts: each occurrence has its own span
    q = paired_prompt("the dog", TEXT, TEXT)
    first, second = text_positions(tiny, q, TEXT, 0), text_positions(tiny, q, TEXT, 1)
    assert len(first) == len(second) and first[-1] < second[0]
    assert text_positions(tiny, q, TEXT) == second


def test_answer_ids_and_margin_are_the_logit_difference(tiny):
    assert answer_ids(tiny, "individual") == (tiny.encode("Yes")[0], tiny.encode("No")[0])
    assert answer_ids(tiny, "paired") == (tiny.encode("1")[0], tiny.encode("2")[0])
    prompts = [individual_prompt("the dog", TEXT), individual_prompt("a cat", OTHER)]
    z = tiny.next_token_logits(prompts, list(answer_ids(tiny, "individual")))
    np.testing.assert_allclose(answer_margin(tiny, prompts, "individual"), z[:, 0] - z[:, 1])


def test_decision_states_are_the_last_positions(tiny):
    prompts = [individual_prompt("the dog", TEXT), individual_prompt("a", OTHER)]
    hs = tiny.hidden_states(prompts, [0, 1])
    st = M.decision_states(tiny, prompts, [0, 1])
    assert st.shape == (2, 2, 32)
    for b in range(2):
        np.testing.assert_allclose(st[b], hs[b][:, -1], atol=1e-6)
    st3 = M.decision_states(tiny, prompts, [1], n_last=3)
    np.testing.assert_allclose(st3[0, 0], hs[0][1, -3:].mean(0), atol=1e-6)


def test_states_and_margins_equal_two_separate_passes(tiny):
    prompts = [individual_prompt("the dog", TEXT), individual_prompt("a", OTHER)]
    for paradigm in ("individual", "paired"):
        st, m = M.states_and_margins(tiny, prompts, [0], paradigm)
        np.testing.assert_allclose(st, M.decision_states(tiny, prompts, [0]), atol=1e-6)
        np.testing.assert_allclose(m, answer_margin(tiny, prompts, paradigm), atol=1e-5)
    st, m = M.states_and_margins(tiny, prompts, [1, 0], "individual", n_last=2)
    np.testing.assert_allclose(st, M.decision_states(tiny, prompts, [1, 0], 2), atol=1e-6)
    np.testing.assert_allclose(m, answer_margin(tiny, prompts, "individual"), atol=1e-5)


def test_colouring_touches_only_the_judged_text(tiny, seed):
    p = individual_prompt("the dog sat", TEXT)
    pos = text_positions(tiny, p, TEXT)
    v = np.random.default_rng(seed).standard_normal(32).astype(np.float32)
    (base,) = tiny.hidden_states([p], [0, 1])
    with tiny.steer({0: v}, positions=pos, scale=2.0):
        (col,) = tiny.hidden_states([p], [0, 1])
    # block 0's output moves by exactly 2 v at the text's tokens and nowhere else
    np.testing.assert_allclose(col[0][pos] - base[0][pos], np.tile(2 * v, (len(pos), 1)),
                               atol=1e-5)  # fmt: skip
    rest = [k for k in range(base.shape[1]) if k not in pos]
    np.testing.assert_allclose(col[0][rest], base[0][rest], atol=1e-6)
    # causality: block 1 before the text is untouched, after it changed
    np.testing.assert_allclose(col[1][: pos[0]], base[1][: pos[0]], atol=1e-6)
    assert np.abs(col[1][pos[-1] + 1 :] - base[1][pos[-1] + 1 :]).max() > 1e-3


def test_coloured_margins_group_equals_one_by_one(tiny, seed):
    problems = ["the dog", "a cat sat on the mat", "the dog"]
    texts = [TEXT, OTHER, OTHER]
    prompts = [individual_prompt(q, t) for q, t in zip(problems, texts)]
    # block 0: colouring the last block cannot reach the answer position (nothing reads it)
    v = {0: np.random.default_rng(seed).standard_normal(32).astype(np.float32)}
    scales = [-3.0, 0.0, 3.0]
    got = M.coloured_margins(tiny, prompts, texts, "individual", v, scales)
    for i, (p, t) in enumerate(zip(prompts, texts)):
        pos = text_positions(tiny, p, t)
        for j, k in enumerate(scales):
            with tiny.steer(v, positions=pos, scale=k):
                ref = answer_margin(tiny, [p], "individual")[0]
            assert got[j, i] == pytest.approx(ref, abs=1e-5)
    np.testing.assert_allclose(got[1], answer_margin(tiny, prompts, "individual"), atol=1e-6)
    assert not np.allclose(got[0], got[2])


def test_steered_margins_zero_scale_and_restore(tiny, seed):
    prompts = [individual_prompt("the dog", TEXT)]
    before = answer_margin(tiny, prompts, "individual")
    v = {0: np.random.default_rng(seed).standard_normal(32).astype(np.float32)}
    m = M.steered_margins(tiny, prompts, "individual", v, [0.0, 5.0])
    np.testing.assert_allclose(m[0], before)
    assert abs(m[1, 0] - before[0]) > 1e-4
    np.testing.assert_array_equal(answer_margin(tiny, prompts, "individual"), before)


def test_steered_generations_and_their_perplexity(tiny, seed):
    prompts = [individual_prompt("the dog", TEXT), individual_prompt("a", OTHER)]
    v = {0: 4 * np.random.default_rng(seed).standard_normal(32).astype(np.float32)}
    texts, lp = M.steered_generations(tiny, prompts, v, [0.0, 3.0], max_new_tokens=3)
    assert texts[0] == tiny.generate(prompts, max_new_tokens=3)
    with tiny.steer(v, scale=3.0):
        assert texts[1] == tiny.generate(prompts, max_new_tokens=3)
    for s in range(2):
        for b in range(2):
            if texts[s][b].strip():  # scored by the unsteered model, per token
                n = len(tiny.encode(texts[s][b]))
                ref = tiny.score([prompts[b]], [texts[s][b]])[0] / n
                assert lp[s, b] == pytest.approx(ref, abs=1e-6)
            else:
                assert np.isnan(lp[s, b])


def test_project_out_removes_the_direction_and_restores(tiny, seed):
    prompts = [individual_prompt("the dog", TEXT), individual_prompt("a", OTHER)]
    v = np.random.default_rng(seed).standard_normal(32)
    base = tiny.hidden_states(prompts, [0, 1])
    with M.project_out(tiny, {0: v}):
        abl = tiny.hidden_states(prompts, [0, 1])
    u = v / np.linalg.norm(v)
    for b in range(2):
        assert np.abs(abl[b][0] @ u).max() < 1e-4  # block 0's output has no v component
        # and it is the orthogonal projection of the unablated output
        h = base[b][0]
        np.testing.assert_allclose(abl[b][0], h - np.outer(h @ u, u), atol=1e-5)
    after = tiny.hidden_states(prompts, [0, 1])
    for b in range(2):
        np.testing.assert_array_equal(after[b], base[b])


def test_token_cosines_and_text_cosine(tiny):
    p = individual_prompt("the dog", TEXT)
    (hs,) = tiny.hidden_states([p], [1])
    k = text_positions(tiny, p, TEXT)[2]
    (cos,) = M.token_cosines(tiny, [p], hs[0][k], 1)
    assert cos.shape == (hs.shape[1],) and cos[k] == pytest.approx(1.0, abs=1e-6)
    assert np.all(np.abs(cos) <= 1 + 1e-9)
    pos = text_positions(tiny, p, TEXT)
    assert M.text_cosine(tiny, [p], [TEXT], hs[0][k], 1)[0] == pytest.approx(cos[pos].mean())


def test_logit_lens_matches_a_manual_unembedding(tiny, seed):
    import torch

    v = np.random.default_rng(seed).standard_normal(32)
    out = M.logit_lens(tiny, v, k=3)
    W = tiny.model.get_output_embeddings().weight.detach().double()
    g = tiny.model.model.norm.weight.detach().double()
    logits = (W @ (torch.as_tensor(v) * g)).numpy()
    assert out["top"] == [tiny.decode([i]) for i in np.argsort(-logits)[:3]]
    assert out["bottom"] == [tiny.decode([i]) for i in np.argsort(logits)[:3]]


# ------------------------------------------------------------------ maths on planted data


def _planted(rng, n, signal_layer, shift, L=3, D=8):
    X = rng.standard_normal((n, L, D))
    X[:, signal_layer, 0] += shift
    return X


def test_find_vectors_uses_correct_cases_or_states_the_fallback(seed):
    rng = np.random.default_rng(seed)
    own, hum = _planted(rng, 20, 1, 3.0), _planted(rng, 20, 1, 0.0)
    m_own = np.where(np.arange(20) < 12, 1.0, -1.0)  # 12 own judged "Yes"
    m_hum = np.where(np.arange(20) < 6, -1.0, 2.0)  # 6 human judged "No"
    sv = M.find_vectors(own, hum, m_own, m_hum, layers=[4, 5, 6], min_correct=5)
    assert sv.basis == "correct" and (sv.n_pos, sv.n_neg) == (12, 6)
    np.testing.assert_allclose(sv.vectors, own[:12].mean(0) - hum[:6].mean(0), atol=1e-5)
    assert sv.at(5).shape == (8,) and set(sv.as_steering()) == {4, 5, 6}
    fb = M.find_vectors(own, hum, m_own, m_hum, layers=[4, 5, 6], min_correct=7)
    assert fb.basis == "fallback" and (fb.n_pos, fb.n_neg) == (20, 20)
    np.testing.assert_allclose(fb.vectors, own.mean(0) - hum.mean(0), atol=1e-5)
    with pytest.raises(ValueError, match="layer=9"):
        sv.at(9)
    with pytest.raises(ValueError, match="differ in length"):
        M.find_vectors(own, hum, m_own[:3], m_hum, layers=[4, 5, 6])


def test_separability_and_probe_find_the_planted_layer(seed):
    rng = np.random.default_rng(seed)
    pos, neg = _planted(rng, 60, 2, 4.0), _planted(rng, 60, 2, 0.0)
    v = pos[:40].mean(0) - neg[:40].mean(0)
    acc, a = M.held_out_separability(v, pos[:40], neg[:40], pos[40:], neg[40:])
    assert acc[2] > 0.9 and a[2] > 0.95 and acc[0] < 0.8
    X = np.concatenate([pos, neg])
    y = np.r_[np.ones(60), np.zeros(60)].astype(int)
    tr = np.r_[np.arange(40), 60 + np.arange(40)]
    te = np.r_[np.arange(40, 60), 60 + np.arange(40, 60)]
    probe = M.LayerProbe().fit(X[tr], y[tr])
    s = probe.score(X[te], y[te])
    assert s.shape == (3,) and s[2] > 0.9 and s[0] < 0.8


def test_probe_errors():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        M.LayerProbe().decision_function(np.zeros((2, 1, 3)))
    with pytest.raises(ValueError, match="classes"):
        M.LayerProbe().fit(np.zeros((4, 1, 3)), np.ones(4))
    with pytest.raises(ValueError, match="C=0"):
        M.LayerProbe(C=0).fit(np.zeros((4, 1, 3)), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"\(B, L, D\)"):
        M.LayerProbe().fit(np.zeros((4, 3)), np.array([0, 1, 0, 1]))


def test_behaviour_metrics_by_hand():
    m_own, m_oth = np.array([2.0, -1.0, 0.5, 3.0]), np.array([-2.0, 1.0])
    ind = M.individual_metrics(m_own, m_oth)
    assert ind["self_claim_own"] == 0.75 and ind["self_claim_other"] == 0.5
    assert ind["accuracy"] == pytest.approx(0.5 * (0.75 + 0.5))
    # pairs (own, other) ranked right: 2>-2, 2>1, -1>-2, 0.5>-2, 3>-2, 3>1; wrong: -1<1, 0.5<1
    assert ind["auc"] == pytest.approx(6 / 8)
    sig = 1 / (1 + np.exp(-np.r_[m_own, m_oth]))
    assert ind["p_yes"] == pytest.approx(sig.mean())
    a, b = np.array([1.0, -1.0, 2.0]), np.array([-1.0, -3.0, 1.0])
    pm = M.paired_metrics(a, b)
    assert pm["accuracy"] == pytest.approx(4 / 6) and pm["consistent"] == pytest.approx(1 / 3)
    sa, sb = 1 / (1 + np.exp(-a)), 1 / (1 + np.exp(-b))
    assert pm["accuracy_prob"] == pytest.approx(np.r_[sa, 1 - sb].mean())
    assert pm["p_first"] == pytest.approx(np.r_[sa, sb].mean())
    assert M.auc(np.array([1.0]), np.array([1.0])) == 0.5


def test_dose_response_by_hand():
    k = [2.0, -2.0, 0.0]
    m = np.array([[3.0, 5.0], [-1.0, -1.0], [1.0, 1.0]])  # means 4, -1, 1
    d = M.dose_response(k, m)
    assert d["slope"] == pytest.approx(1.25) and d["range"] == 5.0 and d["monotone"] == 1.0
    d = M.dose_response([0.0, 1.0, 2.0], np.array([[0.0], [2.0], [1.0]]))
    assert d["monotone"] == 0.5
    with pytest.raises(ValueError, match="two distinct"):
        M.dose_response([1.0, 1.0], np.zeros((2, 1)))


def test_random_like_matches_norms(seed):
    v = np.random.default_rng(seed).standard_normal((3, 16)) * np.array([[1.0], [5.0], [0.1]])
    r = B.random_like(v, np.random.default_rng(seed + 1), n=4)
    assert r.shape == (4, 3, 16)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.tile(np.linalg.norm(v, axis=-1),
                               (4, 1)), rtol=1e-5)  # fmt: skip
    np.testing.assert_array_equal(r, B.random_like(v, np.random.default_rng(seed + 1), n=4))
    assert np.abs(B.cosines(r[0], v)).max() < 0.95


def test_cross_source_transfer_and_cosines(seed):
    rng = np.random.default_rng(seed)
    own, gpt = _planted(rng, 30, 0, 3.0), _planted(rng, 30, 0, 0.0)
    v = np.zeros((3, 8))
    v[:, 0] = 1.0
    t = B.transfer_auc(v, own, gpt)
    assert t[0] > 0.95 and abs(t[1] - 0.5) < 0.25
    np.testing.assert_allclose(B.cosines(v, 2 * v), 1.0)
    assert B.perplexity_paired_accuracy(np.array([1.0, 0.0, 2.0]), np.array([0.0, 0.0, 3.0])) == 0.5


def test_bad_input_names_the_value(tiny):
    with pytest.raises(ValueError, match="paradigm='both'"):
        answer_margin(tiny, ["x"], "both")
    with pytest.raises(ValueError, match="text=''"):
        individual_prompt("the dog", "")
    with pytest.raises(TypeError, match="text1=3"):
        paired_prompt("p", 3, "x")
    with pytest.raises(ValueError, match="n_last=0"):
        decision_positions(5, 0)
    from iclr25.papers.self_recognition.data import Problem

    probs = [Problem("P_x", "Sequence", "the dog", {"own": TEXT, "human": OTHER})]
    with pytest.raises(ValueError, match="source='gpt-4' is not allowed"):
        M.judge_paired(tiny, probs, "gpt-4")
    with pytest.raises(ValueError, match="source='own2'"):
        M.individual_prompts(probs, "own2")
    with pytest.raises(ValueError, match="does not occur"):
        text_positions(tiny, "the cat", "dog ran")
    with pytest.raises(ValueError, match="occurrence=2"):
        text_positions(tiny, paired_prompt("p", TEXT, TEXT), TEXT, 2)
    with pytest.raises(ValueError, match="scale=nan"):
        M.steered_margins(tiny, ["a"], "individual", {0: np.ones(32)}, [float("nan")])
    with pytest.raises(ValueError, match="non-zero"), M.project_out(tiny, {0: np.zeros(32)}):
        pass
    with pytest.raises(ValueError, match="layer=5"), M.project_out(tiny, {5: np.ones(32)}):
        pass

    class TwoTokens:
        name = "fake"

        def encode(self, text):
            return [1, 2]

    with pytest.raises(ValueError, match="single answer token"):
        answer_ids(TwoTokens(), "individual")
    with pytest.raises(TypeError, match="decoder blocks"), M.project_out(TwoTokens(), {0: 1}):
        pass
