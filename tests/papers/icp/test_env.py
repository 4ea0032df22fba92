"""Guessing Numbers: PettingZoo conformance, batch == single-game reference, rule invariants."""

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.icp.env import GuessingNumbersBatch, GuessingNumbersEnv, GuessingNumbersSpec
from iclr25.papers.icp.reference import play_reference

pytestmark = needs("pettingzoo")


def test_pettingzoo_parallel_api():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(GuessingNumbersEnv(), num_cycles=50)


class _LegalSampling(GuessingNumbersEnv):
    """PettingZoo's seed test samples actions without the mask, and our env rejects illegal
    actions (as the issue requires), so this adapter maps a sampled action a onto the a-th legal
    one (mod their number) before stepping; everything else is the env under test."""

    def step(self, actions):
        legal = {a: self._legal(self.possible_agents.index(a)) for a in self.agents}
        return super().step({a: legal[a][int(v) % len(legal[a])] for a, v in actions.items()})


def test_pettingzoo_seed_test():
    from pettingzoo.test import parallel_seed_test

    parallel_seed_test(_LegalSampling)


def test_same_seed_same_game_different_seeds_differ():
    def first(seed):
        return GuessingNumbersEnv().reset(seed=seed)[0]["agent_0"]["observation"].tolist()

    assert first(3) == first(3)
    assert len({tuple(first(s)) for s in range(20)}) > 1


def _random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    keys = np.where(mask, rng.random(mask.shape), -1.0)
    return keys.argmax(-1)


@pytest.mark.parametrize(
    "spec",
    [GuessingNumbersSpec(), GuessingNumbersSpec(4, 3, 5, 3), GuessingNumbersSpec(2, 2, 2, 1)],
)
def test_batch_equals_pettingzoo_step_by_step(spec, seed):
    rng = np.random.default_rng(seed)
    B = 40
    batch = GuessingNumbersBatch(B, spec)
    obs, mask = batch.reset(rng)
    secrets = batch.secrets.copy()
    joint, observations, masks, rewards = [], [obs], [mask], []
    for _ in range(spec.episode_len):
        acts = _random_legal(mask, rng)
        joint.append(acts)
        obs, mask, r, done = batch.step(acts)
        observations.append(obs)
        masks.append(mask)
        rewards.append(r)
    assert done
    env = GuessingNumbersEnv(spec)
    for b in range(B):
        steps = play_reference(env, secrets[b], [a[b] for a in joint])
        for t, st in enumerate(steps):
            for i, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(
                    st["obs"][agent]["observation"], observations[t][b, i]
                )
                np.testing.assert_array_equal(st["obs"][agent]["action_mask"], masks[t][b, i])
                if t:
                    assert st["reward"][agent] == pytest.approx(float(rewards[t - 1][b]))
        assert env.agents == []
        assert steps[-1]["info"]["agent_0"]["success"] == pytest.approx(batch.success()[b])


def test_agents_see_others_secrets_not_their_own(seed):
    spec = GuessingNumbersSpec()
    env = GuessingNumbersBatch(5, spec)
    obs, _ = env.reset(np.random.default_rng(seed))
    K, N = spec.num_values, spec.num_agents
    secrets_part = obs[:, :, : N * K].reshape(5, N, N, K)
    for i in range(N):
        assert (secrets_part[:, i, i] == 0).all()
        for j in range(N):
            if j != i:
                np.testing.assert_array_equal(secrets_part[:, i, j].argmax(-1), env.secrets[:, j])


def test_scouting_actions_never_change_the_task_state(seed):
    spec = GuessingNumbersSpec()
    rng = np.random.default_rng(seed)
    base = GuessingNumbersBatch(8, spec)
    base.reset(rng)
    secrets = base.secrets.copy()
    states = []
    for s in spec.scouting_actions:
        env = GuessingNumbersBatch(8, spec)
        env.reset(secrets=secrets)
        acts = np.full((8, spec.num_agents), spec.noop)
        acts[:, spec.active(0)] = s
        env.step(acts)
        np.testing.assert_array_equal(env.signals[:, 0], s - spec.num_values)  # broadcast
        states.append(env.task_state())
    env = GuessingNumbersBatch(8, spec)
    env.reset(secrets=secrets)
    env.step(np.full((8, spec.num_agents), spec.noop))  # pass
    states.append(env.task_state())
    for st in states[1:]:
        for a, b in zip(states[0], st):
            np.testing.assert_array_equal(a, b)


def test_reward_rules():
    spec = GuessingNumbersSpec()
    env = GuessingNumbersBatch(2, spec)
    env.reset(secrets=np.array([[0, 1, 2], [0, 1, 2]]))
    noop = spec.noop
    env.step(np.array([[3, noop, noop], [0, noop, noop]]))  # game 0: wrong early guess
    env.step(np.full((2, 3), noop))
    _, _, r, done = env.step(np.array([[noop, 1, 2], [noop, 1, 0]]))
    assert done
    np.testing.assert_allclose(r, [(2 - 1) / 3, 2 / 3])
    np.testing.assert_allclose(env.success(), [2 / 3, 2 / 3])


def test_illegal_action_names_agent_and_value():
    spec = GuessingNumbersSpec()
    env = GuessingNumbersBatch(3, spec)
    env.reset(np.random.default_rng(0))
    acts = np.full((3, 3), spec.noop)
    acts[1, 2] = 0  # agent 2 is not active on turn 0
    with pytest.raises(ValueError, match="illegal action 0 for agent 2 in game 1"):
        env.step(acts)
    pz = GuessingNumbersEnv()
    pz.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action 0 for agent agent_1"):
        pz.step({"agent_0": spec.noop, "agent_1": 0, "agent_2": spec.noop})


def test_bad_shapes_and_names():
    spec = GuessingNumbersSpec()
    env = GuessingNumbersBatch(3, spec)
    env.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"actions must have shape .* \(3, 3\), got \(3,\)"):
        env.step(np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match="dtype float"):
        env.step(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="secrets must have shape"):
        env.reset(secrets=np.zeros((2, 3), dtype=int))
    pz = GuessingNumbersEnv()
    pz.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'agent_7'"):
        pz.observation_space("agent_7")
    with pytest.raises(ValueError, match="unknown agent 'bob'"):
        pz.step({"bob": 0})
    with pytest.raises(ValueError, match="num_agents=1 is not allowed: must be an int >= 2"):
        GuessingNumbersSpec(num_agents=1)
    with pytest.raises(TypeError, match=r"num_envs=2\.5 is not allowed: must be an int"):
        GuessingNumbersBatch(2.5)
    with pytest.raises(TypeError, match="signal_turns=True is not allowed: must be an int"):
        GuessingNumbersSpec(signal_turns=True)
