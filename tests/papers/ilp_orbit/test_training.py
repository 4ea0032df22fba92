"""Training loop, prediction on a user's MPS file, Adam, and bad input."""

from collections import defaultdict

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25.core.seeding import torch_seed
from iclr25.core.testing import needs
from iclr25.papers.ilp_orbit import training
from iclr25.papers.ilp_orbit.data import bin_packing, generate, label
from iclr25.papers.ilp_orbit.ilp import ILP, load_ilp, write_ilp
from iclr25.papers.ilp_orbit.method import BipartiteGNN
from iclr25.papers.ilp_orbit.reference import adam_steps
from iclr25.papers.ilp_orbit.training import (
    Adam,
    TrainSettings,
    aligned_bce,
    make_example,
    predict,
    train,
)

pytestmark = needs("pynauty", "highspy")


@pytest.fixture(scope="module")
def examples():
    ilps = generate("bpp", 12, np.random.default_rng(5), n_items=4)
    return [make_example(ilp, label(ilp)) for ilp in ilps]


def _model(seed=0):
    with torch_seed(seed):
        return BipartiteGNN(emb=16)


def test_training_keeps_the_best_validation_checkpoint_and_is_reproducible(examples, seed):
    settings = TrainSettings(epochs=4, batch_size=4, lr=3e-3, draws=2, emb=16)
    runs = [
        train(
            examples[:8],
            examples[8:],
            "orbit_plus",
            settings,
            np.random.default_rng(seed),
            model=_model(seed),
        )
        for _ in range(2)
    ]
    a, b = runs
    assert a.val_loss == b.val_loss and a.train_loss == b.train_loss
    assert len(a.val_loss) == 4 and a.best_epoch == int(np.argmin(a.val_loss)) + 1
    assert a.val_loss[0] < a.train_loss[0] * 2 and a.val_top_m.shape == (4,)
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(p, q)


def test_training_lowers_the_loss(examples):
    settings = TrainSettings(epochs=6, batch_size=4, lr=3e-3, draws=2, emb=16)
    res = train(
        examples[:8], examples[8:], "orbit", settings, np.random.default_rng(0), model=_model()
    )
    assert res.train_loss[-1] < res.train_loss[0]


def test_predict_on_a_users_mps_file(tmp_path, examples):
    settings = TrainSettings(epochs=2, batch_size=4, draws=2, emb=16)
    model = train(
        examples[:8], examples[8:], "orbit_plus", settings, np.random.default_rng(0), model=_model()
    ).model
    path = write_ilp(bin_packing(np.random.default_rng(9), n_items=4), tmp_path / "user.mps")
    ilp = load_ilp(path)
    prob = predict(model, "orbit_plus", ilp, rng=np.random.default_rng(1))
    assert prob.shape == (ilp.num_vars,) and np.all((prob >= 0) & (prob <= 1))
    again = predict(model, "orbit_plus", ilp, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(prob, again)


def test_adam_matches_the_textbook_update(seed):
    rng = np.random.default_rng(seed)
    theta0 = rng.normal(size=5)
    grads = [rng.normal(size=5) * 10.0**k for k in range(-2, 3) for _ in range(3)]
    p = torch.nn.Parameter(torch.tensor(theta0))
    opt = Adam([p], lr=1e-2)
    for g in grads:
        opt.zero_grad()
        p.grad = torch.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), adam_steps(theta0, grads, 1e-2), rtol=1e-12)


def test_bad_training_input_is_named(examples):
    settings = TrainSettings(epochs=1, emb=16)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="scheme='orbit\\+' is not allowed"):
        train(examples[:2], examples[2:4], "orbit+", settings, rng)
    with pytest.raises(ValueError, match="train_set is empty"):
        train([], examples[2:4], "orbit", settings, rng)
    unlabelled = make_example(examples[0].ilp)
    with pytest.raises(ValueError, match="val_set: every example needs a label"):
        train(examples[:2], [unlabelled], "orbit", settings, rng)
    with pytest.raises(ValueError, match="epochs=0 is not allowed"):
        TrainSettings(epochs=0)
    with pytest.raises(ValueError, match="lr=0 is not allowed"):
        TrainSettings(lr=0)


def test_labelled_examples_must_be_binary(examples):
    ilp = examples[0].ilp
    wide = ILP(
        ilp.c,
        ilp.A,
        ilp.b,
        ilp.sense,
        ilp.lb,
        np.full(ilp.num_vars, 3.0),
        ilp.integer,
        ilp.var_names,
        ilp.con_names,
        name="wide",
    )
    with pytest.raises(ValueError, match=r"variable 'x_0_0' is not binary .*needs 0/1"):
        make_example(wide, label(ilp))


def test_augmentation_draws_come_from_a_fixed_pool(examples, monkeypatch, seed):
    seen = defaultdict(set)
    real = training.collate

    def spy(exs, codes):
        for ex, code in zip(exs, codes):
            seen[id(ex)].add(code.tobytes())
        return real(exs, codes)

    monkeypatch.setattr(training, "collate", spy)
    settings = TrainSettings(epochs=20, batch_size=4, draws=2, emb=16)
    train(examples[:8], examples[8:], "position", settings, np.random.default_rng(seed), _model())
    # each training instance is loaded 20 times and always with one of its own 2 draws
    assert [len(seen[id(ex)]) for ex in examples[:8]] == [2] * 8
    # each validation instance keeps its single draw across all 21 evaluations
    assert [len(seen[id(ex)]) for ex in examples[8:]] == [1] * 4


def test_the_loss_is_taken_after_label_alignment(examples, seed):
    ex = next(e for e in examples if e.symmetry.columns is not None)
    cols = ex.symmetry.columns
    rng = np.random.default_rng(seed)
    image = ex.label.copy()  # an equally optimal, column-permuted label
    image[cols.matrix[:, np.roll(np.arange(cols.num_columns), 1 + rng.integers(3))]] = ex.label[
        cols.matrix
    ]
    assert not np.array_equal(image, ex.label)
    logits = torch.from_numpy(4.0 * (2 * image - 1)).float()
    sl = [slice(0, ex.ilp.num_vars)]
    aligned = aligned_bce(logits, [ex], sl, align=True)
    target = torch.from_numpy(image).float()
    expected = F.binary_cross_entropy_with_logits(logits, target, reduction="sum")
    assert float(aligned[0]) == pytest.approx(float(expected), rel=1e-6)
    assert aligned_bce(logits, [ex], sl, align=False)[0] > aligned[0] + 1.0
