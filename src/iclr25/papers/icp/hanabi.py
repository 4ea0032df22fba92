"""Small Hanabi, our own implementation (no hanabi-learning-environment dependency).

Two implementations of the same rules, checked equal step by step by the tests:

- `HanabiBatch`: numpy, B games stepped together; what training uses.
- `HanabiEnv`: one game, written plainly, with the PettingZoo Parallel API (`hanabi_small_v0`;
  seeded `reset`, per-agent spaces, action masks in the observation).

Rules (defaults: N = 3 players, C = 2 colours x R = 5 ranks, hand size H = 2, 3 hint tokens,
1 life; the "Hanabi-Small" sizes of the Hanabi Learning Environment, with 3 players):

- deck: per colour three 1s, two of each middle rank and one R (C * 10 = 20 cards), shuffled;
  H cards dealt to each player; a player sees every hand but its own.
- turns: player t mod N acts on turn t; the others must no-op.
- play slot s: the card goes on its colour's firework if it is the next rank (+1 point;
  completing a colour returns a hint token), else it is discarded and a life is lost; the
  card leaves the hand and a new one is drawn (`HanabiSpec.draw_rule`: "official", the HLE's:
  the later cards shift left and the new card goes to the last slot; "same_slot", a documented
  variant: the new card takes slot s). An empty deck draws nothing: the hand shrinks (empty
  slots at the end under the official rule).
- discard slot s: legal only below the hint-token maximum; +1 hint token; draw as above.
- hint: to another player (seat offset 1..N-1), a colour or a rank; costs a hint token; every
  card of that colour/rank in the target's hand becomes known to everybody
  (`HanabiSpec.hint_rule`: "official", the HLE's: legal only if it touches at least one card;
  "any", a documented variant: a hint that touches no card is legal too). Hints never change
  the cards: they are the scouting actions.
- end: no life left, every firework complete, or one more turn each after the last draw.
- score (`HanabiSpec.scoring`): "official" (the Hanabi Learning Environment's rule, the
  default): the sum of the fireworks heights, but 0 once the last life is lost; "keep_score"
  (our earlier rule, a documented variant): the sum of the fireworks heights always.
- reward: the change of the score on each turn (official: the turn that loses the last life
  takes back every point scored, as the HLE's `rl_env` reward does).

Message channels (what ICP's map φ ranges over, `HanabiSpec.num_channels` = 2(N-1)): channel
2(o-1) + t is "a hint to the player o seats after the sender naming the colour (t = 0) or the
rank (t = 1) of that player's first card" (`HanabiBatch.channel_actions`): legal under both
hint rules whenever a hint token is left and the target holds a card, whatever the cards are;
a receiver reads the channel back from the hint's target and kind (`HanabiSpec.channel_of`).

Actions (A = 2H + (N-1)(C+R) + 1): `s` play slot s, `H + s` discard slot s,
`2H + (o-1)(C+R) + k` hint to the player o seats after the actor, colour k (k < C) or rank
k - C, and `A - 1` no-op.

Observation of agent i (float32 vector, `HanabiSpec.obs_dim`): every hand's cards one-hot per
slot (N*H*C*R; own hand zero, empty slots zero), what hints revealed about every card (colour
one-hot, rank one-hot: N*H*(C+R)), fireworks heights one-hot (C*(R+1)), hint tokens one-hot,
lives one-hot, the fraction of the deck left (1), discarded copies per card type over its
count (C*R), the agent id one-hot (N), the player to act one-hot (N), and the previous turn's
action one-hot (A + 1, last slot: none yet).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from iclr25.core.checks import check_choice, check_int
from iclr25.papers.icp.env import _ParallelEnv

HANABI_NAME = "hanabi_small_v0"

# DEVIATION: the rules follow the Hanabi Learning Environment by default (hint legality, slot
# order, scoring; checked against its C++ game code); three players where the HLE's
# Hanabi-Small preset has two (hat coding needs two receivers per broadcast). Our earlier
# rules are documented variants: `hint_rule="any"` (a hint touching no card is legal),
# `draw_rule="same_slot"` (the new card takes the freed slot), `scoring="keep_score"` (the
# fireworks' sum is kept when the last life is lost). ICP's messages use the channels "hint
# the colour / rank of the target's first card" (always legal while a token is left), the
# research notes' "4 always-legal hints (player a or b) x (colour or rank)".

SCORING = ("official", "keep_score")
"""The scoring rules: the HLE's (0 after the last life is lost) and the keep-score variant."""
HINT_RULES = ("official", "any")
"""Hint legality: the HLE's (the hint touches a card) and the any-hint variant."""
DRAW_RULES = ("official", "same_slot")
"""Where a drawn card goes: the HLE's (later cards shift left, the new one is appended) and the
same-slot variant."""


@dataclass(frozen=True)
class HanabiSpec:
    """The sizes of one Small Hanabi game (rules in the module docstring).

    Attributes:
        num_players: N (>= 2).
        colours: C (>= 1).
        ranks: R (>= 2); copies per colour: three of rank 1, two of each middle rank, one of R.
        hand_size: H (>= 1).
        hint_tokens: the maximum (and initial) number of hint tokens (>= 1).
        lives: lives at the start (>= 1).
        scoring: "official" (default; the score is 0 once the last life is lost, as in the
            Hanabi Learning Environment) or "keep_score" (the fireworks' sum always).
        hint_rule: "official" (default; a hint must touch a card, as in the HLE) or "any".
        draw_rule: "official" (default; the later cards shift left and the drawn card goes to
            the last slot, as in the HLE) or "same_slot" (it takes the freed slot).
    """

    num_players: int = 3
    colours: int = 2
    ranks: int = 5
    hand_size: int = 2
    hint_tokens: int = 3
    lives: int = 1
    scoring: str = "official"
    hint_rule: str = "official"
    draw_rule: str = "official"

    def __post_init__(self) -> None:
        check_choice("scoring", self.scoring, SCORING)
        check_choice("hint_rule", self.hint_rule, HINT_RULES)
        check_choice("draw_rule", self.draw_rule, DRAW_RULES)
        check_int("num_players", self.num_players, 2)
        check_int("colours", self.colours, 1)
        check_int("ranks", self.ranks, 2)
        check_int("hand_size", self.hand_size, 1)
        check_int("hint_tokens", self.hint_tokens, 1)
        check_int("lives", self.lives, 1)
        if self.num_players * self.hand_size >= self.deck_size:
            raise ValueError(
                f"num_players * hand_size = {self.num_players * self.hand_size} must be below "
                f"the deck size {self.deck_size}"
            )

    @property
    def copies(self) -> np.ndarray:
        """Copies of each rank in one colour, (R,)."""
        c = np.full(self.ranks, 2, dtype=np.int64)
        c[0], c[-1] = 3, 1
        return c

    @property
    def deck_size(self) -> int:
        """C * (copies summed over ranks)."""
        return self.colours * int(self.copies.sum())

    @property
    def num_types(self) -> int:
        """C * R card types; card id = colour * R + rank."""
        return self.colours * self.ranks

    @property
    def max_score(self) -> int:
        """C * R."""
        return self.num_types

    @property
    def num_hints(self) -> int:
        """(N - 1) * (C + R) hint actions."""
        return (self.num_players - 1) * (self.colours + self.ranks)

    @property
    def num_channels(self) -> int:
        """2(N - 1) message channels: (target seat offset) x (colour or rank of its first card)."""
        return 2 * (self.num_players - 1)

    def channel_of(self, actions: np.ndarray) -> np.ndarray:
        """The channel 2(o-1) + (kind is a rank) of hint actions (o: the target's seat offset)."""
        k = np.asarray(actions) - 2 * self.hand_size
        if k.size and (k.min() < 0 or k.max() >= self.num_hints):
            raise ValueError(f"channel_of takes hint actions, got {np.asarray(actions).tolist()}")
        per_target = self.colours + self.ranks
        return 2 * (k // per_target) + (k % per_target >= self.colours)

    @property
    def num_actions(self) -> int:
        """Play H slots, discard H slots, the hints, and the no-op."""
        return 2 * self.hand_size + self.num_hints + 1

    @property
    def noop(self) -> int:
        """The no-op action (the only legal action of a player not on turn)."""
        return self.num_actions - 1

    @property
    def scouting_actions(self) -> np.ndarray:
        """The hints, A^s."""
        return np.arange(2 * self.hand_size, 2 * self.hand_size + self.num_hints)

    @property
    def obs_dim(self) -> int:
        """Length of an agent's observation vector."""
        N, H, C, R = self.num_players, self.hand_size, self.colours, self.ranks
        return (
            N * H * C * R
            + N * H * (C + R)
            + C * (R + 1)
            + self.hint_tokens
            + 1
            + self.lives
            + 1
            + 1
            + C * R
            + 2 * N
            + self.num_actions
            + 1
        )

    @property
    def feature_dim(self) -> int:
        """Length of `HanabiBatch.private_features`: one hand one-hot (H*C*R) + fireworks."""
        return self.hand_size * self.num_types + self.colours * (self.ranks + 1)

    def deck(self) -> np.ndarray:
        """The unshuffled deck of card ids."""
        one = np.repeat(np.arange(self.ranks), self.copies)
        return np.concatenate([c * self.ranks + one for c in range(self.colours)])

    def hint_of(self, action: int) -> tuple[int, int]:
        """(seat offset 1..N-1, kind 0..C+R-1) of a hint action."""
        k = int(action) - 2 * self.hand_size
        return k // (self.colours + self.ranks) + 1, k % (self.colours + self.ranks)


class HanabiBatch:
    """B Small Hanabi games stepped together (numpy).

    Args:
        num_envs: B.
        spec: The game sizes.

    Shapes:
        `reset`/`step` return `obs (B, N, obs_dim)` float32 and `mask (B, N, A)` bool; `step`
        takes `actions (B, N)` ints and also returns `reward (B,)` and `done (B,)` bool.
        Finished games stay finished: every agent may only no-op and the reward is 0.
    """

    def __init__(self, num_envs: int, spec: HanabiSpec | None = None) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.spec = spec or HanabiSpec()
        self.t = -1

    def reset(
        self, rng: np.random.Generator | None = None, decks: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Start B games with decks shuffled by `rng` (or the given `decks`, (B, deck_size))."""
        sp, B = self.spec, self.num_envs
        N, H = sp.num_players, sp.hand_size
        if decks is None:
            if rng is None:
                raise ValueError("reset needs rng (a numpy Generator) or decks, got neither")
            decks = rng.permuted(np.tile(sp.deck(), (B, 1)), axis=1)
        decks = np.asarray(decks)
        if decks.shape != (B, sp.deck_size):
            raise ValueError(
                f"decks must have shape (num_envs, deck_size) = {(B, sp.deck_size)}, "
                f"got {decks.shape}"
            )
        if not (np.sort(decks, axis=1) == np.sort(sp.deck())).all():
            raise ValueError("each deck must be a permutation of spec.deck()")
        self.decks = decks.astype(np.int64)
        self.hands = self.decks[:, : N * H].reshape(B, N, H).copy()
        self.drawn = np.full(B, N * H, dtype=np.int64)
        self.know_colour = np.full((B, N, H), -1, dtype=np.int64)
        self.know_rank = np.full((B, N, H), -1, dtype=np.int64)
        self.fireworks = np.zeros((B, sp.colours), dtype=np.int64)
        self.tokens = np.full(B, sp.hint_tokens, dtype=np.int64)
        self.lives = np.full(B, sp.lives, dtype=np.int64)
        self.discarded = np.zeros((B, sp.num_types), dtype=np.int64)
        self.turns_left = np.full(B, -1, dtype=np.int64)  # counts down once the deck is empty
        self.last_action = np.full(B, -1, dtype=np.int64)
        self.done = np.zeros(B, dtype=bool)
        self.t = 0
        return self.observe(), self.action_mask()

    @property
    def current(self) -> int:
        """The player on turn (the same in every game)."""
        return self.t % self.spec.num_players

    def score(self) -> np.ndarray:
        """The score under `spec.scoring`, (B,): the fireworks' sum, 0 once the last life is
        lost under "official"."""
        return self.score_official() if self.spec.scoring == "official" else self.score_keep()

    def score_keep(self) -> np.ndarray:
        """The keep-score rule: the sum of the fireworks heights, (B,)."""
        return self.fireworks.sum(1)

    def score_official(self) -> np.ndarray:
        """The HLE's rule: the sum of the fireworks heights, 0 once no life is left, (B,)."""
        return np.where(self.lives > 0, self.fireworks.sum(1), 0)

    def private_features(self) -> np.ndarray:
        """What every other player knows about player j: its hand one-hot and the fireworks,
        (B, N, feature_dim) float32 (no player sees its own row)."""
        sp, B, N = self.spec, self.num_envs, self.spec.num_players
        hand = np.zeros((B, N, sp.hand_size, sp.num_types), dtype=np.float32)
        b, j, s = np.nonzero(self.hands >= 0)
        hand[b, j, s, self.hands[b, j, s]] = 1.0
        fw = np.eye(sp.ranks + 1, dtype=np.float32)[self.fireworks].reshape(B, 1, -1)
        return np.concatenate([hand.reshape(B, N, -1), np.repeat(fw, N, axis=1)], axis=-1)

    def observe(self) -> np.ndarray:
        """Every agent's observation vector, (B, N, obs_dim)."""
        sp, B = self.spec, self.num_envs
        N, H, C, R, T = sp.num_players, sp.hand_size, sp.colours, sp.ranks, sp.num_types
        obs = np.zeros((B, N, sp.obs_dim), dtype=np.float32)
        hand = np.zeros((B, N, H, T), dtype=np.float32)
        b, j, s = np.nonzero(self.hands >= 0)
        hand[b, j, s, self.hands[b, j, s]] = 1.0
        own = np.repeat(np.eye(N, dtype=np.float32), H * T, axis=1)  # (N, N*H*T)
        obs[:, :, : N * H * T] = hand.reshape(B, 1, -1) * (1.0 - own)
        off = N * H * T
        know = np.zeros((B, N, H, C + R), dtype=np.float32)
        b, j, s = np.nonzero(self.know_colour >= 0)
        know[b, j, s, self.know_colour[b, j, s]] = 1.0
        b, j, s = np.nonzero(self.know_rank >= 0)
        know[b, j, s, C + self.know_rank[b, j, s]] = 1.0
        obs[:, :, off : off + N * H * (C + R)] = know.reshape(B, 1, -1)
        off += N * H * (C + R)
        public = [
            np.eye(R + 1, dtype=np.float32)[self.fireworks].reshape(B, -1),
            np.eye(sp.hint_tokens + 1, dtype=np.float32)[self.tokens],
            np.eye(sp.lives + 1, dtype=np.float32)[self.lives],
            ((sp.deck_size - self.drawn) / sp.deck_size).astype(np.float32)[:, None],
            (self.discarded / np.tile(sp.copies, C)).astype(np.float32),
        ]
        pub = np.concatenate(public, axis=1)
        obs[:, :, off : off + pub.shape[1]] = pub[:, None]
        off += pub.shape[1]
        obs[:, :, off : off + N] = np.eye(N, dtype=np.float32)
        off += N
        obs[:, :, off + self.current] = 1.0
        off += N
        last = np.where(self.last_action >= 0, self.last_action, sp.num_actions)
        obs[np.arange(B), :, off + last] = 1.0
        return obs

    def action_mask(self) -> np.ndarray:
        """Legal actions, (B, N, A) bool."""
        sp, B, H = self.spec, self.num_envs, self.spec.hand_size
        mask = np.zeros((B, sp.num_players, sp.num_actions), dtype=bool)
        mask[:, :, sp.noop] = True
        a, live = self.current, ~self.done
        mask[live, a, sp.noop] = False
        has = self.hands[:, a] >= 0  # (B, H)
        mask[:, a, :H] = has & live[:, None]
        mask[:, a, H : 2 * H] = has & (live & (self.tokens < sp.hint_tokens))[:, None]
        hints = (live & (self.tokens > 0))[:, None]
        if sp.hint_rule == "official":
            hints = hints & self._hints_touching(a)
        mask[:, a, 2 * H : 2 * H + sp.num_hints] = hints
        return mask

    def _hints_touching(self, actor: int) -> np.ndarray:
        """Whether each hint of `actor` touches at least one card of its target, (B, hints)."""
        sp = self.spec
        C, R = sp.colours, sp.ranks
        out = []
        for offset in range(1, sp.num_players):
            hand = self.hands[:, (actor + offset) % sp.num_players]  # (B, H), -1: empty
            held = hand >= 0
            colour = (hand[..., None] // R == np.arange(C)) & held[..., None]
            rank = (hand[..., None] % R == np.arange(R)) & held[..., None]
            out += [colour.any(1), rank.any(1)]
        return np.concatenate(out, axis=1)

    def channels_open(self) -> np.ndarray:
        """Whether the player on turn may send on every channel, (B,): a live game, a hint token
        left, and every other player holding a card."""
        sp, a = self.spec, self.current
        others = [(a + o) % sp.num_players for o in range(1, sp.num_players)]
        holding = (self.hands[:, others] >= 0).any(-1).all(-1)
        return ~self.done & (self.tokens > 0) & holding

    def channel_actions(self, channels: np.ndarray) -> np.ndarray:
        """The hint action of each game's channel for the player on turn, (B,) from (B,): the
        colour (even channel) or rank (odd) of the first card of the player 1 + channel // 2
        seats on; -1 where that player holds no card."""
        sp, B = self.spec, self.num_envs
        ch = np.asarray(channels)
        if ch.shape != (B,) or (ch.size and (ch.min() < 0 or ch.max() >= sp.num_channels)):
            raise ValueError(
                f"channels must be {B} ints in 0..{sp.num_channels - 1}, got {ch.tolist()}"
            )
        offset = ch // 2 + 1
        target = (self.current + offset) % sp.num_players
        hand = self.hands[np.arange(B), target]  # (B, H)
        card = hand[np.arange(B), (hand >= 0).argmax(1)]
        kind = np.where(ch % 2 == 0, card // sp.ranks, sp.colours + card % sp.ranks)
        action = 2 * sp.hand_size + (offset - 1) * (sp.colours + sp.ranks) + kind
        return np.where(card >= 0, action, -1)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one joint action (B, N); illegal actions raise naming the game and agent."""
        sp, B = self.spec, self.num_envs
        N, H, C, R = sp.num_players, sp.hand_size, sp.colours, sp.ranks
        if self.t < 0:
            raise RuntimeError("step called before reset")
        actions = np.asarray(actions)
        if actions.shape != (B, N):
            raise ValueError(
                f"actions must have shape (num_envs, num_players) = {(B, N)}, got {actions.shape}"
            )
        if not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {actions.dtype}")
        mask = self.action_mask()
        inside = (actions >= 0) & (actions < sp.num_actions)
        clipped = np.clip(actions, 0, sp.num_actions - 1)
        legal = inside & np.take_along_axis(mask, clipped[..., None], 2)[..., 0]
        if not legal.all():
            b, i = np.argwhere(~legal)[0]
            raise ValueError(
                f"illegal action {int(actions[b, i])} for agent {i} in game {b} at turn {self.t}; "
                f"legal: {np.flatnonzero(mask[b, i]).tolist()}"
            )
        a, live = self.current, ~self.done
        act = actions[:, a]
        before = self.score()
        counting = live & (self.turns_left > 0)
        rows = np.arange(B)
        slot = act % H
        card = self.hands[rows, a, slot]
        play = live & (act < H)
        discard = live & (act >= H) & (act < 2 * H)
        hint = live & (act >= 2 * H) & (act < 2 * H + sp.num_hints)
        # play
        colour, rank = card // R, card % R
        ok = play & (self.fireworks[rows, np.maximum(colour, 0)] == rank)
        bad = play & ~ok
        self.fireworks[rows[ok], colour[ok]] += 1
        complete = ok & (rank == R - 1)
        self.tokens = np.where(complete, np.minimum(self.tokens + 1, sp.hint_tokens), self.tokens)
        self.lives = self.lives - bad
        # discard (and misplays go to the discard pile)
        gone = bad | discard
        np.add.at(self.discarded, (rows[gone], card[gone]), 1)
        self.tokens = self.tokens + discard
        # draw: official, the later cards shift left and the new one is appended; same_slot,
        # the new card takes the freed slot
        freed = play | discard
        has_card = freed & (self.drawn < sp.deck_size)
        new = np.where(has_card, self.decks[rows, np.minimum(self.drawn, sp.deck_size - 1)], -1)
        into = slot
        if sp.draw_rule == "official":
            for s in range(H - 1):
                shift = freed & (slot <= s)
                for arr in (self.hands, self.know_colour, self.know_rank):
                    arr[shift, a, s] = arr[shift, a, s + 1]
            into = np.full(B, H - 1)
        self.hands[rows[freed], a, into[freed]] = new[freed]
        self.know_colour[rows[freed], a, into[freed]] = -1
        self.know_rank[rows[freed], a, into[freed]] = -1
        self.drawn = self.drawn + has_card
        # hint
        k = act - 2 * H
        target = (a + k // (C + R) + 1) % N
        kind = k % (C + R)
        self.tokens = self.tokens - hint
        for s in range(H):
            c = self.hands[rows, target, s]
            on = hint & (c >= 0)
            by_colour = on & (kind < C) & (c // R == kind)
            by_rank = on & (kind >= C) & (c % R == kind - C)
            self.know_colour[rows[by_colour], target[by_colour], s] = kind[by_colour]
            self.know_rank[rows[by_rank], target[by_rank], s] = kind[by_rank] - C
        # end of the game
        self.turns_left = np.where(counting, self.turns_left - 1, self.turns_left)
        last_drawn = has_card & (self.drawn == sp.deck_size)
        self.turns_left = np.where(last_drawn, N, self.turns_left)
        reward = np.where(live, self.score() - before, 0).astype(np.float32)
        finished = live & (
            (self.lives == 0) | (self.score_keep() == sp.max_score) | (self.turns_left == 0)
        )
        self.last_action = np.where(live, act, self.last_action)
        self.done = self.done | finished
        self.t += 1
        return self.observe(), self.action_mask(), reward, self.done.copy()

    def task_state(self) -> tuple[np.ndarray, ...]:
        """The cards: hands, fireworks, discards, lives and the draw position (hints never
        change them)."""
        return (
            self.hands.copy(),
            self.fireworks.copy(),
            self.discarded.copy(),
            self.lives.copy(),
            self.drawn.copy(),
        )


class HanabiEnv(_ParallelEnv):
    """One Small Hanabi game with the PettingZoo Parallel API (`hanabi_small_v0`).

    Agents are `"player_0" .. "player_{N-1}"`; observations `{"observation": float32
    (obs_dim,), "action_mask": int8 (A,)}`; actions `Discrete(A)`. Turn-based rules inside a
    parallel API: every live agent submits an action each step, only the player on turn may do
    something other than the no-op (its mask says so). An illegal action raises `ValueError`
    naming the agent, the action and the legal ones. `info["score"]` holds the score at the end
    (under `spec.scoring`).
    Needs the `marl` extra (gymnasium spaces).

    Args:
        spec: The game sizes (default: N=3, C=2, R=5, H=2, 3 hint tokens, 1 life, official
            scoring).
    """

    metadata: ClassVar[dict] = {"name": HANABI_NAME, "render_modes": [], "is_parallelizable": True}

    def __init__(self, spec: HanabiSpec | None = None) -> None:
        spec = spec or HanabiSpec()
        super().__init__(spec, "player", spec.num_players)

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a game; `options={"deck": [...]}` fixes the card order (tests)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        sp = self.spec
        deck = (options or {}).get("deck")
        if deck is None:
            deck = self._rng.permutation(sp.deck())
        deck = [int(c) for c in deck]
        if sorted(deck) != sorted(sp.deck().tolist()):
            raise ValueError(f"options['deck'] must be a permutation of spec.deck(), got {deck}")
        N, H = sp.num_players, sp.hand_size
        self.deck = deck
        self.hands = [[deck[j * H + s] for s in range(H)] for j in range(N)]
        self.drawn = N * H
        self.knowledge = [[[None, None] for _ in range(H)] for _ in range(N)]  # colour, rank
        self.fireworks = [0] * sp.colours
        self.tokens, self.lives = sp.hint_tokens, sp.lives
        self.discarded = [0] * sp.num_types
        self.turns_left: int | None = None
        self.last_action: int | None = None
        self.over = False
        self.t = 0
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def _score(self) -> int:
        """The score under `spec.scoring` (official: 0 once no life is left)."""
        if self.spec.scoring == "official" and self.lives == 0:
            return 0
        return sum(self.fireworks)

    def _legal(self, i: int) -> list[int]:
        sp, H = self.spec, self.spec.hand_size
        if self.over or i != self.t % sp.num_players:
            return [sp.noop]
        legal = [s for s in range(H) if self.hands[i][s] is not None]
        if self.tokens < sp.hint_tokens:
            legal += [H + s for s in range(H) if self.hands[i][s] is not None]
        if self.tokens > 0:
            for a in sp.scouting_actions:
                offset, kind = sp.hint_of(a)
                hand = self.hands[(i + offset) % sp.num_players]
                if sp.hint_rule == "any" or any(
                    c is not None and self._names(c, kind) for c in hand
                ):
                    legal.append(int(a))
        return legal

    def _names(self, card: int, kind: int) -> bool:
        """Whether a hint of `kind` (colour k < C, else rank k - C) names `card`."""
        C, R = self.spec.colours, self.spec.ranks
        return card // R == kind if kind < C else card % R == kind - C

    def _observations(self) -> dict:
        sp = self.spec
        N, H, C, R, T = sp.num_players, sp.hand_size, sp.colours, sp.ranks, sp.num_types
        out = {}
        for i, agent in enumerate(self.possible_agents):
            o = np.zeros(sp.obs_dim, dtype=np.float32)
            for j in range(N):
                for s in range(H):
                    card = self.hands[j][s]
                    if j != i and card is not None:
                        o[(j * H + s) * T + card] = 1.0
                    colour, rank = self.knowledge[j][s]
                    base = N * H * T + (j * H + s) * (C + R)
                    if colour is not None:
                        o[base + colour] = 1.0
                    if rank is not None:
                        o[base + C + rank] = 1.0
            off = N * H * T + N * H * (C + R)
            for c in range(C):
                o[off + c * (R + 1) + self.fireworks[c]] = 1.0
            off += C * (R + 1)
            o[off + self.tokens] = 1.0
            off += sp.hint_tokens + 1
            o[off + self.lives] = 1.0
            off += sp.lives + 1
            o[off] = (sp.deck_size - self.drawn) / sp.deck_size
            off += 1
            for card in range(T):
                o[off + card] = self.discarded[card] / sp.copies[card % R]
            off += T
            o[off + i] = 1.0
            o[off + N + self.t % N] = 1.0
            off += 2 * N
            o[off + (sp.num_actions if self.last_action is None else self.last_action)] = 1.0
            mask = np.zeros(sp.num_actions, dtype=np.int8)
            mask[self._legal(i)] = 1
            out[agent] = {"observation": o, "action_mask": mask}
        return out

    def step(self, actions: dict):
        """Apply one joint action `{agent: int}` (every live agent must act)."""
        sp = self.spec
        N, H, C, R = sp.num_players, sp.hand_size, sp.colours, sp.ranks
        acts = self._joint_action(actions)
        for i, a in enumerate(acts):
            if a not in self._legal(i):
                raise ValueError(
                    f"illegal action {a} for agent {self.possible_agents[i]} at turn {self.t}; "
                    f"legal: {self._legal(i)}"
                )
        p = self.t % N
        act = acts[p]
        before = self._score()
        counting = self.turns_left is not None
        if act < 2 * H:  # play or discard slot act % H
            slot = act % H
            card = self.hands[p][slot]
            colour, rank = divmod(card, R)
            if act < H and self.fireworks[colour] == rank:
                self.fireworks[colour] += 1
                if rank == R - 1:
                    self.tokens = min(self.tokens + 1, sp.hint_tokens)
            else:
                self.discarded[card] += 1
                if act < H:
                    self.lives -= 1
                else:
                    self.tokens += 1
            new = None
            if self.drawn < sp.deck_size:
                new = self.deck[self.drawn]
                self.drawn += 1
            if sp.draw_rule == "official":  # the later cards shift left, the new one is last
                del self.hands[p][slot], self.knowledge[p][slot]
                self.hands[p].append(new)
                self.knowledge[p].append([None, None])
            else:
                self.hands[p][slot] = new
                self.knowledge[p][slot] = [None, None]
            if new is not None and self.drawn == sp.deck_size:
                self.turns_left = N + 1  # minus this turn below
        else:  # hint
            offset, kind = sp.hint_of(act)
            target = (p + offset) % N
            self.tokens -= 1
            for s, card in enumerate(self.hands[target]):
                if card is not None and self._names(card, kind):
                    self.knowledge[target][s][int(kind >= C)] = kind if kind < C else kind - C
        if counting or self.turns_left is not None:
            self.turns_left -= 1
        self.last_action = act
        self.t += 1
        score = self._score()
        done = self.lives == 0 or sum(self.fireworks) == sp.max_score or self.turns_left == 0
        self.over = done
        obs = self._observations()
        agents = list(self.agents)
        out = (
            obs,
            {a: float(score - before) for a in agents},
            {a: done for a in agents},
            {a: False for a in agents},
            {a: ({"score": score} if done else {}) for a in agents},
        )
        if done:
            self.agents = []
        return out
