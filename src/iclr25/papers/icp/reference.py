"""Slow, obviously-correct versions for equality tests.

- `hat_decode_bruteforce`: try every message for the receiver and keep the one whose hat code
  equals the broadcast one.
- `td_loss_loops`: the VDN TD loss with explicit loops over steps, games and agents.
- The plain single-game `env.GuessingNumbersEnv` is the reference of `env.GuessingNumbersBatch`.
"""

from __future__ import annotations

import numpy as np
import torch


def hat_decode_bruteforce(
    code: int, messages: list[int], sender: int, receiver: int, modulus: int
) -> int:
    """The unique m in 0..K-1 such that Σ_{j≠sender} m_j mod K == code with m_receiver = m."""
    hits = []
    for m in range(modulus):
        trial = list(messages)
        trial[receiver] = m
        if sum(v for j, v in enumerate(trial) if j != sender) % modulus == code:
            hits.append(m)
    assert len(hits) == 1, hits
    return hits[0]


def td_loss_loops(
    q_taken: torch.Tensor, next_max: torch.Tensor, reward: torch.Tensor, gamma: float
) -> float:
    """Mean over steps t and games b of (Σ_i q[t,b,i] - r[t,b] - γ Σ_i next_max[t,b,i])²."""
    q_taken = q_taken.detach()
    L, B, N = q_taken.shape
    total = 0.0
    for t in range(L):
        for b in range(B):
            q_tot = sum(float(q_taken[t, b, i]) for i in range(N))
            nxt = sum(float(next_max[t, b, i]) for i in range(N))
            total += (q_tot - float(reward[t, b]) - gamma * nxt) ** 2
    return total / (L * B)


def play_reference(env, secrets: np.ndarray, joint_actions: list[np.ndarray]) -> list[dict]:
    """Play a PettingZoo-API game with fixed secrets and actions; returns what each step gave."""
    obs, _ = env.reset(options={"secrets": secrets})
    out = [{"obs": obs}]
    for acts in joint_actions:
        obs, rew, term, _trunc, info = env.step(
            {a: int(acts[i]) for i, a in enumerate(env.possible_agents)}
        )
        out.append({"obs": obs, "reward": rew, "term": term, "info": info})
    return out
