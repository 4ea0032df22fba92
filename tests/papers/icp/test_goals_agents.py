"""VDN / ICP-RM / ICP-DM on Revealing Goals: every agent may send on every step; receivers get
exactly the sent message; the per-receiver head reads only what the others see."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.icp.env import RevealingGoalsBatch, RevealingGoalsSpec
from iclr25.papers.icp.goals_agents import (
    evaluate_goals,
    goal_features,
    goals_network,
    goals_rollout,
)
from iclr25.papers.icp.hanabi_agents import HanabiTeam
from iclr25.papers.icp.method import InformationMap


def _team(spec, mode, seed, M=4):
    with torch_seed(seed):
        net = goals_network(spec, mode, hidden=16, num_messages=M)
        table = goals_network(spec, "explicit", hidden=16, num_messages=M)
    phi = InformationMap.random(M, spec.scouting_actions, np.random.default_rng(seed))
    return HanabiTeam(spec, mode, net, phi, table.requires_grad_(False))


@pytest.mark.parametrize("mode", ["icp_rm", "icp_dm"])
@pytest.mark.parametrize("n", [2, 3])
def test_receivers_get_the_message_exactly_when_sent(mode, n, seed):
    spec = RevealingGoalsSpec(num_agents=n, grid=3, horizon=4)
    team = _team(spec, mode, seed)
    env = RevealingGoalsBatch(32, spec)
    gen = torch.Generator().manual_seed(seed)
    ro = goals_rollout(team, env, np.random.default_rng(seed), eps=0.5, generator=gen)
    assert ro.sent.shape == (4, 32, n) and ro.sent.any() and not ro.sent.all()
    # the last step's slots: receiver j holds one-hot from sender k iff k sent (k != j)
    got = ro.received.reshape(32, n, n, 4)  # (B, receiver, sender, M)
    for j in range(n):
        assert (got[:, j, j] == 0).all()
        for k in range(n):
            if k != j:
                # straight-through: 1 up to float rounding
                np.testing.assert_allclose(got[:, j, k].sum(-1), ro.sent[-1][:, k], atol=1e-6)
    # ICP-DM: hat decoding of every receiver's message is asserted inside the rollout


def test_features_hide_nothing_the_others_do_not_see(seed):
    spec = RevealingGoalsSpec(num_agents=2, grid=3, horizon=4)
    env = RevealingGoalsBatch(5, spec)
    env.reset(np.random.default_rng(seed))
    f = goal_features(env)
    C = 9
    np.testing.assert_array_equal(f[..., :C].argmax(-1), env.goals[..., 0] * 3 + env.goals[..., 1])
    np.testing.assert_array_equal(
        f[..., C : 2 * C].argmax(-1), env.positions[..., 0] * 3 + env.positions[..., 1]
    )


def test_evaluate_and_bad_input(seed):
    spec = RevealingGoalsSpec(num_agents=2, grid=2, horizon=3)
    out = evaluate_goals(_team(spec, "vdn", seed), 20, np.random.default_rng(seed))
    assert set(out) == {"success", "all_on_goal", "send_rate"}
    assert 0 <= out["success"] <= 1
    with pytest.raises(ValueError, match=r"num_messages must lie in 2\.\.4 .*got 5"):
        goals_network(spec, "icp_rm", num_messages=5)
    with pytest.raises(ValueError, match="mode must be one of"):
        goals_network(spec, "qmix")
    with pytest.raises(ValueError, match="differs from the team's"):
        goals_rollout(_team(spec, "vdn", 0), RevealingGoalsBatch(2), np.random.default_rng(0))
