"""VDN, ICP-RM and ICP-DM on Revealing Goals (simultaneous moves), reusing the Hanabi trainer.

Every agent acts on every step, so every agent may send: the scouting actions are "stay and
broadcast s". The network input is the observation plus one message slot per sender (the
message each other agent sent this agent on the previous step). ICP-RM: each agent's gate
(straight-through on two logits read from its Q-head) and message head, the environment executes
φ(m). ICP-DM: stage 1 with a free explicit channel whose per-receiver head reads only what the
sender sees of the receiver (its goal and position) and the step; then the frozen stage-1
network is the lookup table and each sender broadcasts the hat code of its per-receiver
messages through the delayed map (with two agents the code is the message itself).

Public API: `goals_network`, `goals_rollout`, `evaluate_goals`, `train_goals`, `GOALS`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from iclr25.papers.icp.env import RevealingGoalsBatch, RevealingGoalsSpec
from iclr25.papers.icp.hanabi_agents import HANABI_MODES, Game, HanabiTeam, train_hanabi
from iclr25.papers.icp.method import (
    AgentNet,
    Rollout,
    TrainSettings,
    _choose,
    _st_choice,
    bootstrap_max,
    hat_decode,
    hat_encode,
    st_gumbel_softmax,
)


def goal_features(env: RevealingGoalsBatch) -> np.ndarray:
    """What every other agent sees of agent j: its goal and position one-hots and the step,
    (B, N, 2 G² + H + 1) float32."""
    sp, B, N, G = env.spec, env.num_envs, env.spec.num_agents, env.spec.grid
    eye = np.eye(G * G, dtype=np.float32)
    goal = eye[env.goals[..., 0] * G + env.goals[..., 1]]
    pos = eye[env.positions[..., 0] * G + env.positions[..., 1]]
    step = np.broadcast_to(np.eye(sp.horizon + 1, dtype=np.float32)[env.t], (B, N, sp.horizon + 1))
    return np.concatenate([goal, pos, step], axis=-1)


def goals_network(
    spec: RevealingGoalsSpec, mode: str, hidden: int = 64, num_messages: int = 4
) -> AgentNet:
    """A fresh network for Revealing Goals (build it under `core.seeding.torch_seed`)."""
    if mode not in HANABI_MODES:
        raise ValueError(f"mode must be one of {HANABI_MODES}, got {mode!r}")
    if mode != "vdn" and not 2 <= num_messages <= spec.num_signals:
        raise ValueError(
            f"num_messages must lie in 2..{spec.num_signals} (the scouting actions; φ is "
            f"injective), got {num_messages}"
        )
    M = 0 if mode == "vdn" else num_messages
    N = spec.num_agents
    return AgentNet(
        in_dim=spec.obs_dim + N * M,
        num_actions=spec.num_actions,
        hidden=hidden,
        num_messages=M,
        num_agents=N,
        num_values=2 * spec.grid**2 + spec.horizon + 1,
    )


def goals_rollout(
    team: HanabiTeam,
    env: RevealingGoalsBatch,
    rng: np.random.Generator,
    *,
    eps: float = 0.0,
    tau: float = 1.0,
    generator: torch.Generator | None = None,
    noise: float = 1.0,
    target: AgentNet | None = None,
) -> Rollout:
    """Play B games (H steps), keeping the autograd graph; `sent` is (H, B, N). `target`: the
    network whose values bootstrap (None: the online network's)."""
    sp, net, mode = team.spec, team.net, team.mode
    if env.spec != sp:
        raise ValueError(f"the environment's spec {env.spec} differs from the team's {sp}")
    B, N, A, M = env.num_envs, sp.num_agents, sp.num_actions, team.num_messages
    obs, mask = env.reset(rng)
    h = torch.zeros(B * N, net.hidden)
    h_target = torch.zeros(B * N, net.hidden)
    slot = torch.zeros(B, N, N * M)
    regular = np.ones(A, dtype=bool)
    regular[sp.scouting_actions] = False
    reg_t = torch.from_numpy(regular)
    q_taken, best, rewards, sent = [], [], [], []
    for _ in range(sp.horizon):
        x = torch.from_numpy(obs)
        if mode != "vdn":
            x = torch.cat([x, slot], dim=-1)
        q, h = net(x.reshape(B * N, -1), h)
        q = q.view(B, N, A)
        actions = _choose(q, mask, eps, rng)
        new = [[torch.zeros(B, M) for _ in range(N)] for _ in range(N)]  # new[receiver][sender]
        send = np.zeros((B, N), dtype=bool)
        gates, samples, per_receiver = [], [], []
        if mode in ("explicit", "icp_dm"):
            feats = goal_features(env)
        for k in range(N):
            if mode == "explicit":
                y = st_gumbel_softmax(
                    net.receiver_logits(k, torch.from_numpy(feats)), tau, generator, noise
                )
                for j in range(N):
                    if j != k:
                        new[j][k] = y[:, j]
            elif mode in ("icp_rm", "icp_dm"):
                logits = torch.stack([q[:, k, reg_t].amax(-1), q[:, k, ~reg_t].amax(-1)], -1)
                gate = _st_choice(logits, tau, _choose(logits, np.ones((B, 2), bool), eps, rng))
                act = _choose(q[:, k], mask[:, k] & regular, eps, rng)
                if mode == "icp_rm":
                    y = st_gumbel_softmax(net.msg_head(x[:, k]), tau, generator, noise)
                    msg = y.argmax(-1).numpy()
                    samples.append(y)
                else:
                    per = team.table_messages(k, feats)
                    per_receiver.append(per)
                    msg = hat_encode(per, k, M)
                send[:, k] = gate[:, 1].detach().numpy() > 0.5
                gates.append(gate[:, 1])
                actions[:, k] = np.where(send[:, k], team.info_map.encode(msg), act)
        q_taken.append(q.gather(-1, torch.from_numpy(actions)[..., None])[..., 0])
        top, h_target = bootstrap_max(q, x, mask, target, h_target)
        best.append(top)
        obs, mask, reward, _ = env.step(actions)
        rewards.append(torch.from_numpy(reward))
        if mode in ("icp_rm", "icp_dm"):
            for k in range(N):
                s = send[:, k]
                code = np.zeros(B, dtype=np.int64)
                code[s] = team.info_map.decode(env.signals[s, k] + sp.scouting_actions[0])
                on = gates[k] * torch.from_numpy(s).float()  # ST gate value 1 when sent
                for j in range(N):
                    if j == k:
                        continue
                    if mode == "icp_rm":
                        new[j][k] = on[:, None] * samples[k]
                    else:  # j recomputes m_{k->l}, l != j, from what it sees; decodes its own
                        known = per_receiver[k].copy()
                        known[:, j] = 0
                        decoded = hat_decode(code, known, k, j, M)
                        assert (decoded[s] == per_receiver[k][s, j]).all()
                        onehot = nn.functional.one_hot(torch.from_numpy(decoded), M).float()
                        new[j][k] = on[:, None] * onehot
        sent.append(send if mode != "vdn" else ~regular[actions])
        slot = torch.stack([torch.cat(new[j], dim=-1) for j in range(N)], dim=1)
    L = len(q_taken)
    return Rollout(
        q_taken=torch.stack(q_taken),
        next_max=torch.stack([*best[1:], torch.zeros(B, N)]),
        reward=torch.stack(rewards),
        obs=np.zeros((L, B, N, 0), dtype=np.float32),
        mask=np.zeros((L, B, N, 0), dtype=bool),
        actions=np.zeros((L, B, N), dtype=np.int64),
        sent=np.stack(sent),
        received=slot.detach().numpy(),
        live=torch.ones(L, B),
    )


def evaluate_goals(team: HanabiTeam, games: int, rng: np.random.Generator) -> dict[str, float]:
    """Greedy play on `games` fresh games: `success` (fraction of agents on their goal at the
    end), `all_on_goal` (fraction of games where every agent is) and `send_rate` (fraction
    of agent-steps spent on scouting actions)."""
    env = RevealingGoalsBatch(games, team.spec)
    with torch.no_grad():
        ro = goals_rollout(team, env, rng)
    on = (env.positions == env.goals).all(-1)
    return {
        "success": float(on.mean()),
        "all_on_goal": float(on.all(-1).mean()),
        "send_rate": float(ro.sent.mean()),
    }


GOALS = Game(
    RevealingGoalsBatch,
    goals_network,
    goals_rollout,
    evaluate_goals,
    lambda spec: spec.scouting_actions,
)
"""Revealing Goals, for `hanabi_agents.fit_hanabi` / `train_hanabi`."""


def train_goals(
    method: str,
    spec: RevealingGoalsSpec,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    steps: int,
    **kwargs,
) -> HanabiTeam:
    """`train_hanabi` on Revealing Goals (same arguments; steps are agent-team steps, H per
    game)."""
    return train_hanabi(method, spec, settings, rng, generator, steps=steps, game=GOALS, **kwargs)
