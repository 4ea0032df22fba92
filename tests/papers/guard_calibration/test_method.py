"""Calibrators and the guard scorer: invariants, references, bad input."""

import json

import numpy as np
import pytest
import torch

from iclr25.papers.guard_calibration import (
    BatchCalibration,
    ContextualCalibration,
    GuardScorer,
    GuardTemplate,
    NotFittedError,
    SyntheticGuard,
    TemperatureScaling,
    load_jsonl,
    moderation_corpus,
    p_unsafe,
)
from iclr25.papers.guard_calibration.baselines import PlattScaling
from iclr25.papers.guard_calibration.method import margin
from iclr25.papers.guard_calibration.reference import temperature_grid
from iclr25.papers.guard_calibration.training import train_tiny_guard


def test_temperature_scaling_matches_grid_and_keeps_labels(seed):
    rng = np.random.default_rng(seed)
    Z, y, _ = SyntheticGuard(scale=2.5).sample(3000, rng)
    ts = TemperatureScaling().fit(Z, y)
    grid = np.linspace(1.5, 4.0, 2501)
    assert ts.temperature_ == pytest.approx(temperature_grid(margin(Z), y, grid), abs=2e-3)
    assert ts.temperature_ == pytest.approx(2.5, rel=0.1)
    p0, p1 = p_unsafe(Z), ts.predict_proba(Z)
    assert np.array_equal(p0 > 0.5, p1 > 0.5)


def test_cc_removes_a_known_bias_exactly_and_bc_moves_towards_balance(seed):
    rng = np.random.default_rng(seed)
    clean = SyntheticGuard(scale=1.0, bias=0.0)
    biased = SyntheticGuard(scale=1.0, bias=1.7)
    _, _, m = clean.sample(2000, rng)
    cc = ContextualCalibration().fit(biased.content_free())
    np.testing.assert_allclose(cc.predict_proba(biased.logits(m)), p_unsafe(clean.logits(m)))
    # balanced data, margins pushed towards "unsafe": BC sees the bias and undoes part of it
    Zb = biased.logits(np.concatenate([m, -m]))
    bc = BatchCalibration().fit(Zb)
    assert bc.prior_[1] > 0.5
    assert abs(bc.predict_proba(Zb).mean() - 0.5) < abs(p_unsafe(Zb).mean() - 0.5)


def test_prior_correction_equals_renormalised_division(seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(20, 2))
    bc = BatchCalibration().fit(Z)
    p = np.exp(Z) / np.exp(Z).sum(1, keepdims=True)
    q = p / p.mean(0)
    q /= q.sum(1, keepdims=True)
    np.testing.assert_allclose(bc.predict_proba(Z), q[:, 1])


def test_calibrators_reject_bad_input():
    with pytest.raises(NotFittedError):
        TemperatureScaling().predict_proba(np.zeros((2, 2)))
    with pytest.raises(NotFittedError):
        ContextualCalibration().transform(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="both labels"):
        TemperatureScaling().fit(np.array([[0.0, 1.0], [0.0, 2.0]]), [1, 1])
    with pytest.raises(ValueError, match="row 1"):
        BatchCalibration().fit(np.array([[0.0, 1.0], [np.inf, 0.0]]))
    with pytest.raises(ValueError, match="empty"):
        BatchCalibration().fit(np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"shape \(N, 2\)"):
        p_unsafe(np.zeros(3))
    with pytest.raises(ValueError, match="backwards"):
        TemperatureScaling().fit(np.array([[0, 2.0], [0, -2.0], [0, 1.0], [0, -1.0]]), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="both labels"):
        PlattScaling().fit(np.zeros((3, 2)), [0, 0, 0])


@pytest.fixture(scope="module")
def tiny_guard():
    c = moderation_corpus(300, np.random.default_rng(0))
    before = torch.get_num_threads()  # module fixtures run before conftest's one-thread limit
    torch.set_num_threads(1)
    try:
        return train_tiny_guard(c.prompts, c.labels, 0, epochs=3)
    finally:
        torch.set_num_threads(before)


def test_scorer_reads_label_logits_at_the_decision_position(tiny_guard):
    g = GuardScorer(tiny_guard, "tiny")
    prompts = ["how do i bake a cake", "how do i make a bomb"]
    Z = g.logits(prompts)
    ids = [tiny_guard.encode("safe")[0], tiny_guard.encode("unsafe")[0]]
    contexts = [g.template.text(p, None) for p in prompts]
    np.testing.assert_allclose(Z, tiny_guard.next_token_logits(contexts, ids))
    assert g.content_free_logits().shape == (1, 2)
    Zr = g.logits(prompts, ["sure , here", "no"])
    assert Zr.shape == (2, 2) and not np.allclose(Zr, Z)


class _EchoLM:
    """A fake LM that writes 'a: no\\nb: yes\\nc: yes' and logs the contexts it is asked."""

    name = "fake:echo"

    def __init__(self):
        self.asked = []

    def encode(self, text):
        return [{" no": 1, " yes": 2}.get(text, 3)] + ([9] * (len(text.split()) - 1))

    def decode(self, ids):
        return " ".join("w" for _ in ids)

    def generate(self, prompts, max_new_tokens=32, temperature=0.0, stop=(), seed=0):
        return ["a: no\nb: yes\nc: yes" for _ in prompts]

    def next_token_logits(self, prompts, token_ids):
        self.asked.extend(prompts)
        return np.zeros((len(prompts), len(token_ids)))


def test_marker_rule_reads_after_the_kth_marker_and_truncates_responses():
    lm = _EchoLM()
    g = GuardScorer(lm, "wildguard", max_response_tokens=3)
    g.logits(["p"])
    assert lm.asked[-1].endswith("<|assistant|>\na:")
    g.logits(["p"], ["one two three four five"])
    assert lm.asked[-1].endswith("a: no\nb: yes\nc:")
    assert "w w w" in lm.asked[-1] and "five" not in lm.asked[-1]
    bad = GuardTemplate("x", "{prompt}", "", " no", " yes", marker="#")
    with pytest.raises(ValueError, match="fewer than 1"):
        GuardScorer(lm, bad).logits(["p"])
    lm.chat = True  # a chat-wrapped model cannot be fed text after the assistant header
    with pytest.raises(ValueError, match="chat=False"):
        GuardScorer(lm, "wildguard")


def test_scorer_rejects_bad_input(tiny_guard):
    with pytest.raises(ValueError, match="unknown"):
        GuardScorer(tiny_guard, "nope")
    with pytest.raises(ValueError, match="needs responses"):
        GuardScorer(_EchoLM(), GuardTemplate("r", "", "{prompt} {response}", " no", " yes")).logits(
            ["p"]
        )
    with pytest.raises(ValueError, match="empty"):
        GuardScorer(tiny_guard).logits([])
    with pytest.raises(ValueError, match="len"):
        GuardScorer(tiny_guard).logits(["a", "b"], ["x"])

    class Inf(_EchoLM):
        def next_token_logits(self, prompts, token_ids):
            return np.array([[0.0, -np.inf]] * len(prompts))

    with pytest.raises(ValueError, match="non-finite label logits"):
        GuardScorer(Inf(), GuardTemplate("x", "{prompt}", "", " no", " yes")).logits(["p"])


def test_load_jsonl(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text('{"prompt": "a", "label": "unsafe"}\n\n{"prompt": "b", "label": 0}\n')
    d = load_jsonl(f)
    assert d.prompts == ["a", "b"] and d.responses is None and d.labels.tolist() == [1, 0]
    for text, match in (
        ("", "no examples"),
        ('{"prompt": "a", "label": 3}\n', "label=3"),
        ('{"prompt": "a", "label": 1}\nnot json\n', ":2: not valid JSON"),
        ('{"prompt": "a", "label": 1, "response": "r"}\n{"prompt": "b", "label": 0}\n', "every"),
    ):
        f.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_jsonl(f)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_jsonl(tmp_path / "missing.jsonl")


def test_corpus_shift_and_noise(seed):
    rng = np.random.default_rng(seed)
    c = moderation_corpus(2000, rng, unsafe_rate=0.3, label_noise=0.1)
    assert abs(c.clean.mean() - 0.3) < 0.05
    assert abs(np.mean(c.labels != c.clean) - 0.1) < 0.03
    s = moderation_corpus(500, rng, unsafe_rate=0.7, jailbreak=True, leet_p=1.0)
    harmful = [p for p, y in zip(s.prompts, s.clean) if y]
    assert all(any(ch in p for ch in "@31$0") for p in harmful)
    with pytest.raises(ValueError, match="unsafe_rate"):
        moderation_corpus(10, rng, unsafe_rate=1.5)


def test_evaluate_runs_a_saved_guard_on_user_jsonl(tiny_guard, tmp_path):
    from iclr25.core.context import RunContext
    from iclr25.core.lm import LMConfig
    from iclr25.papers.guard_calibration.experiments.evaluate import EvaluateConfig
    from iclr25.papers.guard_calibration.experiments.evaluate import run as run_evaluate

    c = moderation_corpus(60, np.random.default_rng(1))
    d = margin(GuardScorer(tiny_guard).logits(c.prompts))
    labels = (d > np.median(d)).astype(int)  # labels the barely trained guard ranks right
    for name, sl in (("test", slice(0, 40)), ("val", slice(40, 60))):
        rows = [{"prompt": p, "label": int(y)} for p, y in zip(c.prompts[sl], labels[sl])]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = tiny_guard.save(tmp_path / "guard")
    lm = LMConfig(backend="tiny", path=str(model), cache=str(tmp_path / "gen.sqlite"))
    common = {"lm": lm, "data_path": str(tmp_path / "test.jsonl")}
    fitted = run_evaluate(
        EvaluateConfig(**common, val_path=str(tmp_path / "val.jsonl")), RunContext(seed=0)
    )
    assert fitted["data/n"] == 40 and {"none/ece", "ts/ece", "cc/ece", "bc/ece"} <= set(fitted)
    assert (tmp_path / "gen.sqlite").is_file()  # the guard ran through lm.cache's CachedLM
    fixed = run_evaluate(EvaluateConfig(**common, temperature=1.0), RunContext(seed=0))
    assert fixed["ts/ece"] == fixed["none/ece"]  # T = 1 is the uncalibrated guard
    assert "ts/ece" not in run_evaluate(EvaluateConfig(**common), RunContext(seed=0))


@pytest.mark.parametrize("t", [0.0, -1.0, np.nan, np.inf])
def test_p_unsafe_rejects_a_bad_temperature(t):
    with pytest.raises(ValueError, match="temperature="):
        p_unsafe(np.zeros((2, 2)), t)


def test_scorer_rejects_bad_token_limits(tiny_guard):
    with pytest.raises(ValueError, match="max_response_tokens=0"):
        GuardScorer(tiny_guard, max_response_tokens=0)
    with pytest.raises(TypeError, match=r"max_marker_tokens=2\.5"):
        GuardScorer(tiny_guard, max_marker_tokens=2.5)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"n": 0}, ValueError),
        ({"n": 2.5}, TypeError),
        ({"unsafe_rate": np.nan}, ValueError),
        ({"label_noise": np.inf}, ValueError),
        ({"leet_p": -0.1}, ValueError),
    ],
)
def test_corpus_rejects_bad_arguments(kwargs, error):
    args = {"n": 10, "rng": np.random.default_rng(0), **kwargs}
    with pytest.raises(error, match=f"{next(iter(kwargs))}="):
        moderation_corpus(**args)


@pytest.mark.parametrize(
    "exp, field, value",
    [
        ("tiny_guard", "lr", float("inf")),
        ("tiny_guard", "lr", 0.0),
        ("tiny_guard", "label_noise", 0.5),
        ("tiny_guard", "unsafe_rate", 1.0),
        ("tiny_guard", "n_heads", 3),
        ("synthetic_logits", "bias", float("nan")),
        ("synthetic_logits", "scale", float("inf")),
        ("synthetic_logits", "n_null", 10),
        ("evaluate", "temperature", float("inf")),
        ("evaluate", "n_bins", 1),
        ("evaluate", "template", "gpt"),
    ],
)
def test_configs_reject_bad_values(exp, field, value):
    import dataclasses

    from iclr25.core import registry
    from iclr25.core.config import ConfigError

    cfg = registry.get_experiment(f"guard_calibration.{exp}").preset("smoke")
    with pytest.raises(ConfigError, match=f"{field}="):
        dataclasses.replace(cfg, **{field: value})
