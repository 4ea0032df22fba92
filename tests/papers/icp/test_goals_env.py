"""Revealing Goals: PettingZoo conformance, batch == single-game reference, rule invariants."""

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.icp.env import RevealingGoalsBatch, RevealingGoalsEnv, RevealingGoalsSpec

pytestmark = needs("pettingzoo")


def test_pettingzoo_parallel_api_and_seed_tests():
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    parallel_api_test(RevealingGoalsEnv(), num_cycles=30)
    parallel_seed_test(RevealingGoalsEnv)  # every action is legal: no adapter needed
    assert RevealingGoalsEnv().metadata["name"] == "revealing_goals_v0"


@pytest.mark.parametrize(
    "spec", [RevealingGoalsSpec(), RevealingGoalsSpec(3, 4, 6, 2), RevealingGoalsSpec(2, 2, 1, 1)]
)
def test_batch_equals_pettingzoo_step_by_step(spec, seed):
    rng = np.random.default_rng(seed)
    B = 30
    batch = RevealingGoalsBatch(B, spec)
    obs, mask = batch.reset(rng)
    pos0, goals = batch.positions.copy(), batch.goals.copy()
    joint, observations, masks, rewards = [], [obs], [mask], []
    for _ in range(spec.horizon):
        acts = rng.integers(0, spec.num_actions, size=(B, spec.num_agents))
        joint.append(acts)
        obs, mask, r, done = batch.step(acts)
        observations.append(obs)
        masks.append(mask)
        rewards.append(r)
    assert done
    env = RevealingGoalsEnv(spec)
    for b in range(B):
        o, _ = env.reset(options={"positions": pos0[b], "goals": goals[b]})
        for t in range(spec.horizon + 1):
            for i, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(o[agent]["observation"], observations[t][b, i])
                np.testing.assert_array_equal(o[agent]["action_mask"], masks[t][b, i])
            if t < spec.horizon:
                o, rew, *_ = env.step({a: int(joint[t][b, i]) for i, a in enumerate(env.agents)})
                assert rew["agent_0"] == pytest.approx(float(rewards[t][b]))
        assert env.agents == []


def test_goals_hidden_from_owner_and_scouting_changes_nothing(seed):
    spec = RevealingGoalsSpec()
    rng = np.random.default_rng(seed)
    env = RevealingGoalsBatch(6, spec)
    obs, _ = env.reset(rng)
    C, N = spec.grid**2, spec.num_agents
    goals = obs[:, :, C + N * C : C + 2 * N * C].reshape(6, N, N, C)
    for i in range(N):
        assert (goals[:, i, i] == 0).all()
    before = env.positions.copy()
    for s in spec.scouting_actions:
        env.step(np.full((6, N), s))
        np.testing.assert_array_equal(env.positions, before)
        np.testing.assert_array_equal(env.signals, s - 5)


def test_bad_input():
    env = RevealingGoalsBatch(2)
    env.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match="illegal action 9 for agent 1 in game 0"):
        env.step(np.array([[0, 9], [0, 0]]))
    with pytest.raises(ValueError, match=r"actions must have shape .* \(2, 2\), got \(2,\)"):
        env.step(np.array([0, 0]))
    pz = RevealingGoalsEnv()
    pz.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'agent_5'"):
        pz.step({"agent_5": 0})
    with pytest.raises(ValueError, match="illegal action -1 for agent agent_0"):
        pz.step({"agent_0": -1, "agent_1": 0})
    with pytest.raises(ValueError, match="grid=1 is not allowed: must be an int >= 2"):
        RevealingGoalsSpec(grid=1)
