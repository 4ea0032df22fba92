"""Unlearning objectives, model mixing and the alpha calibration."""

import math

import numpy as np
import pytest
import torch

from iclr25.core.testing import needs
from iclr25.papers.unlearn_eval import method as U

# ---------------------------------------------------------------------------------------------
# Calibration on synthetic monotone functions (no model needed)


@pytest.mark.parametrize("target", [0.05, 0.5, 0.9, 0.999])
def test_calibration_hits_the_target_on_a_monotone_function(target):
    f = lambda a: 1.0 - a**2  # noqa: E731
    cal = U.calibrate_alpha(f, target, steps=12)
    assert cal.score >= target and cal.score == f(cal.alpha)
    assert abs(cal.alpha - math.sqrt(1 - target)) <= 2**-12
    assert cal.score - target < 0.02  # the paper's tolerance; here ~2 * 2^-12
    assert len(cal.history) == 2 + 12 and cal.history[0] == (0.0, 1.0)


def test_calibration_ends_and_errors():
    assert U.calibrate_alpha(lambda a: 1.0, 0.9).alpha == 1.0  # nothing to undo
    step = U.calibrate_alpha(lambda a: 1.0 if a < 0.3 else 0.0, 0.5, steps=20)
    assert 0.3 - 2**-20 <= step.alpha < 0.3
    with pytest.raises(ValueError, match=r"not reachable: score at alpha=0 is 0\.5"):
        U.calibrate_alpha(lambda a: 0.5, 0.9)
    with pytest.raises(ValueError, match=r"score\(1\)=nan"):
        U.calibrate_alpha(lambda a: 1.0 if a == 0 else float("nan"), 0.9)
    with pytest.raises(ValueError, match="target=inf"):
        U.calibrate_alpha(lambda a: 1.0, float("inf"))
    with pytest.raises(ValueError, match="steps=0"):
        U.calibrate_alpha(lambda a: 1.0, 0.5, steps=0)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"lr": 0.0}, ValueError, "lr=0.0"),
        ({"lr": float("nan")}, ValueError, "lr=nan"),
        ({"lr": float("inf")}, ValueError, "lr=inf"),
        ({"steps": 0}, ValueError, "steps=0"),
        ({"batch_size": 2.0}, TypeError, "batch_size=2.0"),
        ({"select": 1.5}, ValueError, "select=1.5"),
        ({"beta": -1}, ValueError, "beta=-1"),
        ({"retain_weight": float("-inf")}, ValueError, "retain_weight=-inf"),
    ],
)
def test_config_bad_values(kwargs, err, match):
    with pytest.raises(err, match=match):
        U.UnlearnConfig(**kwargs)


# ---------------------------------------------------------------------------------------------
# On tiny transformers models


@pytest.fixture(scope="module")
def setup(corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import encode_qa, tiny_causal_lm

    split = corpus.split(10)  # 2 of 20 authors, 10 items
    enc = lambda items, field="answer": encode_qa(  # noqa: E731
        tokenizer, [q.question for q in items], [getattr(q, field) for q in items]
    )
    model = tiny_causal_lm("gpt2", len(tokenizer), width=32, layers=2, heads=2, seed=0)
    return model, enc(split.forget), enc(split.retain[:40]), enc(split.forget, "refusal")


def _params(m):
    return {k: v.clone() for k, v in m.state_dict().items()}


def _same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _mean_nll(model, enc):
    from iclr25.papers.unlearn_eval.models import collate

    with torch.no_grad():
        return float(U.mean_answer_nll(model, *collate(enc)))


@needs("transformers")
def test_ga_raises_the_forget_nll_in_a_few_steps(setup):
    model, forget, _, _ = setup
    before = _mean_nll(model, forget)
    run = U.unlearn(model, forget, None, "ga", U.UnlearnConfig(steps=4, lr=1e-2, batch_size=5))
    assert _mean_nll(run.model, forget) > before + 1.0
    assert np.all(np.diff(run.losses) < 0)  # -NLL keeps falling


@needs("transformers")
def test_npo_reference_is_the_original_model(setup, tokenizer):
    from iclr25.papers.unlearn_eval.models import collate, sequence_nll, tiny_causal_lm

    model, forget, retain, _ = setup
    beta = 0.5
    # at the first step the model is its own reference: the loss is (2/beta) log 2 exactly
    run = U.unlearn(model, forget, retain, "npo", U.UnlearnConfig(steps=2, beta=beta))
    assert run.losses[0] == pytest.approx(2 / beta * math.log(2), rel=1e-6)
    # with another model as reference (say, one trained without the forget set) it is not
    other = tiny_causal_lm("gpt2", len(tokenizer), width=32, layers=2, heads=2, seed=9)
    x, t = collate(forget, range(8))
    with_other = float(U.npo_loss(model, other, x, t, beta).detach())
    assert with_other != pytest.approx(run.losses[0], rel=1e-3)
    # and its gradient there is GA's on the SEQUENCE NLL: d/dθ of -mean_b ℓ_b
    student = _clone(model)
    U.npo_loss(student, model, x, t, beta).backward()
    g_npo = [p.grad.clone() for p in student.parameters()]
    student.zero_grad()
    (-sequence_nll(student, x, t).mean()).backward()
    for a, p in zip(g_npo, student.parameters()):
        assert torch.allclose(a, p.grad, atol=1e-6, rtol=1e-4)


def _clone(model):
    import copy

    return copy.deepcopy(model).requires_grad_(True)


@needs("transformers")
@pytest.mark.parametrize("method", U.METHODS)
def test_every_method_runs_leaves_the_input_alone_and_is_seeded(setup, method):
    model, forget, retain, refusals = setup
    before = _params(model)
    cfg = U.UnlearnConfig(steps=3, batch_size=4, checkpoint_every=2, rmu_layer=1, seed=5)
    a = U.unlearn(model, forget, retain, method, cfg, refusals=refusals)
    b = U.unlearn(model, forget, retain, method, cfg, refusals=refusals)
    assert _same(_params(model), before)
    assert a.losses.shape == (3,) and np.all(np.isfinite(a.losses))
    assert np.array_equal(a.losses, b.losses) and _same(_params(a.model), _params(b.model))
    assert list(a.checkpoints) == [2] and not _same(_params(a.model), before)


@needs("transformers")
def test_tricks_change_the_ascent(setup):
    model, forget, _, _ = setup
    base = U.unlearn(model, forget, None, "ga", U.UnlearnConfig(steps=1))
    hot = U.unlearn(model, forget, None, "ga", U.UnlearnConfig(steps=1, temperature=2.0))
    sel = U.unlearn(model, forget, None, "ga", U.UnlearnConfig(steps=1, select=0.8))
    # the temperature flattens the logits (NLL towards log V); selection drops the worst tokens
    assert hot.losses[0] != base.losses[0] and -sel.losses[0] < -base.losses[0]


@needs("transformers")
def test_unlearn_bad_inputs(setup):
    model, forget, retain, _ = setup
    with pytest.raises(ValueError, match="method='sgd' is not allowed"):
        U.unlearn(model, forget, retain, "sgd")
    with pytest.raises(ValueError, match="method='gd' needs a non-empty retain set"):
        U.unlearn(model, forget, None, "gd")
    with pytest.raises(ValueError, match="needs refusals"):
        U.unlearn(model, forget, retain, "po")
    with pytest.raises(TypeError, match=r"forget must be token ids from models\.encode_qa"):
        U.unlearn(model, ["a question"], retain, "ga")
    with pytest.raises(TypeError, match="cfg must be an UnlearnConfig, got dict"):
        U.unlearn(model, forget, retain, "ga", {"steps": 3})
    with pytest.raises(ValueError, match="rmu_layer=7 is not allowed: the model has 2 blocks"):
        U.unlearn(model, forget, retain, "rmu", U.UnlearnConfig(rmu_layer=7))
    broken = _clone(model)
    with torch.no_grad():
        next(broken.parameters())[0, 0] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        U.unlearn(broken, forget, retain, "ga")


# ---------------------------------------------------------------------------------------------
# Model mixing


@needs("transformers")
def test_mixing_at_0_and_1_returns_the_two_models_exactly(setup):
    model, forget, _, _ = setup
    unl = U.unlearn(model, forget, None, "ga", U.UnlearnConfig(steps=2)).model
    o, u = _params(model), _params(unl)
    assert _same(_params(U.mix_models(model, unl, 0.0)), o)
    assert _same(_params(U.mix_models(model, unl, 1)), u)
    half = _params(U.mix_models(model, unl, 0.5))
    assert all(torch.allclose(half[k], (o[k] + u[k]) / 2) for k in o)
    assert _same(_params(model), o) and _same(_params(unl), u)  # inputs untouched


@needs("transformers")
def test_calibrate_mixing_on_a_linear_retention(setup):
    model, forget, _, _ = setup
    unl = U.unlearn(model, forget, None, "ga", U.UnlearnConfig(steps=2)).model
    o, u = _params(model), _params(unl)
    span = math.sqrt(sum(float(((u[k] - o[k]) ** 2).sum()) for k in o))

    def retention(m):  # 1 - alpha along the mixing line
        p = m.state_dict()
        return 1 - math.sqrt(sum(float(((p[k] - o[k]) ** 2).sum()) for k in o)) / span

    mixed, cal = U.calibrate_mixing(model, unl, retention, tau=0.9, steps=12)
    assert abs(cal.alpha - 0.1) <= 2**-12 + 1e-6 and cal.score >= cal.target - 1e-6
    assert _same(_params(mixed), _params(U.mix_models(model, unl, cal.alpha)))


@needs("transformers")
def test_mixing_bad_inputs(setup, tokenizer):
    from iclr25.papers.unlearn_eval.models import tiny_causal_lm

    model = setup[0]
    with pytest.raises(ValueError, match=r"alpha=1\.5"):
        U.mix_models(model, model, 1.5)
    with pytest.raises(ValueError, match="alpha=nan"):
        U.mix_models(model, model, float("nan"))
    with pytest.raises(TypeError, match="alpha='1'"):
        U.mix_models(model, model, "1")
    broken = _clone(model)
    with torch.no_grad():
        next(broken.parameters())[0, 0] = float("inf")
    with pytest.raises(ValueError, match=r"unlearned\['transformer.wte.weight'\] has 1 non-finite"):
        U.mix_models(model, broken, 0.5)
    llama = tiny_causal_lm("llama", len(tokenizer), width=32, layers=2, heads=2)
    with pytest.raises(ValueError, match="different parameters"):
        U.mix_models(model, llama, 0.5)
    with pytest.raises(ValueError, match=r"tau=0\.0"):
        U.calibrate_mixing(model, model, lambda m: 1.0, tau=0.0)
