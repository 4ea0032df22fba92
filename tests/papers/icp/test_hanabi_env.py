"""Small Hanabi: PettingZoo conformance, batch == single-game reference, rule invariants."""

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.icp.hanabi import HanabiBatch, HanabiEnv, HanabiSpec

pytestmark = needs("pettingzoo")


def test_pettingzoo_parallel_api():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(HanabiEnv(), num_cycles=60)
    assert HanabiEnv().metadata["name"] == "hanabi_small_v0"


class _LegalSampling(HanabiEnv):
    """PettingZoo's seed test samples actions without the mask; our env rejects illegal actions
    (as the issue requires), so this adapter maps a sampled action a onto the a-th legal one."""

    def step(self, actions):
        legal = {a: self._legal(self.possible_agents.index(a)) for a in self.agents}
        return super().step({a: legal[a][int(v) % len(legal[a])] for a, v in actions.items()})


def test_pettingzoo_seed_test():
    from pettingzoo.test import parallel_seed_test

    parallel_seed_test(_LegalSampling)


def _random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.where(mask, rng.random(mask.shape), -1.0).argmax(-1)


@pytest.mark.parametrize(
    "spec",
    [HanabiSpec(), HanabiSpec(lives=3), HanabiSpec(2, 3, 3, 3, 2, 2), HanabiSpec(4, 1, 4, 1, 1, 2)],
)
def test_batch_equals_pettingzoo_step_by_step(spec, seed):
    rng = np.random.default_rng(seed)
    B = 24
    batch = HanabiBatch(B, spec)
    obs, mask = batch.reset(rng)
    decks = batch.decks.copy()
    joint, observations, masks, rewards, dones = [], [obs], [mask], [], []
    while not batch.done.all():
        acts = _random_legal(mask, rng)
        joint.append(acts)
        obs, mask, r, done = batch.step(acts)
        observations.append(obs)
        masks.append(mask)
        rewards.append(r)
        dones.append(done)
    env = HanabiEnv(spec)
    for b in range(B):
        o, _ = env.reset(options={"deck": decks[b]})
        t = 0
        while True:
            for i, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(o[agent]["observation"], observations[t][b, i])
                np.testing.assert_array_equal(o[agent]["action_mask"], masks[t][b, i])
            if not env.agents:
                break
            o, rew, term, _, info = env.step(
                {a: int(joint[t][b, i]) for i, a in enumerate(env.possible_agents)}
            )
            assert rew["player_0"] == float(rewards[t][b])
            assert term["player_0"] == bool(dones[t][b])
            t += 1
        assert info["player_0"]["score"] == batch.score()[b]
        # after the end the batch game only no-ops
        for later in range(t, len(joint)):
            assert (joint[later][b] == spec.noop).all() and rewards[later][b] == 0


def test_players_see_other_hands_not_their_own(seed):
    spec = HanabiSpec()
    env = HanabiBatch(6, spec)
    obs, _ = env.reset(np.random.default_rng(seed))
    N, H, T = spec.num_players, spec.hand_size, spec.num_types
    part = obs[:, :, : N * H * T].reshape(6, N, N, H, T)
    for i in range(N):
        assert (part[:, i, i] == 0).all()
        for j in range(N):
            if j != i:
                np.testing.assert_array_equal(part[:, i, j].argmax(-1), env.hands[:, j])


def test_hints_never_change_the_cards(seed):
    spec = HanabiSpec()
    rng = np.random.default_rng(seed)
    base = HanabiBatch(8, spec)
    base.reset(rng)
    decks = base.decks.copy()
    before = base.task_state()
    for h in spec.scouting_actions:
        env = HanabiBatch(8, spec)
        env.reset(decks=decks)
        acts = np.full((8, spec.num_players), spec.noop)
        acts[:, 0] = h
        _, _, r, done = env.step(acts)
        assert (r == 0).all() and not done.any()
        assert (env.tokens == spec.hint_tokens - 1).all() and (env.last_action == h).all()
        for x, y in zip(before, env.task_state()):
            np.testing.assert_array_equal(x, y)
        offset, kind = spec.hint_of(h)
        target = offset % spec.num_players
        cards = env.hands[:, target]
        if kind < spec.colours:
            hit, known = cards // spec.ranks == kind, env.know_colour[:, target]
        else:
            hit, known = cards % spec.ranks == kind - spec.colours, env.know_rank[:, target]
        np.testing.assert_array_equal(known >= 0, hit)


def test_play_discard_and_end_rules():
    spec = HanabiSpec()
    deck = spec.deck()  # unshuffled: colour 0 ranks 1,1,1,2,2,3,3,4,4,5 then colour 1
    env = HanabiBatch(1, spec)
    env.reset(decks=deck[None])
    noop, N = spec.noop, spec.num_players
    # player 0 holds (0/1, 0/1): playing slot 0 scores
    _, _, r, _ = env.step(np.array([[0, noop, noop]]))
    assert r[0] == 1 and env.fireworks[0, 0] == 1 and env.hands[0, 0, 0] == deck[6]
    # player 1 holds (0/1, 0/2) ranks 0 and 1: discard illegal at full tokens, play of 1 loses
    with pytest.raises(ValueError, match="illegal action 2 for agent 1 in game 0"):
        env.step(np.array([[noop, 2, noop]]))
    _, _, r, done = env.step(np.array([[noop, 0, noop]]))  # a second 1: misplay, last life
    assert r[0] == 0 and env.lives[0] == 0 and done[0] and env.score()[0] == 1
    assert (env.action_mask()[0, :, noop]).all() and env.action_mask()[0].sum() == N


def test_illegal_actions_names_and_shapes():
    spec = HanabiSpec()
    env = HanabiBatch(3, spec)
    env.reset(np.random.default_rng(0))
    acts = np.full((3, 3), spec.noop)
    with pytest.raises(ValueError, match=f"illegal action {spec.noop} for agent 0 in game 0"):
        env.step(acts)  # the player on turn must act
    with pytest.raises(ValueError, match=r"actions must have shape .* \(3, 3\), got \(3,\)"):
        env.step(np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match="dtype float"):
        env.step(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="decks must have shape"):
        env.reset(decks=np.zeros((2, 20), dtype=int))
    with pytest.raises(ValueError, match=r"permutation of spec\.deck"):
        env.reset(decks=np.zeros((3, 20), dtype=int))
    pz = HanabiEnv()
    pz.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action 0 for agent player_1"):
        pz.step({"player_0": 0, "player_1": 0, "player_2": spec.noop})
    with pytest.raises(ValueError, match="unknown agent 'player_7'"):
        pz.observation_space("player_7")
    with pytest.raises(ValueError, match="unknown agent 'bob'"):
        pz.step({"bob": 0})
    with pytest.raises(ValueError, match="num_players=1 is not allowed: must be an int >= 2"):
        HanabiSpec(num_players=1)
    with pytest.raises(ValueError, match="hand_size = 40 must be below the deck size 20"):
        HanabiSpec(hand_size=20, num_players=2)
