"""The sequence generator and oracle, the baselines against references, the metric helpers."""

import itertools

import numpy as np
import pytest
import torch

from iclr25.papers.dhtm import reference
from iclr25.papers.dhtm.baselines import (
    CloneHMM,
    LSTMPredictor,
    MarkovCounts,
    RWKVCell,
    RWKVPredictor,
)
from iclr25.papers.dhtm.data import END, N_STATES, N_SYMBOLS, SequenceProcess, make_phases
from iclr25.papers.dhtm.training import recovery_time, windowed


def test_phases_are_aliased_and_switch_only_tails(seed):
    a, b = make_phases(np.random.default_rng(seed))
    for proc in (a, b):
        assert (proc.seqs[:, -1] == END).all()
        seen = [{int(x) for x in s[:-1]} for s in proc.seqs]
        assert all(sum(sym in s for s in seen) >= 2 for sym in range(N_SYMBOLS))
        assert proc.probs.sum() == pytest.approx(1.0)
    assert (a.seqs[:, :-2] == b.seqs[:, :-2]).all()  # heads and middles unchanged
    assert (a.seqs[:, -2] != b.seqs[:, -2]).sum() >= 2


def test_oracle_by_hand():
    seqs = np.array([[0, 1, 2, END], [3, 1, 4, END]])
    proc = SequenceProcess(seqs, np.array([0.25, 0.75]))
    pred, sf = proc.oracle(np.array([0, 1, 2, END]), gamma=0.5, horizon=10)
    assert pred[0][1] == 1.0 and pred[1][2] == 1.0 and pred[2][END] == 1.0
    np.testing.assert_allclose(sf[0][[1, 2, END]], [1.0, 0.5, 0.25])
    assert sf[-1].sum() == 0.0
    # a shared first symbol mixes the sequences by their probabilities
    proc2 = SequenceProcess(np.array([[0, 1, END], [0, 2, END]]), np.array([0.25, 0.75]))
    pred2, _ = proc2.oracle(np.array([0, 2, END]), 0.5, 10)
    np.testing.assert_allclose(pred2[0][[1, 2]], [0.25, 0.75])


def _path_predictive(proc: SequenceProcess, prefix: list[int]) -> np.ndarray:
    """p(o_{t+1} | o_{<=t}) of the stochastic-transition generator by summing over every path
    of sequence indices (exponential: the brute-force reference of the oracle)."""
    n, length = len(proc.probs), proc.seqs.shape[1]
    joint = np.zeros(N_STATES)
    for path in itertools.product(range(n), repeat=len(prefix) + 1):
        p = proc.probs[path[0]]
        for t in range(1, len(path)):
            stay = t >= length - 1  # never a redraw before END
            p *= (
                (path[t] == path[t - 1])
                if stay
                else ((1 - proc.jump) * (path[t] == path[t - 1]) + proc.jump * proc.probs[path[t]])
            )
        if all(proc.seqs[s, t] == o for t, (s, o) in enumerate(zip(path, prefix))):
            joint[proc.seqs[path[-1], len(prefix)]] += p
    return joint / joint.sum()


def test_stochastic_transitions_oracle_matches_path_sum(seed):
    a, _ = make_phases(np.random.default_rng(seed), jump=0.3)
    rng = np.random.default_rng(seed + 1)
    episodes = [a.sample(rng) for _ in range(200)]
    assert all(e[-1] == END and len(e) == a.seqs.shape[1] for e in episodes)
    # redraws produce episodes that are not one of the six sequences
    assert any(not (a.seqs == e).all(axis=1).any() for e in episodes)
    for episode in episodes[:3]:
        pred, _ = a.oracle(episode, 0.8, 10)
        for t in range(1, 4):
            np.testing.assert_allclose(
                pred[t - 1], _path_predictive(a, list(episode[:t])), atol=1e-12
            )


def test_markov_counts_with_forgetting():
    m = MarkovCounts(3, forgetting=0.5, pseudocount=0.0)
    for o in (0, 1, 0, 2, 0):
        m.partial_fit(o)
    # transitions 0->1 (weight 0.125), 1->0 (0.25), 0->2 (0.5), 2->0 (1)
    np.testing.assert_allclose(m.predict_next(), [0.0, 0.2, 0.8])


def test_clone_hmm_filter_matches_path_sum(seed):
    rng = np.random.default_rng(seed)
    m = CloneHMM(3, clones=2, random_state=seed)
    m.init_ = rng.dirichlet(np.ones(6))
    obs = [0, 2, 1, 1]
    for o in obs:
        m.partial_fit(o)
    expected = reference.hmm_predictive(m.trans_[0], m.init_, m.state_obs, obs)
    np.testing.assert_allclose(m.predict_next(), expected, atol=1e-12)


def test_clone_hmm_em_step_matches_path_sum(seed):
    # the block E-step against expected counts summed over every hidden path, with actions;
    # a repeated episode (with the same actions) is one weighted row in the E-step
    rng = np.random.default_rng(seed)
    m = CloneHMM(3, 2, clones=2, em_iters=1, pseudocount=0.01, random_state=seed)
    m.init_ = rng.dirichlet(np.ones(6))
    episodes = [[0, 2, 1, 1], [1, 0], [2, 2, 0, 1], [0]]
    actions = [list(rng.integers(2, size=len(e))) for e in episodes]
    episodes, actions = episodes + episodes[:2] * 2, actions + actions[:2] * 2
    expected = reference.hmm_em_step(
        m.trans_, m.init_, m.state_obs, episodes, actions, m.pseudocount
    )
    m.fit_em(episodes, actions)
    np.testing.assert_allclose(m.trans_, expected[0], atol=1e-12)
    np.testing.assert_allclose(m.init_, expected[1], atol=1e-12)


@pytest.mark.parametrize("warm", [False, True])
def test_clone_hmm_refit_starts_afresh_unless_warm(seed, warm):
    """A fresh-start refit forgets the parameters it replaces; a warm one starts from them."""
    models = [
        CloneHMM(3, 2, clones=2, refit_every=2, em_iters=3, warm_start=warm, random_state=seed)
        for _ in range(2)
    ]
    models[1].trans_ = np.roll(models[1].trans_, 1, axis=2)
    for m in models:
        for o, a in ((0, 1), (1, 0), (2, 1), (0, 0)):
            m.observe(o)
            m.act(a)
        m.reset()
        m.observe(1)
        m.act(0)
        m.reset()  # the second episode ends: refit
        assert m.em_iters_run_ == [3]
    same = np.allclose(models[0].trans_, models[1].trans_)
    assert same != warm


def test_clone_hmm_em_stops_early_on_a_small_gain(seed):
    episodes = [[0, 1, 2, 0], [2, 1, 0]] * 4
    m = CloneHMM(3, clones=2, em_iters=50, em_tol=1e9, random_state=seed)
    m.fit_em(episodes)
    m.em_tol = 1e-3
    m.fit_em(episodes)
    m.em_tol = None
    m.fit_em(episodes)
    assert m.em_iters_run_[0] == 2 and 2 < m.em_iters_run_[1] < 50 and m.em_iters_run_[2] == 50


def test_clone_hmm_em_increases_likelihood(seed):
    episodes = [[0, 1, 2, 3], [3, 1, 2, 0]] * 5
    m = CloneHMM(4, clones=2, em_iters=1, refit_every=10**6, random_state=seed)

    def loglik():
        total = 0.0
        for e in episodes:
            m.reset()
            m.partial_fit(e[0])
            for o in e[1:]:
                total += np.log(m.predict_next()[o])
                m.partial_fit(o)
        m._episode, m._actions = [], []
        return total

    values = [loglik()]
    for _ in range(5):
        m.fit_em(episodes)
        values.append(loglik())
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(values)), values
    assert values[-1] > values[0] + 1.0


def test_rwkv_recurrence_matches_explicit_sum(seed):
    torch.manual_seed(seed)
    d, steps = 6, 5
    cell = RWKVCell(d).double()
    with torch.no_grad():
        cell.decay.normal_()
        cell.bonus.normal_()
    k = torch.randn(steps, d, dtype=torch.float64)
    v = torch.randn(steps, d, dtype=torch.float64)
    num = den = torch.zeros(d, dtype=torch.float64)
    got = []
    w = torch.exp(-torch.exp(cell.decay))
    for t in range(steps):  # the update used in RWKVCell.forward
        eu = torch.exp(cell.bonus + k[t])
        got.append((num + eu * v[t]) / (den + eu))
        num, den = w * num + torch.exp(k[t]) * v[t], w * den + torch.exp(k[t])
    expected = reference.wkv_explicit(
        k.numpy(), v.numpy(), cell.decay.detach().numpy(), cell.bonus.detach().numpy()
    )
    np.testing.assert_allclose(torch.stack(got).detach().numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("cls", [LSTMPredictor, RWKVPredictor])
def test_rnn_learns_a_sequence_and_rollout_stops_at_end(cls, seed):
    m = cls(
        5,
        hidden=16,
        lr=0.02,
        train_every=5,
        n_batches=5,
        batch_size=4,
        end_state=4,
        random_state=seed,
    )
    seq = [0, 1, 2, 3, 4]
    for _ in range(30):
        m.reset()
        for o in seq:
            m.partial_fit(o)
    m.reset()
    m.partial_fit(0)
    assert m.predict_next()[1] > 0.8
    sf = m.successor_features(0.5, 20)
    np.testing.assert_allclose(sf, [0, 1, 0.5, 0.25, 0.125], atol=0.1)


def test_windowed_and_recovery():
    x = np.array([1.0, 3.0, 5.0, 0.0])
    np.testing.assert_allclose(windowed(x, 2), [1.0, 2.0, 4.0, 2.5])
    excess = np.array([2.0, 1.0, 0.5, 0.05, 0.05, 0.05])
    assert recovery_time(excess, 2, 0.1) == 5.0  # window [3, 4] is the first at <= 0.1
    assert recovery_time(excess + 1, 2, 0.1) == 6.0  # never: the phase length


def test_baseline_bad_input():
    for m in (
        MarkovCounts(N_STATES),
        CloneHMM(N_STATES, clones=2),
        LSTMPredictor(N_STATES, hidden=4),
    ):
        with pytest.raises(ValueError, match="observation=9"):
            m.partial_fit(9)
        with pytest.raises(ValueError, match="partial_fit"):
            m.predict_next()


@pytest.mark.parametrize(
    "overrides, match",
    [
        (["window=0"], "window=0"),
        (["methods=dhtm,gru"], "methods="),
        (["phase_episodes=100"], "phase_episodes="),
    ],
)
def test_bad_config_is_rejected_and_nothing_written(tmp_path, overrides, match):
    from iclr25.core.runner import run_experiment

    with pytest.raises(ValueError, match=match):
        run_experiment("dhtm.sequences", preset="smoke", overrides=overrides, out=tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("cls", [LSTMPredictor, RWKVPredictor])
def test_rnn_batched_rollouts_equal_single(cls, seed):
    m = cls(4, 3, hidden=8, n_batches=1, batch_size=2, train_every=2, random_state=seed)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        m.reset()
        for _ in range(5):
            m.partial_fit(int(rng.integers(4)), int(rng.integers(3)))
    m.reset()
    m.observe(2)
    batch = m.successor_features_actions(0.8, 5)
    for a in range(3):
        np.testing.assert_allclose(batch[a], m.successor_features(0.8, 5, action=a), atol=1e-6)
    np.testing.assert_allclose(m.predict_next(1), m.successor_features(0.0, 1, action=1), atol=1e-6)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: MarkovCounts(N_STATES, forgetting=float("nan")), ValueError, "forgetting=nan"),
        (lambda: MarkovCounts(N_STATES, pseudocount=float("inf")), ValueError, "pseudocount=inf"),
        (lambda: MarkovCounts(True), TypeError, "n_obs_states=True"),
        (lambda: MarkovCounts(N_STATES, end_state=N_STATES), ValueError, "end_state=9"),
        (lambda: CloneHMM(N_STATES, clones=0), ValueError, "clones=0"),
        (lambda: CloneHMM(N_STATES, refit_every=2.0), TypeError, r"refit_every=2\.0"),
        (lambda: CloneHMM(N_STATES, pseudocount=float("nan")), ValueError, "pseudocount=nan"),
        (lambda: LSTMPredictor(N_STATES, lr=float("inf")), ValueError, "lr=inf"),
        (lambda: LSTMPredictor(N_STATES, lr=float("nan")), ValueError, "lr=nan"),
        (lambda: RWKVPredictor(N_STATES, hidden=0), ValueError, "hidden=0"),
        (lambda: RWKVPredictor(N_STATES, n_batches=-1), ValueError, "n_batches=-1"),
        (lambda: LSTMPredictor(N_STATES, n_actions=0), ValueError, "n_actions=0"),
    ],
)
def test_baseline_constructors_check_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    "make",
    [
        lambda: MarkovCounts(N_STATES),
        lambda: CloneHMM(N_STATES, clones=2),
        lambda: LSTMPredictor(N_STATES, hidden=4),
    ],
)
def test_baseline_rollouts_check_gamma_and_horizon(make):
    m = make()
    m.partial_fit(0)
    with pytest.raises(ValueError, match="gamma=nan"):
        m.successor_features(float("nan"), 5)
    with pytest.raises(ValueError, match="horizon=0"):
        m.successor_features(0.8, 0)
