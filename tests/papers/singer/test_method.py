"""SINGER: analytic derivatives, the parameter graph, equivariance, semigroup, noise, the
label-free loss (exact drift, finite differences), references and bad input."""

import math
from dataclasses import dataclass

import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.singer import (
    HJB,
    NODE,
    PDE,
    PINO,
    SINGER,
    Adam,
    FourierNet,
    Heat,
    HeatNet,
    HJBNet,
    ProjectedDynamics,
    cole_hopf_truth,
    dropout_noise,
    heat_truth,
    initial_conditions,
    operator,
    parameter_graph,
    relative_l2,
    residual_loss,
    rk4,
    solve,
)
from iclr25.papers.singer import reference as ref
from iclr25.papers.singer.data import uniform_points
from iclr25.papers.singer.method import fit, perturbation_growth

D = torch.float64


def _close(a, b, rtol=1e-7, atol=1e-7):
    """assert_close without torch.testing (whose first call imports torch._dynamo, ~4 s)."""
    assert a.shape == b.shape, (a.shape, b.shape)
    err = ((a - b).abs() - rtol * b.abs()).max().item()
    assert err <= atol, f"max |a - b| - rtol |b| = {err:.3g} > atol {atol:g}"


def _gen(seed, k=0):
    return torch.Generator().manual_seed(1000 * seed + k)


def _theta(subnet, seed, n=1, scale=0.7):
    return scale * torch.randn(n, subnet.num_params, generator=_gen(seed, 1), dtype=D)


def _model(subnet, seed, **kw):
    torch.manual_seed(seed)  # test-only: module init
    return SINGER(subnet, **kw).double()


@pytest.mark.parametrize("cls", [HeatNet, HJBNet, FourierNet])
def test_analytic_derivatives_match_autograd_reference(cls, seed):
    sub = cls(3, 4)
    theta = _theta(sub, seed)[0]
    x = (2 * torch.rand(6, 3, generator=_gen(seed, 2), dtype=D) - 1).clone()
    u, grad, lap, jac = sub.evaluate(theta[None], x)
    ru, rg, rl, rj = ref.autograd_derivatives(sub, theta, x)
    _close(u[0], ru)
    _close(grad[0], rg)
    _close(lap[0], rl)
    _close(jac[0], rj)
    _close(sub.jacobian(theta[None], x), jac)
    assert torch.equal(sub(theta[None], x), u)  # the value-only path is the same computation


@pytest.mark.parametrize("cls", [HeatNet, HJBNet])
def test_parameter_graph_matches_hand_written_edges(cls):
    sub = cls(3, 4)
    names = [s.name for s in sub.specs for _ in range(s.size)]
    index = [
        idx
        for s in sub.specs
        for idx in torch.cartesian_prod(*[torch.arange(n) for n in s.shape]).reshape(s.size, -1)
    ]
    g = parameter_graph(sub)
    got = set()
    for a, b in zip(g.src.tolist(), g.dst.tolist(), strict=True):
        if a < b:
            got.add((names[a], tuple(index[a].tolist()), names[b], tuple(index[b].tolist())))
    assert got == ref.naive_edges(sub)
    loops = int((g.src == g.dst).sum())
    assert loops == sub.num_params and len(g.src) == sub.num_params + 2 * len(got)
    directed = parameter_graph(sub, directed=True)
    assert len(directed.src) == sub.num_params + len(got)


def _hidden_perm(sub, perm_hid, perm_in):
    """The permutation of flat θ induced by permuting hidden neurons and input coordinates."""
    idx = torch.arange(sub.num_params)
    parts = sub.split(idx[None])
    out = {}
    for s in sub.specs:
        t = parts[s.name][0]
        for ax, axis_name in enumerate(s.axes):
            t = t.index_select(ax, perm_hid if axis_name == "hid" else perm_in)
        out[s.name] = t[None]
    return sub.join(**out)[0]


@pytest.mark.parametrize("cls", [HeatNet, HJBNet])
def test_drift_is_equivariant_to_hidden_and_input_permutations(cls, seed):
    sub = cls(3, 5)
    model = _model(sub, seed, hidden=8).eval()
    theta = _theta(sub, seed, n=2)
    g = _gen(seed, 3)
    perm = _hidden_perm(sub, torch.randperm(5, generator=g), torch.randperm(3, generator=g))
    assert not torch.equal(perm, torch.arange(sub.num_params))
    _close(model(theta[:, perm]), model(theta)[:, perm])
    # permuting hidden neurons alone leaves the function u unchanged
    hid = _hidden_perm(sub, torch.randperm(5, generator=g), torch.arange(3))
    x = torch.rand(7, 3, generator=g, dtype=D)
    _close(sub(theta[:, hid], x), sub(theta, x))


def test_semigroup_in_eval_mode_and_noise_breaks_it_in_training(seed):
    sub = HeatNet(3, 4)
    model = _model(sub, seed, hidden=8, noise=0.3)
    theta = _theta(sub, seed, n=3)
    model.eval()
    whole = solve(model, theta, 0.1, 8)
    halves = solve(model, solve(model, theta, 0.05, 4), 0.05, 4)
    _close(whole, halves, atol=1e-12, rtol=1e-10)
    # a finer solve agrees to RK4 accuracy: the flow is autonomous and smooth
    _close(solve(model, theta, 0.1, 32), whole, atol=1e-6, rtol=1e-6)
    model.train()
    noisy = rk4(lambda t, th: model(th, t, 7), theta, 0.1, 8)
    assert (noisy - whole).abs().max() > 1e-3


def test_noise_is_a_function_of_seed_and_time(seed):
    v = torch.ones(4, 50, dtype=D)
    a = dropout_noise(v, 0.2, seed, 0.05)
    assert torch.equal(a, dropout_noise(v, 0.2, seed, 0.05))
    assert not torch.equal(a, dropout_noise(v, 0.2, seed, 0.06))
    assert set(a.unique().tolist()) <= {0.0, 1 / 0.8}
    assert torch.equal(dropout_noise(v, 0.0, seed, 0.05), v)
    model = _model(HeatNet(2, 3), seed, hidden=4, noise=0.5)
    th = _theta(HeatNet(2, 3), seed, n=2)
    model.eval()
    assert torch.equal(model(th, 0.1, 3), model(th))  # eval mode: no noise
    model.train()
    assert torch.equal(model(th, 0.1, 3), model(th, 0.1, 3))
    assert torch.equal(model(th, 0.1), model.eval()(th))  # no seed: no noise


def test_exact_fourier_drift_has_zero_residual_and_matches_closed_form(seed):
    sub = FourierNet(4, 3)
    theta = _theta(sub, seed, n=2, scale=0.5)
    x = 2 * torch.rand(64, 4, generator=_gen(seed, 4), dtype=D) - 1
    exact = lambda th, t=0.0, s=None: sub.exact_heat_drift(th)  # noqa: E731
    zero = lambda th, t=0.0, s=None: torch.zeros_like(th)  # noqa: E731
    loss = residual_loss(exact, sub, Heat(), theta, x, 0.1, 10, 2.0**4)
    baseline = residual_loss(zero, sub, Heat(), theta, x, 0.1, 10, 2.0**4)
    assert baseline > 1e-2 and loss < 1e-20
    _close(
        solve(exact, theta, 0.1, 100),
        ref.fourier_heat_solution(sub, theta, 0.1),
        rtol=1e-6,
        atol=1e-8,
    )


def test_residual_integrand_is_the_time_derivative_of_u(seed):
    sub = HeatNet(3, 4)
    model = _model(sub, seed, hidden=8).eval()
    theta = _theta(sub, seed, n=2)
    x = torch.rand(5, 3, generator=_gen(seed, 5), dtype=D)
    h = 1e-5
    with torch.no_grad():
        v = model(theta)
        fd = (sub(theta + h * v, x) - sub(theta - h * v, x)) / (2 * h)
    _close(torch.einsum("bnp,bp->bn", sub.jacobian(theta, x), v), fd)


def test_loss_gradient_is_the_detached_one_by_finite_differences(seed):
    sub = HeatNet(2, 3)
    model = _model(sub, seed, hidden=4, layers=1, message_depth=1)
    model.eval()  # no noise: a deterministic function of the weights
    theta = _theta(sub, seed, n=2, scale=0.5)
    x = 2 * torch.rand(16, 2, generator=_gen(seed, 6), dtype=D) - 1
    args = (sub, Heat(), theta, x, 0.1, 3, 4.0)
    loss = residual_loss(model, *args)
    w = model.readout.weight
    (grad,) = torch.autograd.grad(loss, w)
    states = ref.stage_states(model, theta, 0.1, 3)
    same = ref.loss_with_frozen_operator(model, *args, states)
    _close(same, loss)
    h, fd = 1e-6, torch.zeros_like(w)
    with torch.no_grad():
        for i in range(w.shape[0]):
            for j in range(w.shape[1]):
                w[i, j] += h
                up = ref.loss_with_frozen_operator(model, *args, states)
                w[i, j] -= 2 * h
                down = ref.loss_with_frozen_operator(model, *args, states)
                w[i, j] += h
                fd[i, j] = (up - down) / (2 * h)
    _close(grad, fd, rtol=1e-5, atol=1e-8)


def test_oracle_recovers_the_exact_fourier_drift(seed):
    sub = FourierNet(3, 3)
    theta = _theta(sub, seed, n=2, scale=0.8)
    x = 2 * torch.rand(200, 3, generator=_gen(seed, 7), dtype=D) - 1
    oracle = ProjectedDynamics(sub, Heat(), x, ridge=1e-12)
    _close(oracle(theta), sub.exact_heat_drift(theta), atol=1e-6, rtol=1e-6)


def test_oracle_solves_a_batch_with_two_threads(seed):
    # torch 2.13's batched float64 LU fails on CPU with 2 threads at this size (MKL DLASWP);
    # the oracle's Cholesky solve must not.
    sub = HeatNet(10, 16)
    theta = _theta(sub, seed, n=32, scale=0.5)
    x = 2 * torch.rand(256, 10, generator=_gen(seed, 11), dtype=D) - 1
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        v = ProjectedDynamics(sub, Heat(), x)(theta)
    finally:
        torch.set_num_threads(before)
    assert v.shape == theta.shape and torch.isfinite(v).all()


def test_monte_carlo_heat_truth_matches_the_fourier_solution(seed):
    sub = FourierNet(3, 2)
    theta = _theta(sub, seed, n=2, scale=0.6)
    x = 2 * torch.rand(10, 3, generator=_gen(seed, 8), dtype=D) - 1
    mc = heat_truth(lambda p: sub(theta, p), x, 0.05, _gen(seed, 9), samples=8192)
    exact = sub(ref.fourier_heat_solution(sub, theta, 0.05), x)
    assert (mc - exact).abs().max() < 0.03 * theta.abs().max()


def test_cole_hopf_truth_matches_the_quadratic_solution(seed):
    lam = 0.3 + 0.1 * seed
    x = torch.randn(12, 4, generator=_gen(seed, 10), dtype=D)
    g = lambda p: lam * (p**2).sum(-1)[None]  # noqa: E731
    mc = cole_hopf_truth(g, x, 0.5, _gen(seed, 11), eps=1.0, samples=16384)
    exact = ref.quadratic_hjb_solution(lam, x, 0.5, 1.0)
    _close(mc[0], exact, rtol=0.03, atol=0.03)


def test_relative_l2_is_squared_and_relative():
    truth = torch.tensor([[1.0, -1.0, 2.0]])
    assert relative_l2(2 * truth, truth).item() == pytest.approx(1.0, rel=1e-5)  # no square root
    assert relative_l2(truth + 0.1, truth).item() == pytest.approx(0.01 / 2, rel=1e-5)
    two = torch.cat([truth, 3 * truth])
    assert relative_l2(two + 0.1, two, pooled=True).item() == pytest.approx(0.01 / 10, rel=1e-5)


def test_adam_matches_hand_computed_steps():
    a = torch.tensor([1.0, -2.0], dtype=D, requires_grad=True)
    opt, lr = Adam([a], lr=0.1), 0.1
    g1 = torch.tensor([3.0, -0.5], dtype=D)
    a.grad = g1.clone()
    opt.step()  # first step: bias-corrected m/sqrt(v) = g/|g|, a move of lr per coordinate
    _close(a.detach(), torch.tensor([0.9, -1.9], dtype=D))
    g2 = torch.tensor([1.0, 2.0], dtype=D)
    a.grad = g2.clone()
    opt.step()
    m = (0.9 * 0.1 * g1 + 0.1 * g2) / (1 - 0.9**2)
    v = (0.999 * 0.001 * g1**2 + 0.001 * g2**2) / (1 - 0.999**2)
    expect = torch.tensor([0.9, -1.9], dtype=D) - lr * m / (v.sqrt() + 1e-8)
    _close(a.detach(), expect)
    assert a.grad is None


def test_transfer_shares_weights_and_applies_to_other_width_and_dim(seed):
    sub = HeatNet(3, 4)
    model = _model(sub, seed, hidden=8).eval()
    for other in (HeatNet(3, 6), HeatNet(5, 4)):
        moved = model.transfer(other)
        assert all(p is q for p, q in zip(moved.parameters(), model.parameters(), strict=True))
        out = moved(_theta(other, seed, n=2))
        assert out.shape == (2, other.num_params) and torch.isfinite(out).all()
    assert model(_theta(sub, seed)).shape == (1, sub.num_params)  # the original still works


def test_baselines_shapes_and_pino_initial_condition(seed):
    sub = HJBNet(2, 3)
    theta = initial_conditions(sub, 4, _gen(seed, 13))
    torch.manual_seed(seed)
    node = NODE(sub, 16, 2)
    assert node(theta).shape == theta.shape
    x = torch.randn(8, 2, generator=_gen(seed, 14))
    for derivative in ("difference", "autograd"):
        pino = PINO(sub, 16, 2, horizon=0.5, derivative=derivative)
        assert torch.equal(pino(theta, 0.0), theta)  # c_skip(0) = 1, c_out(0) = 0
        assert pino(theta, 0.5).shape == theta.shape
        loss = pino.loss(HJB(), theta, x, steps=3)
        loss.backward()
        assert loss.item() > 0 and pino.embed.inp.weight.grad is not None


def _pino_loss_loop(pino, pde, theta0, x, volume, steps, exact):
    """PINO's loss by a plain RK4 loop on dr/dt = rate(t), with per-sample autograd in t."""

    def rate(t):
        rows = []
        for th0 in theta0:
            th0 = th0[None]
            if exact:
                tt = torch.tensor(t, dtype=th0.dtype, requires_grad=True)
                theta = pino(th0, tt)
                dot = torch.stack(
                    [
                        torch.autograd.grad(theta[0, j], tt, retain_graph=True)[0]
                        for j in range(theta.shape[1])
                    ]
                )
                u = pino.subnet(theta, x)[0]
                jac = torch.stack(
                    [
                        torch.autograd.grad(u[i], theta, retain_graph=True)[0][0]
                        for i in range(len(x))
                    ]
                )
                dudt = jac @ dot
            else:
                dt = pino.horizon / 100
                theta = pino(th0, t)
                dudt = ((pino.subnet(pino(th0, t + dt), x) - pino.subnet(theta, x)) / dt)[0]
            res = dudt - operator(pino.subnet, pde, theta.detach(), x)[0]
            rows.append(volume * (res * res).mean())
        return torch.stack(rows).mean()

    h, r = pino.horizon / steps, 0.0
    for i in range(steps):
        k1, k2, k4 = rate(i * h), rate(i * h + h / 2), rate(i * h + h)
        r = r + h / 6 * (k1 + 4 * k2 + k4)
    return r


@pytest.mark.parametrize("derivative", ["difference", "autograd"])
def test_pino_loss_equals_rk4_loop(seed, derivative):
    sub = HeatNet(2, 3)
    theta = initial_conditions(sub, 3, _gen(seed, 16)).double()
    x = uniform_points(5, 2, _gen(seed, 17)).double()
    with torch_seed(seed):
        pino = PINO(sub, 8, 1, horizon=0.1, derivative=derivative).double()
    fast = pino.loss(Heat(), theta, x, volume=4.0, steps=2)
    slow = _pino_loss_loop(pino, Heat(), theta, x, 4.0, 2, derivative == "autograd")
    assert torch.allclose(fast, slow, rtol=1e-9)


def test_pino_rejects_bad_options():
    with pytest.raises(ValueError, match="derivative='spectral'"):
        PINO(HeatNet(2, 3), derivative="spectral")
    with pytest.raises(ValueError, match="horizon=0"):
        PINO(HeatNet(2, 3), horizon=0)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match=r"horizon=.*finite"):
            PINO(HeatNet(2, 3), horizon=bad)
        with pytest.raises(ValueError, match=r"sigma=.*finite"):
            PINO(HeatNet(2, 3), sigma=bad)


def test_heat_initial_conditions_mix_ball_and_gaussian(seed):
    sub = HeatNet(10, 16)
    theta = initial_conditions(sub, 400, _gen(seed, 15))
    norms = theta.norm(dim=1)
    radius = sub.num_params / 50
    in_ball = norms <= radius + 1e-6
    assert 150 <= int(in_ball.sum()) <= 250  # the ball half (the Gaussian norms are ≈ 10)
    assert (norms[~in_ball] - math.sqrt(0.5 * sub.num_params)).abs().max() < 3


BAD = [
    (lambda: HeatNet(0, 4), "dim=0 is not allowed"),
    (lambda: SINGER(HeatNet(2, 3), noise=1.0), "noise=1.0 is not allowed"),
    (
        lambda: SINGER(HeatNet(2, 3))(torch.zeros(2, 17)),
        r"theta has shape \(2, 17\): this drift is bound to HeatNet\(dim=2, width=3\) with 14",
    ),
    (
        lambda: NODE(HeatNet(2, 3))(torch.zeros(1, 20)),
        r"theta has shape \(1, 20\): this NODE was built for HeatNet\(dim=2, width=3\) with 14",
    ),
    (lambda: SINGER(HeatNet(2, 3)).transfer(HJBNet(2, 3)), "is not a HeatNet"),
    (
        lambda: residual_loss(
            SINGER(HeatNet(2, 3)), HeatNet(2, 3), Heat(), torch.zeros(1, 15), torch.zeros(4, 2), 0.1
        ),
        r"theta0 has shape \(1, 15\): HeatNet\(dim=2, width=3\) needs \(B, 14\)",
    ),
    (
        lambda: residual_loss(
            SINGER(HeatNet(2, 3)),
            HeatNet(2, 3),
            Heat(),
            torch.full((1, 14), float("nan")),
            torch.zeros(4, 2),
            0.1,
        ),
        "theta0 has 14 non-finite entries",
    ),
    (
        lambda: residual_loss(
            SINGER(HeatNet(2, 3)), HeatNet(2, 3), Heat(), torch.zeros(1, 14), torch.zeros(4, 3), 0.1
        ),
        r"x has shape \(4, 3\): HeatNet\(dim=2, width=3\) needs points of shape \(n, 2\)",
    ),
    (lambda: rk4(lambda t, y: y, torch.zeros(1), 1.0, 0), "steps=0 is not allowed"),
    (
        lambda: solve(SINGER(HeatNet(2, 3)), torch.full((2, 14), float("inf")), 0.1),
        "theta0 has 28 non-finite entries",
    ),
]


@pytest.mark.parametrize(("call", "needle"), BAD)
def test_bad_input_raises_one_clear_error(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("drift.noise=1.5", "noise=1.5 is not allowed"),
        ("drift.noise=-0.1", "noise=-0.1 is not allowed"),
        ("dim=0", "dim=0 is not allowed"),
        ("test.mc_samples=0", "mc_samples=0 is not allowed"),
    ],
)
def test_bad_config_raises_before_anything_is_written(tmp_path, override, needle):
    from iclr25.core.config import ConfigError
    from iclr25.core.runner import run_experiment

    with pytest.raises(ConfigError, match=needle):
        run_experiment("singer.heat", preset="smoke", overrides=[override], out=tmp_path, jobs=1)
    assert not any(tmp_path.iterdir())


NON_FINITE = [
    (lambda v: SINGER(HeatNet(2, 3), noise=v), "noise"),
    (lambda v: rk4(lambda t, y: y, torch.zeros(1), v, 2), "horizon"),
    (lambda v: solve(SINGER(HeatNet(2, 3)).eval(), torch.zeros(1, 14), v), "horizon"),
    (
        lambda v: perturbation_growth(
            SINGER(HeatNet(2, 3)).eval(), torch.ones(1, 14), 0.1, 2, v, torch.Generator()
        ),
        "rel",
    ),
    (lambda v: fit(None, [], None, None, 3, 2, v, torch.Generator()), "lr"),
]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize(("call", "name"), NON_FINITE, ids=[n for _, n in NON_FINITE])
def test_non_finite_numbers_are_refused(call, name, value):
    with pytest.raises(ValueError, match=f"{name}={value!r} is not allowed: must be a finite"):
        call(value)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: HeatNet(3, 2.5), "width=2.5 is not allowed: must be an int"),
        (lambda: HJBNet(True, 3), "dim=True is not allowed: must be an int"),
        (lambda: SINGER(HeatNet(2, 3), hidden=8.0), "hidden=8.0 is not allowed: must be an int"),
        (lambda: rk4(lambda t, y: y, torch.zeros(1), 1.0, 2.0), "steps=2.0 is not allowed"),
        (lambda: fit(None, [], None, None, 3, "2", 0.1, torch.Generator()), "batch='2'"),
    ],
)
def test_wrong_kinds_of_numbers_are_refused(call, needle):
    with pytest.raises(TypeError, match=needle):
        call()


@pytest.mark.parametrize(
    ("group", "field"),
    [
        (None, "lr"),
        (None, "horizon"),
        (None, "perturbation"),
        (None, "point_scale"),
        ("DriftConfig", "noise"),
    ],
)
def test_configs_refuse_non_finite_numbers(group, field):
    from iclr25.core.config import ConfigError
    from iclr25.papers.singer import training

    config = getattr(training, group or "SingerConfig")
    for bad in (math.nan, math.inf):
        with pytest.raises(ConfigError, match=f"{field}={bad!r} is not allowed"):
            config(**{field: bad})


@dataclass(frozen=True)
class Decay:
    """A user's own equation through the `PDE` protocol: linear decay u_t = -λ u."""

    lam: float = 0.8
    name: str = "decay"

    def rhs(self, x, u, grad, lap):
        return -self.lam * u


def test_a_user_pde_plugs_in_end_to_end(seed):
    pde, sub = Decay(), HeatNet(2, 4)
    assert isinstance(pde, PDE)
    theta0 = _theta(sub, seed, n=3)
    x = uniform_points(64, 2, _gen(seed, 2)).double()
    horizon, vol = 0.5, 4.0
    # the exact drift scales the output layer: dc/dt = -λ c, so u(t) = e^{-λt} u_0 and r(T) = 0
    is_c = torch.zeros(sub.num_params, dtype=torch.bool)
    is_c[-sub.width :] = True

    def exact(th, t, noise_seed=None):
        return torch.where(is_c, -pde.lam * th, torch.zeros_like(th))

    assert residual_loss(exact, sub, pde, theta0, x, horizon, steps=8, volume=vol) < 1e-20
    # no motion: the residual rate is |Ω| mean λ² u_0², constant, so r(T) = T times it
    still = residual_loss(
        lambda th, t, s=None: torch.zeros_like(th),
        sub,
        pde,
        theta0,
        x,
        horizon,
        steps=8,
        volume=vol,
    )
    expect = horizon * vol * (pde.lam**2 * sub(theta0, x) ** 2).mean(-1).mean()
    _close(still, expect, rtol=1e-10, atol=0)
    # SINGER trains on it and its solution approaches e^{-λT} u_0
    model = _model(sub, seed, hidden=8, layers=2)
    truth = math.exp(-pde.lam * horizon) * sub(theta0, x)

    def error():
        return relative_l2(sub(solve(model.eval(), theta0, horizon, 4), x), truth, pooled=True)

    before = error()
    model.train()
    curve = fit(
        lambda th, pts, s: residual_loss(model, sub, pde, th, pts, horizon, 4, vol, s),
        list(model.parameters()),
        lambda n: _theta(sub, seed + 1, n=n),
        lambda: x,
        steps=60,
        batch=4,
        lr=3e-3,
        generator=_gen(seed, 3),
    )
    assert sum(curve[-10:]) < 0.5 * sum(curve[:10])
    assert error() < 0.5 * before


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_fit_schedule_sets_each_steps_learning_rate(schedule):
    """With a constant gradient every Adam step moves a parameter by exactly its step's lr, so
    the parameter after `steps` steps is minus the sum of the schedule's learning rates."""
    steps, lr = 7, 0.01
    p = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    fit(
        lambda th, x, s: p.sum(),
        [p],
        lambda n: torch.zeros(n, 1),
        lambda: torch.zeros(1, 1),
        steps,
        1,
        lr,
        torch.Generator().manual_seed(0),
        schedule=schedule,
    )
    if schedule == "constant":
        rates = [lr] * steps
    else:
        rates = [lr * 0.5 * (1 + math.cos(math.pi * s / steps)) for s in range(steps)]
    _close(p.detach(), torch.tensor([-sum(rates)], dtype=torch.float64), rtol=1e-6, atol=0)


def test_fit_refuses_an_unknown_schedule():
    with pytest.raises(ValueError, match="schedule='linear' is not allowed: use one of"):
        fit(None, [], None, None, 3, 2, 0.1, torch.Generator(), schedule="linear")
