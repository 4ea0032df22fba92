"""ICP: the information map, hat coding, straight-through Gumbel-Softmax, the TD loss and the
DIAL rollout, against slow references and invariants."""

import re

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.icp import (
    GuessingNumbersBatch,
    GuessingNumbersSpec,
    ICPAgent,
    InformationMap,
    TrainSettings,
    fit,
    hat_decode,
    hat_encode,
    lookup_table,
    rollout,
    st_gumbel_softmax,
    td_loss,
    train_icp_dm,
    train_icp_rm,
)
from iclr25.papers.icp.reference import hat_decode_bruteforce, td_loss_loops

SPEC = GuessingNumbersSpec()


@pytest.mark.parametrize("n,k", [(3, 4), (4, 5), (5, 2)])
def test_hat_decoding_recovers_every_receivers_message(n, k, seed):
    rng = np.random.default_rng(seed)
    msgs = rng.integers(0, k, size=(200, n))
    for sender in range(n):
        code = hat_encode(msgs, sender, k)
        for receiver in range(n):
            if receiver == sender:
                continue
            known = msgs.copy()
            known[:, receiver] = rng.integers(0, k, size=200)  # the receiver's own is unknown
            known[:, sender] = rng.integers(0, k, size=200)  # so is the sender's
            got = hat_decode(code, known, sender, receiver, k)
            np.testing.assert_array_equal(got, msgs[:, receiver])
            for b in range(5):
                assert got[b] == hat_decode_bruteforce(
                    int(code[b]), known[b].tolist(), sender, receiver, k
                )
    with pytest.raises(ValueError, match="receiver 1 is the sender"):
        hat_decode(code, msgs, 1, 1, k)


def test_information_map_is_injective_shared_and_fixed(seed):
    rng = np.random.default_rng(seed)
    phi = InformationMap.random(4, SPEC.scouting_actions, rng)
    assert sorted(phi.phi.tolist()) == SPEC.scouting_actions.tolist()
    m = np.arange(4)
    np.testing.assert_array_equal(phi.decode(phi.encode(m)), m)
    with pytest.raises(ValueError, match="read-only"):
        phi.phi[0] = 0
    with pytest.raises(ValueError, match="injective"):
        InformationMap([4, 5, 4])
    with pytest.raises(ValueError, match=r"actions \[0\] are not in the map's image"):
        phi.decode(np.array([0]))
    with pytest.raises(ValueError, match=r"messages must lie in 0\.\.3"):
        phi.encode(np.array([4]))
    with pytest.raises(ValueError, match="num_messages=5 exceeds the 4 scouting actions"):
        InformationMap.random(5, SPEC.scouting_actions, rng)


def test_map_is_fixed_through_training_and_cannot_be_replaced(seed):
    with torch_seed(seed):
        agent = train_icp_rm(
            SPEC,
            TrainSettings(episodes=64, batch=32),
            np.random.default_rng(seed),
            torch.Generator().manual_seed(seed),
            hidden=8,
        )
    before = agent.info_map.phi.copy()
    fit(agent, TrainSettings(episodes=64, batch=32), np.random.default_rng(1), torch.Generator())
    np.testing.assert_array_equal(agent.info_map.phi, before)
    with pytest.raises(AttributeError):
        agent.info_map = InformationMap(SPEC.scouting_actions)


def test_st_gumbel_forward_is_hard_gradient_is_soft(seed):
    logits = torch.randn(6, 4, generator=torch.Generator().manual_seed(seed), requires_grad=True)
    state = torch.random.get_rng_state()
    y = st_gumbel_softmax(logits, 0.7, torch.Generator().manual_seed(seed + 1))
    assert torch.equal(torch.random.get_rng_state(), state)  # the global RNG is untouched
    hard = torch.nn.functional.one_hot(y.detach().argmax(-1), 4).float()
    torch.testing.assert_close(y.detach(), hard)  # one-hot in value (up to float rounding)
    # reference: the same Gumbel noise, drawn by hand
    u = torch.rand(6, 4, generator=torch.Generator().manual_seed(seed + 1))
    noisy = logits - torch.log(-torch.log(u.clamp(1e-10, 1.0 - 1e-7)))
    assert torch.equal(y.detach().argmax(-1), noisy.detach().argmax(-1))
    w = torch.randn(6, 4)
    (g_st,) = torch.autograd.grad((y * w).sum(), logits)
    (g_soft,) = torch.autograd.grad((torch.softmax(noisy / 0.7, -1) * w).sum(), logits)
    torch.testing.assert_close(g_st, g_soft)
    greedy = st_gumbel_softmax(logits, 0.7, None)
    assert torch.equal(greedy.detach().argmax(-1), logits.detach().argmax(-1))
    with pytest.raises(ValueError, match=r"tau=0\.0 is not allowed: must be > 0"):
        st_gumbel_softmax(logits, 0.0, None)
    with pytest.raises(ValueError, match="tau=nan is not allowed: must be a finite number"):
        st_gumbel_softmax(logits, float("nan"), None)


def _agent(mode, seed, table=None):
    with torch_seed(seed):
        net = ICPAgent.network(SPEC, mode, hidden=16)
    rng = np.random.default_rng(seed)
    phi = InformationMap.random(4, SPEC.scouting_actions, rng) if mode.startswith("icp") else None
    return ICPAgent(SPEC, mode, net, phi, table)


def test_td_loss_matches_loop_reference(seed):
    agent = _agent("vdn", seed)
    ro = rollout(agent, GuessingNumbersBatch(5, SPEC), np.random.default_rng(seed), eps=0.5)
    want = td_loss_loops(ro.q_taken, ro.next_max, ro.reward, 0.9)
    assert td_loss(ro, 0.9).item() == pytest.approx(want, rel=1e-5)


def test_icp_rm_receivers_decode_the_broadcast_and_gradients_reach_the_sender(seed):
    agent = _agent("icp_rm", seed)
    env = GuessingNumbersBatch(64, SPEC)
    ro = rollout(
        agent,
        env,
        np.random.default_rng(seed),
        eps=0.3,
        generator=torch.Generator().manual_seed(seed),
    )
    K = SPEC.num_values
    for t in range(SPEC.signal_turns):
        a = SPEC.active(t)
        sent = env.signals[:, t] >= 0
        decoded = agent.info_map.decode(env.signals[sent, t] + K)
        for j in range(SPEC.num_agents):
            if j == a:
                assert (ro.received[t, :, j] == 0).all()
            else:
                np.testing.assert_array_equal(ro.received[t, sent, j].argmax(-1), decoded)
                assert (ro.received[t, ~sent, j] == 0).all()
    td_loss(ro, 0.99).backward()
    assert agent.net.msg_head[0].weight.grad.abs().sum() > 0  # DIAL: the channel is differentiable


def test_icp_dm_every_receiver_recovers_its_table_message(seed):
    rng = np.random.default_rng(seed)
    N, K = SPEC.num_agents, SPEC.num_values
    table = np.stack([[rng.permutation(K) for _ in range(N)] for _ in range(N)])
    agent = _agent("icp_dm", seed, table)
    env = GuessingNumbersBatch(64, SPEC)
    ro = rollout(agent, env, rng, eps=1.0)  # the gate explores: some turns send
    for t in range(SPEC.signal_turns):
        a = SPEC.active(t)
        sent = env.signals[:, t] >= 0
        assert sent.any()
        for j in range(N):
            if j != a:
                want = table[a, j, env.secrets[sent, j]]
                np.testing.assert_array_equal(ro.received[t, sent, j].argmax(-1), want)


def test_vdn_keeps_scouting_actions_and_has_no_channel(seed):
    agent = _agent("vdn", seed)
    assert agent.net.q_head[-1].out_features == SPEC.num_actions  # scouting actions included
    assert not hasattr(agent.net, "msg_head")
    env = GuessingNumbersBatch(256, SPEC)
    ro = rollout(agent, env, np.random.default_rng(seed), eps=1.0)
    assert (env.signals >= 0).any()  # exploration does take scouting actions
    assert ro.received.shape[-1] == 0


def test_lookup_table_is_the_greedy_per_receiver_message(seed):
    agent = _agent("explicit", seed)
    table = lookup_table(agent.net, SPEC.num_agents, SPEC.num_values)
    for s in range(SPEC.num_agents):
        for j in range(SPEC.num_agents):
            for v in range(SPEC.num_values):
                vals = torch.full((1, SPEC.num_agents), v)
                assert table[s, j, v] == int(agent.net.receiver_logits(s, vals)[0, j].argmax())


def test_training_is_deterministic_under_seeds():
    def params(seed):
        with torch_seed(seed):
            agent = train_icp_rm(
                SPEC,
                TrainSettings(episodes=64, batch=16),
                np.random.default_rng(seed),
                torch.Generator().manual_seed(seed),
                hidden=8,
            )
        return torch.cat([p.detach().flatten() for p in agent.net.parameters()])

    assert torch.equal(params(4), params(4))
    assert not torch.equal(params(4), params(5))


def test_bad_input_names_the_value():
    with pytest.raises(ValueError, match=r"mode must be one of .* got 'icp'"):
        ICPAgent.network(SPEC, "icp")
    with pytest.raises(ValueError, match=r"num_messages must lie in 2\.\.num_signals=4.*got 6"):
        ICPAgent.network(SPEC, "icp_rm", num_messages=6)
    with pytest.raises(ValueError, match="mode 'icp_rm' needs an info_map"):
        ICPAgent(SPEC, "icp_rm", ICPAgent.network(SPEC, "icp_rm"))
    with pytest.raises(ValueError, match=r"lookup table of shape \(3, 3, 4\)"):
        ICPAgent(
            SPEC,
            "icp_dm",
            ICPAgent.network(SPEC, "icp_dm"),
            InformationMap([4, 5, 6, 7]),
            np.zeros((2, 2)),
        )
    agent = _agent("vdn", 0)
    with pytest.raises(ValueError, match="environment's spec"):
        rollout(
            agent,
            GuessingNumbersBatch(2, GuessingNumbersSpec(num_agents=4)),
            np.random.default_rng(0),
        )
    with pytest.raises(ValueError, match=r"episodes \(8\) must be >= batch \(16\)"):
        TrainSettings(episodes=8, batch=16)


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("lr", float("nan"), "lr=nan is not allowed: must be a finite number"),
        ("lr", 0.0, "lr=0.0 is not allowed: must be > 0"),
        ("gamma", float("inf"), "gamma=inf is not allowed: must be a finite number"),
        ("gamma", 1.5, "gamma=1.5 is not allowed: must be >= 0 and <= 1"),
        ("eps_frac", 0.0, "eps_frac=0.0 is not allowed: must be > 0 and <= 1"),
        ("tau_end", float("-inf"), "tau_end=-inf is not allowed: must be a finite number"),
        ("gumbel_scale", -1.0, "gumbel_scale=-1.0 is not allowed: must be >= 0"),
        ("grad_clip", float("nan"), "grad_clip=nan is not allowed"),
        ("eval_every", -1, "eval_every=-1 is not allowed: must be an int >= 0"),
        ("eval_games", 0, "eval_games=0 is not allowed: must be an int >= 1"),
    ],
)
def test_train_settings_reject_bad_and_non_finite_values(field, value, needle):
    with pytest.raises(ValueError, match=re.escape(needle)):
        TrainSettings(**{field: value})


def test_train_settings_reject_non_ints():
    with pytest.raises(TypeError, match=r"batch=2\.5 is not allowed: must be an int"):
        TrainSettings(batch=2.5)
    with pytest.raises(TypeError, match="episodes=True is not allowed: must be an int"):
        TrainSettings(episodes=True)


def test_stage1_frac_and_hidden_are_checked():
    spec, rng, gen = GuessingNumbersSpec(), np.random.default_rng(0), torch.Generator()
    with pytest.raises(ValueError, match="stage1_frac=nan is not allowed"):
        train_icp_dm(spec, TrainSettings(episodes=64), rng, gen, stage1_frac=float("nan"))
    with pytest.raises(ValueError, match=r"stage1_frac=1\.0 is not allowed: must be > 0 and < 1"):
        train_icp_dm(spec, TrainSettings(episodes=64), rng, gen, stage1_frac=1.0)
    with pytest.raises(ValueError, match="hidden=0 is not allowed: must be an int >= 1"):
        ICPAgent.network(spec, "vdn", 0)
