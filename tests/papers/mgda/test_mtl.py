"""The multi-task training loop."""

import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.mgda.data import SequenceTasks, default_tasks
from iclr25.papers.mgda.mtl import (
    MTL_METHODS,
    SharedLSTM,
    Stepper,
    TrainSettings,
    delta_m,
    exact_gram_w,
    local_smoothness,
    task_losses,
)

DATA = SequenceTasks(default_tasks(3, 4, 10), 10, 4, 0.5)
SETTINGS = TrainSettings(steps=5, batch=16, lr=0.1, beta=0.5, rho=0.5, warm_start_steps=3)


def _model():
    with torch_seed(0):
        return SharedLSTM(channels=4, hidden=8, num_tasks=3)


def test_delta_m_hand_computed():
    tasks = DATA.tasks  # sum (lower), last (lower), sign (accuracy, higher)
    assert delta_m([1.0, 1.0, 0.5], [1.0, 1.0, 0.5], tasks) == 0
    # +10% error on task 0, -10% on task 1, accuracy 0.5 -> 0.55 (+10%: counts as -10)
    assert delta_m([1.1, 0.9, 0.55], [1.0, 1.0, 0.5], tasks) == pytest.approx(-10 / 3)


@pytest.mark.parametrize("method", MTL_METHODS)
def test_every_method_steps_and_keeps_weights_on_simplex(method, seed):
    model = _model()
    before = [p.detach().clone() for p in model.parameters()]
    st = Stepper(method, model, DATA, SETTINGS)
    g = torch.Generator().manual_seed(seed)
    for _ in range(3):
        st.step(DATA.sample(16, g), DATA.sample(16, g))
    w = st.state.weights
    assert torch.all(w >= 0) and float(w.sum()) == pytest.approx(1)
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


def test_ls_one_backward_equals_per_task_combination(seed):
    """LS's single backward of w^T F gives the same step as combining per-task gradients."""
    g = torch.Generator().manual_seed(seed)
    batch = DATA.sample(16, g)
    a, b = _model(), _model()
    Stepper("ls", a, DATA, SETTINGS).step(batch)
    losses = task_losses(b(batch[0]), batch[1], DATA.tasks)
    params = list(b.parameters())
    per_task = [torch.autograd.grad(losses[k], params, retain_graph=True) for k in range(3)]
    with torch.no_grad():
        for i, p in enumerate(params):
            p -= SETTINGS.lr * sum(per_task[k][i] for k in range(3)) / 3
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb)


def test_fa_estimate_tracks_exact_gram_product_for_small_steps(seed):
    g = torch.Generator().manual_seed(seed)
    batch = tuple(t.double() for t in DATA.sample(64, g))
    model = _model().double()  # float64: the loss decrease is ~1e-6 of the loss
    small = TrainSettings(**{**SETTINGS.__dict__, "lr": 1e-4})
    st = Stepper("mgda_fa", model, DATA, small)
    exact = exact_gram_w(model, DATA, batch, st.state.weights)
    st.step(batch)
    err = (st.last_estimate - exact).norm() / exact.norm()
    assert err < 0.01


def test_local_smoothness_leaves_model_unchanged(seed):
    model = _model()
    before = [p.detach().clone() for p in model.parameters()]
    batch = DATA.sample(16, torch.Generator().manual_seed(seed))
    gnorm, smooth = local_smoothness(model, DATA, batch, torch.full((3,), 1 / 3), 0.1)
    assert gnorm > 0 and smooth > 0
    for b, p in zip(before, model.parameters()):
        assert torch.equal(b, p)


def test_smg_needs_a_second_batch():
    st = Stepper("smg", _model(), DATA, SETTINGS)
    with pytest.raises(ValueError, match="second, independent minibatch"):
        st.step(DATA.sample(4, torch.Generator().manual_seed(0)))
    with pytest.raises(ValueError, match="method='adam' is not allowed"):
        Stepper("adam", _model(), DATA, SETTINGS)
