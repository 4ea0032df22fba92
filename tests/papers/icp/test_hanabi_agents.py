"""VDN / ICP-RM / ICP-DM on Small Hanabi: the rollout's channel, the masked TD loss, the step
budget, and bad input."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.icp import (
    HanabiBatch,
    HanabiSpec,
    HanabiTeam,
    InformationMap,
    TrainSettings,
    hanabi_rollout,
    td_loss,
    train_hanabi,
)
from iclr25.papers.icp.method import Rollout, bootstrap_max

SPEC = HanabiSpec()


def _team(mode, seed, M=4):
    with torch_seed(seed):
        net = HanabiTeam.network(SPEC, mode, hidden=16, num_messages=M)
        table = HanabiTeam.network(SPEC, "explicit", hidden=16, num_messages=M)
    phi = InformationMap.random(M, np.arange(SPEC.num_channels), np.random.default_rng(seed))
    if mode == "vdn":
        return HanabiTeam(SPEC, mode, net)
    return HanabiTeam(SPEC, mode, net, phi, table.requires_grad_(False))


@pytest.mark.parametrize("mode", ["icp_rm", "icp_dm"])
def test_receivers_get_exactly_the_message_of_the_hint(mode, seed):
    team = _team(mode, seed)
    env = HanabiBatch(32, SPEC)
    rng = np.random.default_rng(seed)
    ro = hanabi_rollout(
        team, env, rng, eps=0.5, tau=1.0, generator=torch.Generator().manual_seed(seed)
    )
    assert ro.sent.any()
    L, _, N = ro.q_taken.shape
    for t in range(L):
        sender = t % N
        got = ro.received[t]  # (B, N, M)
        assert (got[:, sender] == 0).all()
        for j in range(N):
            if j != sender:
                # the straight-through sum hard + soft - soft is 1 up to float rounding
                np.testing.assert_allclose(got[:, j].sum(-1), ro.sent[t], atol=1e-6)
    # ICP-DM: every receiver's message decoded from the one broadcast equals the table's
    # (asserted inside the rollout against the sender's own per-receiver messages)


def test_hat_broadcast_matches_the_frozen_table(seed):
    team = _team("icp_dm", seed)
    env = HanabiBatch(16, SPEC)
    env.reset(np.random.default_rng(seed))
    feats = env.private_features()
    msgs = team.table_messages(0, feats)
    # any receiver j decodes m_j from s and the messages it can compute (not its own)
    from iclr25.papers.icp import hat_decode, hat_encode

    s = hat_encode(msgs, 0, 4)
    for j in (1, 2):
        known = msgs.copy()
        known[:, j] = 0
        np.testing.assert_array_equal(hat_decode(s, known, 0, j, 4), msgs[:, j])
    # the table reads only what every other player sees: changing player 1's row of the
    # features changes only messages to player 1
    feats2 = feats.copy()
    feats2[:, 1] = feats[::-1, 1]
    msgs2 = team.table_messages(0, feats2)
    np.testing.assert_array_equal(msgs2[:, 2], msgs[:, 2])


def test_masked_td_loss_matches_loops(seed):
    g = torch.Generator().manual_seed(seed)
    L, B, N = 5, 4, 3
    live = torch.ones(L, B)
    live[3:, 0] = 0
    live[1:, 2] = 0
    ro = Rollout(
        q_taken=torch.randn(L, B, N, generator=g),
        next_max=torch.randn(L, B, N, generator=g),
        reward=torch.randn(L, B, generator=g),
        obs=np.zeros(0),
        mask=np.zeros(0),
        actions=np.zeros(0),
        sent=np.zeros(0),
        received=np.zeros(0),
        live=live,
    )
    total, count = 0.0, 0
    for t in range(L):
        for b in range(B):
            if not live[t, b]:
                continue
            boot = float(ro.next_max[t, b].sum()) if t + 1 < L and live[t + 1, b] else 0.0
            total += (float(ro.q_taken[t, b].sum()) - float(ro.reward[t, b]) - 0.9 * boot) ** 2
            count += 1
    assert float(td_loss(ro, 0.9)) == pytest.approx(total / count, rel=1e-5)


def test_step_budget_checkpoints_and_fixed_map(seed):
    points = []
    with torch_seed(seed):
        team = train_hanabi(
            "icp_dm",
            SPEC,
            TrainSettings(batch=4, eval_games=4),
            np.random.default_rng(seed),
            torch.Generator().manual_seed(seed),
            steps=300,
            hidden=8,
            eval_points=3,
            log=lambda step, m: points.append(step),
        )
    assert points == [100, 200, 300]
    phi = team.info_map.phi
    assert not phi.flags.writeable and sorted(phi.tolist()) == list(range(SPEC.num_channels))
    with pytest.raises(ValueError, match="read-only"):
        phi[0] = 0


def _trained_weights(method, target_every, seed, game_steps=240):
    with torch_seed(seed):
        team = train_hanabi(
            method,
            SPEC,
            TrainSettings(batch=4, eval_games=4, target_every=target_every),
            np.random.default_rng(seed),
            torch.Generator().manual_seed(seed),
            steps=game_steps,
            hidden=8,
        )
    return [p.detach().clone() for p in team.net.parameters()]


@pytest.mark.parametrize("method", ["vdn", "icp_dm"])
def test_target_network_copied_every_update_is_the_online_network(method, seed):
    """A target synced after every update equals the online network at every rollout, so
    training is bit-identical to training without one; a target never synced after the start
    bootstraps from the initial weights and training differs."""
    none = _trained_weights(method, 0, seed)
    every = _trained_weights(method, 1, seed)
    frozen = _trained_weights(method, 10**9, seed)
    assert all(torch.equal(a, b) for a, b in zip(none, every, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(none, frozen, strict=True))


def test_bootstrap_max_reads_the_target_network_on_the_same_inputs(seed):
    with torch_seed(seed):
        online = HanabiTeam.network(SPEC, "vdn", hidden=8)
        target = HanabiTeam.network(SPEC, "vdn", hidden=8)
    env = HanabiBatch(3, SPEC)
    obs, mask = env.reset(np.random.default_rng(seed))
    x = torch.from_numpy(obs)
    B, N = mask.shape[:2]
    h = torch.zeros(B * N, 8)
    q, _ = online(x.reshape(B * N, -1), h)
    q = q.view(B, N, -1)
    legal = torch.from_numpy(mask)
    best, h_none = bootstrap_max(q, x, mask, None, h)
    assert torch.equal(best, q.detach().masked_fill(~legal, float("-inf")).amax(-1))
    assert h_none is h
    qt, ht = target(x.reshape(B * N, -1), h)
    best, h_next = bootstrap_max(q, x, mask, target, h)
    assert torch.equal(best, qt.detach().view(B, N, -1).masked_fill(~legal, float("-inf")).amax(-1))
    assert torch.equal(h_next, ht.detach())
    assert not best.requires_grad


def test_bad_input():
    rng, gen = np.random.default_rng(0), torch.Generator()
    with pytest.raises(ValueError, match="method must be 'vdn', 'icp_rm' or 'icp_dm', got 'qmix'"):
        train_hanabi("qmix", SPEC, TrainSettings(), rng, gen, steps=10)
    with pytest.raises(ValueError, match="stage1_frac=inf is not allowed"):
        train_hanabi("icp_dm", SPEC, TrainSettings(), rng, gen, steps=10, stage1_frac=float("inf"))
    with pytest.raises(ValueError, match="steps=0 is not allowed: must be an int >= 1"):
        train_hanabi("vdn", SPEC, TrainSettings(), rng, gen, steps=0)
    with pytest.raises(TypeError, match=r"steps=10\.0 is not allowed: must be an int"):
        train_hanabi("vdn", SPEC, TrainSettings(), rng, gen, steps=10.0)
    with pytest.raises(ValueError, match=r"num_messages must lie in 2\.\.4 .*got 5"):
        HanabiTeam.network(SPEC, "icp_rm", num_messages=5)
    with pytest.raises(ValueError, match="target_every=-1 is not allowed"):
        TrainSettings(target_every=-1)
    with pytest.raises(ValueError, match="needs an info_map"):
        HanabiTeam(SPEC, "icp_rm", HanabiTeam.network(SPEC, "icp_rm"))
    team = _team("vdn", 0)
    with pytest.raises(ValueError, match="differs from the team's"):
        hanabi_rollout(team, HanabiBatch(2, HanabiSpec(lives=2)), rng)
