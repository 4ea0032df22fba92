"""VDN, ICP-RM and ICP-DM on Small Hanabi, reusing the agents of `method.py`.

What Hanabi needs beyond Guessing Numbers:

- Turn-based play: on each turn only the player on turn acts, the others' only legal action is
  the no-op; the team value is still Q_tot = Σ_i Q_i over all players (VDN), the no-op values
  included, as in Guessing Numbers.
- Games end at different turns: `Rollout.live` masks finished games out of the TD loss.
- The scouting actions are the hints. The network input is the full observation (which holds
  the previous action and what hints revealed) plus one message slot: the message this agent
  decoded from the previous turn (zeros when none).
- ICP-RM: the player on turn chooses send-or-act (the gate, straight-through on two logits read
  from its Q-head), a message m from its message head (straight-through Gumbel), and the
  environment executes the hint of channel φ(m) (`HanabiBatch.channel_actions`: the colour or
  rank of the target's first card, legal under the HLE's rule whatever the cards). Sending
  needs a hint token and a card in every other hand; otherwise the gate acts.
- ICP-DM: stage 1 gives the player on turn a free explicit channel (one message per other
  player, from the per-receiver head, which reads only what everybody but the receiver sees:
  the receiver's hand and the fireworks); the frozen head is then the "lookup table" and stage
  2 broadcasts the hat code of those messages through the delayed map φ.

Public API: `HanabiTeam`, `hanabi_rollout`, `fit_hanabi`, `evaluate_hanabi`, `train_hanabi`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_float, check_int
from iclr25.papers.icp.hanabi import HanabiBatch, HanabiSpec
from iclr25.papers.icp.method import (
    AgentNet,
    InformationMap,
    Rollout,
    TrainSettings,
    _choose,
    _st_choice,
    bootstrap_max,
    hat_decode,
    hat_encode,
    schedule,
    st_gumbel_softmax,
    td_loss,
)

# DEVIATION: Hanabi is turn-based but our agents are simultaneous-move: every player submits an
# action each turn, the player on turn's action counts and the others' only legal action is
# the no-op; Q_tot sums all players' Q values (the no-ops included). The budget is equal
# environment steps (turns of live games), not games. ICP-DM's "lookup table" is the frozen
# stage-1 network (its per-receiver head on the receiver's hand and the fireworks: too many
# inputs to enumerate), and each message is seen for one turn (the GRU keeps it).

HANABI_MODES = ("vdn", "explicit", "icp_rm", "icp_dm")
"""VDN (hints in the Q action space, no channel), the explicit channel (ICP-DM's stage 1),
ICP with a random fixed map, ICP with the delayed map and hat coding."""


class HanabiTeam:
    """All players of one team: a shared `AgentNet`, a mode, the fixed map and (ICP-DM) the
    frozen lookup network.

    Args:
        spec: The game sizes.
        mode: One of `HANABI_MODES`.
        net: The shared network (`HanabiTeam.network`).
        info_map: φ over hint actions, required by "icp_rm" and "icp_dm".
        table: ICP-DM's frozen stage-1 network (only its per-receiver head is used).
    """

    def __init__(
        self,
        spec: HanabiSpec,
        mode: str,
        net: AgentNet,
        info_map: InformationMap | None = None,
        table: AgentNet | None = None,
    ) -> None:
        if mode not in HANABI_MODES:
            raise ValueError(f"mode must be one of {HANABI_MODES}, got {mode!r}")
        if mode in ("icp_rm", "icp_dm") and info_map is None:
            raise ValueError(f"mode {mode!r} needs an info_map")
        if mode == "icp_dm" and table is None:
            raise ValueError("mode 'icp_dm' needs the frozen stage-1 network as table")
        self.spec, self.mode, self.net = spec, mode, net
        self._info_map, self._table = info_map, table

    @property
    def info_map(self) -> InformationMap | None:
        """φ, fixed for the team's lifetime."""
        return self._info_map

    @property
    def num_messages(self) -> int:
        """M (0 for VDN)."""
        return 0 if self.mode == "vdn" else self.net.msg_head[-1].out_features

    def table_messages(self, sender: int, features: np.ndarray) -> np.ndarray:
        """ICP-DM: the greedy stage-1 message to every player, (B, N) from features (B, N, F)."""
        with torch.no_grad():
            return (
                self._table.receiver_logits(sender, torch.from_numpy(features)).argmax(-1).numpy()
            )

    @staticmethod
    def network(spec: HanabiSpec, mode: str, hidden: int = 64, num_messages: int = 4) -> AgentNet:
        """A fresh network (build it under `core.seeding.torch_seed`)."""
        if mode not in HANABI_MODES:
            raise ValueError(f"mode must be one of {HANABI_MODES}, got {mode!r}")
        if mode != "vdn" and not 2 <= num_messages <= spec.num_channels:
            raise ValueError(
                f"num_messages must lie in 2..{spec.num_channels} (the message channels; φ is "
                f"injective), got {num_messages}"
            )
        M = 0 if mode == "vdn" else num_messages
        return AgentNet(
            in_dim=spec.obs_dim + M,
            num_actions=spec.num_actions,
            hidden=hidden,
            num_messages=M,
            num_agents=spec.num_players,
            num_values=spec.feature_dim,
        )


def hanabi_rollout(
    team: HanabiTeam,
    env: HanabiBatch,
    rng: np.random.Generator,
    *,
    eps: float = 0.0,
    tau: float = 1.0,
    generator: torch.Generator | None = None,
    noise: float = 1.0,
    target: AgentNet | None = None,
) -> Rollout:
    """Play B games to their end, keeping the autograd graph (DIAL through the messages).

    `generator=None`: greedy gate and messages (execution). `target`: the network whose values
    bootstrap (`Rollout.next_max`; None: the online network's). Returns a `Rollout` with
    `live`; `sent` is (L, B): whether the player on turn hinted (VDN) or sent a message (ICP
    modes).
    """
    sp, net, mode = team.spec, team.net, team.mode
    if env.spec != sp:
        raise ValueError(f"the environment's spec {env.spec} differs from the team's {sp}")
    B, N, A, M = env.num_envs, sp.num_players, sp.num_actions, team.num_messages
    obs, mask = env.reset(rng)
    h = torch.zeros(B * N, net.hidden)
    h_target = torch.zeros(B * N, net.hidden)
    slot = torch.zeros(B, N, M)
    regular = np.ones(A, dtype=bool)
    regular[sp.scouting_actions] = False
    reg_t = torch.from_numpy(regular)
    q_taken, best, rewards, lives, sent, received = [], [], [], [], [], []
    while not env.done.all():
        live = ~env.done
        a = env.current
        not_sender = torch.ones(N)
        not_sender[a] = 0.0
        x = torch.from_numpy(obs)
        if mode != "vdn":
            x = torch.cat([x, slot], dim=-1)
        q, h = net(x.reshape(B * N, -1), h)
        q = q.view(B, N, A)
        actions = _choose(q, mask, eps, rng)
        new_slot = torch.zeros(B, N, M)
        send = np.zeros(B, dtype=bool)
        if mode == "explicit":  # a free per-receiver channel beside the action
            feats = torch.from_numpy(env.private_features())
            y = st_gumbel_softmax(net.receiver_logits(a, feats), tau, generator, noise)
            new_slot = y * not_sender[None, :, None] * torch.from_numpy(live)[:, None, None]
        elif mode in ("icp_rm", "icp_dm"):
            can_send = env.channels_open()
            legal_q = q[:, a].masked_fill(~torch.from_numpy(mask[:, a]), -1e9)
            logits = torch.stack([legal_q[:, reg_t].amax(-1), legal_q[:, ~reg_t].amax(-1)], -1)
            gate_mask = np.stack([np.ones(B, dtype=bool), can_send], -1)
            gate = _st_choice(logits, tau, _choose(logits, gate_mask, eps, rng))[:, 1]
            act = _choose(q[:, a], mask[:, a] & regular, eps, rng)
            if mode == "icp_rm":
                y = st_gumbel_softmax(net.msg_head(x[:, a]), tau, generator, noise)
                msg = y.argmax(-1).numpy()
            else:  # the delayed map: hat code of the frozen table's per-receiver messages
                feats = env.private_features()
                per_receiver = team.table_messages(a, feats)
                msg = hat_encode(per_receiver, a, M)
            send = gate.detach().numpy() > 0.5
            channel = env.channel_actions(team.info_map.encode(msg))
            actions[:, a] = np.where(send, channel, act)
        q_taken.append(q.gather(-1, torch.from_numpy(actions)[..., None])[..., 0])
        top, h_target = bootstrap_max(q, x, mask, target, h_target)
        best.append(top)
        lives.append(torch.from_numpy(live).float())
        obs, mask, reward, _ = env.step(actions)
        rewards.append(torch.from_numpy(reward))
        if mode in ("icp_rm", "icp_dm"):
            # receivers decode what the environment broadcast: φ⁻¹ of the observed hint
            code = np.zeros(B, dtype=np.int64)
            code[send] = team.info_map.decode(sp.channel_of(env.last_action[send]))
            on = gate * torch.from_numpy(send).float()  # ST gate value 1 exactly when sent
            if mode == "icp_rm":
                assert (code[send] == msg[send]).all()
                new_slot = on[:, None, None] * y[:, None, :] * not_sender[None, :, None]
            else:
                decoded = np.zeros((B, N), dtype=np.int64)
                for j in range(N):
                    if j != a:  # j recomputes m_k, k != j, from the hands it sees
                        known = per_receiver.copy()
                        known[:, j] = 0
                        decoded[:, j] = hat_decode(code, known, a, j, M)
                assert (
                    decoded[send][:, not_sender.bool().numpy()]
                    == per_receiver[send][:, not_sender.bool().numpy()]
                ).all()
                onehot = nn.functional.one_hot(torch.from_numpy(decoded), M).float()
                new_slot = on[:, None, None] * onehot * not_sender[None, :, None]
            sent.append(send)
        else:
            sent.append(~regular[actions[:, a]] & live)
        received.append(new_slot.detach().numpy())
        slot = new_slot
    L = len(q_taken)
    return Rollout(
        q_taken=torch.stack(q_taken),
        next_max=torch.stack([*best[1:], torch.zeros(B, N)]),
        reward=torch.stack(rewards),
        obs=np.zeros((L, B, N, 0), dtype=np.float32),  # not kept: no replay on Hanabi
        mask=np.zeros((L, B, N, 0), dtype=bool),
        actions=np.zeros((L, B, N), dtype=np.int64),
        sent=np.stack(sent),
        received=np.stack(received),
        live=torch.stack(lives),
    )


def evaluate_hanabi(team: HanabiTeam, games: int, rng: np.random.Generator) -> dict[str, float]:
    """Greedy play on `games` fresh games: `score` (mean final score under the official rule:
    0 for a game that lost its last life), `score_keep` (the same games under the keep-score
    rule: the fireworks' sum), `bombed` (fraction of games that lost their last life),
    `hint_rate` (fraction of turns spent hinting or sending) and `turns` (mean game length).
    Both scores are recorded whatever `team.spec.scoring` (the rule the team trained under)."""
    env = HanabiBatch(games, team.spec)
    with torch.no_grad():
        ro = hanabi_rollout(team, env, rng)
    live = ro.live.numpy()
    return {
        "score": float(env.score_official().mean()),
        "score_keep": float(env.score_keep().mean()),
        "bombed": float((env.lives == 0).mean()),
        "hint_rate": float((ro.sent * live).sum() / live.sum()),
        "turns": float(live.sum(0).mean()),
    }


def fit_hanabi(
    team: HanabiTeam,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    steps: int,
    start_step: int = 0,
    total_steps: int | None = None,
    eval_points: int = 0,
    log=None,
    game: Game | None = None,
) -> int:
    """Train `team` on-policy in place until it has used `steps` environment steps (turns of
    live games, summed over the batch); returns the steps used (the last batch may overshoot).

    The budget is in environment steps, not games: a team that hints more plays fewer games.
    `start_step`/`total_steps` place a stage inside a longer run (ICP-DM's two stages share
    one ε/τ schedule and one set of `eval_points` checkpoints at k * total_steps / eval_points).
    `log(step, metrics)` receives the greedy evaluations (`settings.eval_games` games), at the
    checkpoint's nominal step. `settings.episodes` and `settings.eval_every` are not used.
    `game` swaps in another environment's batch class, rollout and evaluation (default: Hanabi).
    `settings.target_every > 0`: a target network, a copy of the online one taken at the start
    and every `target_every` updates, gives the bootstrap values.
    """
    game = game or HANABI
    total = total_steps or steps
    env = game.batch(settings.batch, team.spec)
    opt = torch.optim.Adam(team.net.parameters(), lr=settings.lr)
    target = copy.deepcopy(team.net).requires_grad_(False) if settings.target_every else None
    used, updates = start_step, 0
    checkpoints = [total * (k + 1) // eval_points for k in range(eval_points)]
    while used < start_step + steps:
        eps, tau = schedule(settings, used / total)
        ro = game.rollout(
            team,
            env,
            rng,
            eps=eps,
            tau=tau,
            generator=generator,
            noise=settings.gumbel_scale,
            target=target,
        )
        loss = td_loss(ro, settings.gamma)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(team.net.parameters(), settings.grad_clip)
        opt.step()
        updates += 1
        if target is not None and updates % settings.target_every == 0:
            target.load_state_dict(team.net.state_dict())
        before, used = used, used + int(ro.live.sum())
        for c in checkpoints:
            if log is not None and before < c <= used:
                log(c, game.evaluate(team, settings.eval_games, rng))
    return used - start_step


def train_hanabi(
    method: str,
    spec: HanabiSpec,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    steps: int,
    hidden: int = 64,
    num_messages: int = 4,
    stage1_frac: float = 0.5,
    eval_points: int = 0,
    log=None,
    game: Game | None = None,
) -> HanabiTeam:
    """Train one method ("vdn", "icp_rm" or "icp_dm") for `steps` environment steps.

    ICP-DM spends `stage1_frac` of the steps with the explicit channel, then freezes a copy of
    the network as the lookup table, draws φ (delayed) and trains through the hints with hat
    coding for the rest. Build under `core.seeding.torch_seed` for reproducible weights.
    `game` swaps in another environment (default: Hanabi; see `goals_agents.train_goals`).
    """
    game = game or HANABI
    if method not in ("vdn", "icp_rm", "icp_dm"):
        raise ValueError(f"method must be 'vdn', 'icp_rm' or 'icp_dm', got {method!r}")
    check_float("stage1_frac", stage1_frac, 0, 1, low_open=True, high_open=True)
    check_int("steps", steps, 1)
    check_int("eval_points", eval_points, 0)
    net = game.network(spec, method, hidden, num_messages)
    kw = {"total_steps": steps, "eval_points": eval_points, "log": log, "game": game}
    if method == "vdn":
        team = HanabiTeam(spec, "vdn", net)
        fit_hanabi(team, settings, rng, generator, steps=steps, **kw)
        return team
    if method == "icp_rm":
        info_map = InformationMap.random(num_messages, game.channels(spec), rng)
        team = HanabiTeam(spec, "icp_rm", net, info_map)
        fit_hanabi(team, settings, rng, generator, steps=steps, **kw)
        return team
    stage1 = HanabiTeam(spec, "explicit", net)
    used = fit_hanabi(stage1, settings, rng, generator, steps=int(steps * stage1_frac), **kw)
    table = copy.deepcopy(net).requires_grad_(False)
    info_map = InformationMap.random(num_messages, game.channels(spec), rng)
    team = HanabiTeam(spec, "icp_dm", net, info_map, table)
    if used < steps:
        fit_hanabi(team, settings, rng, generator, steps=steps - used, start_step=used, **kw)
    return team


@dataclass(frozen=True)
class Game:
    """What `fit_hanabi`/`train_hanabi` need from an environment: its batch class, a fresh
    network, the rollout, the greedy evaluation and what φ maps messages onto (spec -> ids)."""

    batch: Callable
    network: Callable
    rollout: Callable
    evaluate: Callable
    channels: Callable


HANABI = Game(
    HanabiBatch,
    HanabiTeam.network,
    hanabi_rollout,
    evaluate_hanabi,
    lambda spec: np.arange(spec.num_channels),
)
"""Small Hanabi."""
