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
    [
        HanabiSpec(),
        HanabiSpec(lives=3),
        HanabiSpec(2, 3, 3, 3, 2, 2),
        HanabiSpec(4, 1, 4, 1, 1, 2),
        HanabiSpec(hint_rule="any"),
        HanabiSpec(draw_rule="same_slot"),
        HanabiSpec(2, 3, 3, 3, 2, 2, "keep_score", "any", "same_slot"),
    ],
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


@pytest.mark.parametrize("hint_rule", ["official", "any"])
def test_hints_never_change_the_cards(seed, hint_rule):
    spec = HanabiSpec(hint_rule=hint_rule)
    rng = np.random.default_rng(seed)
    base = HanabiBatch(16, spec)
    base.reset(rng)
    legal = base.action_mask()[:, 0]
    for h in spec.scouting_actions:
        ok = legal[:, h]
        offset, kind = spec.hint_of(h)
        cards = base.hands[:, offset % spec.num_players]
        C, R = spec.colours, spec.ranks
        names = (cards // R == kind if kind < C else cards % R == kind - C) & (cards >= 0)
        assert (ok == names.any(1)).all() if hint_rule == "official" else ok.all()
        if not ok.any():
            continue
        decks = base.decks[ok]
        ref = HanabiBatch(len(decks), spec)
        ref.reset(decks=decks)
        before = ref.task_state()
        env = HanabiBatch(len(decks), spec)
        env.reset(decks=decks)
        acts = np.full((len(decks), spec.num_players), spec.noop)
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
    assert r[0] == 1 and env.fireworks[0, 0] == 1
    assert env.hands[0, 0].tolist() == [deck[1], deck[6]]  # shifted left, the new card last
    # player 1 holds (0/1, 0/2) ranks 0 and 1: discard illegal at full tokens, play of 1 loses
    with pytest.raises(ValueError, match="illegal action 2 for agent 1 in game 0"):
        env.step(np.array([[noop, 2, noop]]))
    _, _, r, done = env.step(np.array([[noop, 0, noop]]))  # a second 1: misplay, last life
    assert env.lives[0] == 0 and done[0] and env.discarded[0, 0] == 1
    assert (env.action_mask()[0, :, noop]).all() and env.action_mask()[0].sum() == N
    # official scoring (the default): the last life lost ends the game with score 0
    assert r[0] == -1 and env.score()[0] == 0 and env.score_keep()[0] == 1


def _bomb_after_one_point(scoring):
    """Player 0 plays a 1 (+1), player 1 plays another 1 (misplay, the only life)."""
    spec = HanabiSpec(scoring=scoring)
    noop = spec.noop
    batch = HanabiBatch(1, spec)
    batch.reset(decks=spec.deck()[None])
    rewards = []
    for acts in ([0, noop, noop], [noop, 0, noop]):
        _, _, r, done = batch.step(np.array([acts]))
        rewards.append(float(r[0]))
    env = HanabiEnv(spec)
    env.reset(options={"deck": spec.deck()})
    single = []
    for acts in ([0, noop, noop], [noop, 0, noop]):
        _, rew, term, _, info = env.step(dict(zip(env.possible_agents, acts)))
        single.append(rew["player_0"])
    assert single == rewards and term["player_0"] and done[0]
    assert info["player_0"]["score"] == batch.score()[0]
    return rewards, batch


def test_losing_the_last_life_scores_zero_under_the_official_rule():
    rewards, batch = _bomb_after_one_point("official")
    assert rewards == [1.0, -1.0] and sum(rewards) == 0  # the reward follows the rule
    assert batch.score()[0] == 0 and batch.score_official()[0] == 0
    assert batch.score_keep()[0] == 1 and batch.lives[0] == 0 and batch.done[0]


def test_losing_the_last_life_keeps_the_score_under_the_keep_score_variant():
    rewards, batch = _bomb_after_one_point("keep_score")
    assert rewards == [1.0, 0.0]
    assert batch.score()[0] == 1 and batch.score_keep()[0] == 1
    assert batch.score_official()[0] == 0  # the official score is still available


def test_official_score_is_the_fireworks_while_a_life_is_left():
    spec = HanabiSpec(lives=2)
    noop = spec.noop
    env = HanabiBatch(1, spec)
    env.reset(decks=spec.deck()[None])
    env.step(np.array([[0, noop, noop]]))
    _, _, r, done = env.step(np.array([[noop, 0, noop]]))  # misplay, one life left
    assert r[0] == 0 and not done[0] and env.lives[0] == 1
    assert env.score()[0] == env.score_keep()[0] == 1


def test_scoring_must_be_a_known_rule():
    with pytest.raises(ValueError, match="scoring='zero' is not allowed: use one of 'official'"):
        HanabiSpec(scoring="zero")


def test_small_hanabi_deck_and_sizes_match_the_hle():
    spec = HanabiSpec()
    # HLE Hanabi-Small: 2 colours, 5 ranks, hand size 2, 3 information tokens, 1 life token
    # (our default has 3 players; the HLE's players are a parameter)
    assert (spec.colours, spec.ranks, spec.hand_size) == (2, 5, 2)
    assert (spec.hint_tokens, spec.lives, spec.max_score) == (3, 1, 10)
    # copies per colour: three 1s, two of each middle rank, one of the top rank
    np.testing.assert_array_equal(np.bincount(spec.deck()), [3, 2, 2, 2, 1] * 2)
    assert spec.deck_size == 20


def test_hints_cost_a_token_and_need_one():
    spec = HanabiSpec()
    noop, H = spec.noop, spec.hand_size
    env = HanabiBatch(1, spec)
    env.reset(decks=spec.deck()[None])  # hands: (0/1, 0/1), (0/1, 0/2), (0/2, 0/3)
    hint = int(spec.scouting_actions[0])  # colour 0 to the next player (every card is colour 0)
    for p in range(3):
        assert env.action_mask()[0, p, hint]
        acts = np.full((1, 3), noop)
        acts[0, p] = hint
        env.step(acts)
        assert env.tokens[0] == spec.hint_tokens - 1 - p
    mask = env.action_mask()[0, 0]
    assert not mask[2 * H : 2 * H + spec.num_hints].any()  # no token: no hint
    assert mask[H : 2 * H].all()  # discards are legal below the maximum
    with pytest.raises(ValueError, match=f"illegal action {hint} for agent 0"):
        env.step(np.array([[hint, noop, noop]]))
    _, _, _, _ = env.step(np.array([[H, noop, noop]]))  # discard: +1 token
    assert env.tokens[0] == 1


def test_a_hint_must_touch_a_card_under_the_official_rule():
    # the HLE's HintColorLegal / HintRankLegal: the target must hold a card of that colour/rank
    spec = HanabiSpec()
    env = HanabiBatch(1, spec)
    env.reset(decks=spec.deck()[None])  # hands (ranks 0-based): p0 (0, 0), p1 (0, 1), p2 (1, 2)
    H, C = spec.hand_size, spec.colours
    mask = env.action_mask()[0, 0]
    to_p1 = 2 * H + np.arange(C + spec.ranks)  # colour 0, colour 1, rank 0 .. rank 4 to p1
    assert mask[to_p1].tolist() == [True, False, True, True, False, False, False]
    with pytest.raises(ValueError, match=f"illegal action {to_p1[1]} for agent 0"):
        env.step(np.array([[to_p1[1], spec.noop, spec.noop]]))


def test_empty_hints_are_legal_in_the_any_variant():
    spec = HanabiSpec(hint_rule="any")
    noop = spec.noop
    env = HanabiBatch(1, spec)
    env.reset(decks=spec.deck()[None])  # player 1 holds two colour-0 cards
    colour1 = 2 * spec.hand_size + 1  # colour 1 to the next player: touches nothing
    assert env.action_mask()[0, 0, colour1]
    env.step(np.array([[colour1, noop, noop]]))
    assert env.tokens[0] == spec.hint_tokens - 1
    assert (env.know_colour == -1).all() and (env.know_rank == -1).all()


def test_drawn_card_is_appended_after_the_later_cards_shift_left():
    # the HLE: the card leaves the hand, the later cards (and what is known of them) shift
    # left, the new card is appended
    spec = HanabiSpec()
    noop, deck = spec.noop, spec.deck()
    env = HanabiBatch(1, spec)
    env.reset(decks=deck[None])
    rank2 = 2 * spec.hand_size + spec.colours + 1  # rank index 1 to the next player
    env.step(np.array([[rank2, noop, noop]]))  # reveals player 1's slot 1
    assert env.know_rank[0, 1].tolist() == [-1, 1]
    kept = env.hands[0, 1, 1]
    env.step(np.array([[noop, 2, noop]]))  # player 1 discards slot 0
    assert env.hands[0, 1].tolist() == [kept, deck[6]]
    assert env.know_rank[0, 1].tolist() == [1, -1]


def test_drawn_card_takes_the_freed_slot_in_the_same_slot_variant():
    spec = HanabiSpec(draw_rule="same_slot")
    noop, deck = spec.noop, spec.deck()
    env = HanabiBatch(1, spec)
    env.reset(decks=deck[None])
    rank1 = 2 * spec.hand_size + spec.colours  # rank 1 to the next player
    env.step(np.array([[rank1, noop, noop]]))  # reveals player 1's slot 0
    assert env.know_rank[0, 1].tolist() == [0, -1]
    kept = env.hands[0, 1, 1]
    env.step(np.array([[noop, 2, noop]]))  # player 1 discards slot 0
    assert env.hands[0, 1].tolist() == [deck[6], kept]
    assert env.know_rank[0, 1].tolist() == [-1, -1]


def test_completing_a_firework_returns_a_token_up_to_the_maximum_and_can_end_the_game():
    # one colour, ranks 1..2: copies (3, 1); two players with one card each
    spec = HanabiSpec(num_players=2, colours=1, ranks=2, hand_size=1, hint_tokens=2, lives=2)
    noop = spec.noop
    env = HanabiBatch(2, spec)
    env.reset(decks=np.array([[0, 0, 1, 0], [0, 0, 1, 0]]))
    env.step(np.array([[0, noop], [0, noop]]))  # player 0 plays its 1, draws the 2
    env.step(np.array([[noop, 2], [noop, 0]]))  # game 0: a hint (token 1); game 1: misplay
    assert env.tokens.tolist() == [1, 2] and env.lives.tolist() == [2, 1]
    _, _, r, done = env.step(np.array([[0, noop], [0, noop]]))  # the 2 completes the colour
    assert env.tokens.tolist() == [2, 2]  # +1, capped at the maximum
    assert done.all() and env.score().tolist() == [2, 2] and r.tolist() == [1, 1]


def test_after_the_last_draw_every_player_gets_one_more_turn():
    spec = HanabiSpec()
    N, H, noop = spec.num_players, spec.hand_size, spec.noop
    env = HanabiBatch(1, spec)
    env.reset(np.random.default_rng(0))
    last_draw, turns = None, 0
    while not env.done[0]:
        acts = np.full((1, N), noop)
        # alternate hints and discards: nobody misplays, every discard draws
        hints = env.action_mask()[0, env.current, 2 * H : 2 * H + spec.num_hints]
        hint = 2 * H + int(np.flatnonzero(hints)[0]) if hints.any() else noop
        acts[0, env.current] = H if env.tokens[0] < spec.hint_tokens else hint
        env.step(acts)
        turns += 1
        if last_draw is None and env.drawn[0] == spec.deck_size:
            last_draw = turns
    assert env.lives[0] == 1 and env.score()[0] == 0
    assert turns == last_draw + N  # the drawer of the last card plays once more, as the N-th


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


@pytest.mark.parametrize("draw_rule", ["official", "same_slot"])
def test_message_channels_are_legal_hints_read_back_by_target_and_kind(seed, draw_rule):
    spec = HanabiSpec(draw_rule=draw_rule)
    rng = np.random.default_rng(seed)
    env = HanabiBatch(64, spec)
    _, mask = env.reset(rng)
    assert spec.num_channels == 4
    while not env.done.all():
        a = env.current
        open_ = env.channels_open()
        for ch in range(spec.num_channels):
            acts = env.channel_actions(np.full(64, ch))
            ok = open_ & (acts >= 0)
            assert (open_ <= (acts >= 0)).all()  # open: every channel has a target card
            assert mask[ok, a, acts[ok]].all()  # a legal hint under the official rule
            assert (spec.channel_of(acts[ok]) == ch).all()
            offset, kind = np.divmod(acts[ok] - 2 * spec.hand_size, spec.colours + spec.ranks)
            assert (offset == ch // 2).all() and ((kind >= spec.colours) == ch % 2).all()
        assert not open_[env.tokens == 0].any() and not open_[env.done].any()
        acts = _random_legal(mask, rng)
        _, mask, _, _ = env.step(acts)
    with pytest.raises(ValueError, match=r"channels must be 64 ints in 0\.\.3"):
        env.channel_actions(np.full(64, 4))
    with pytest.raises(ValueError, match="channel_of takes hint actions"):
        spec.channel_of(np.array([0]))
