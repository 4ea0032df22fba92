"""The Implicit Channel Protocol (Wang, Chen, Zhang, Wang; ICLR 2025; arXiv 2411.01553).

Agents that cannot message each other communicate through *scouting actions* A^s: actions that
every agent observes and that barely change the task state. ICP fixes an injective information
map φ: M -> A^s shared by all agents; sending message m means executing φ(m), receivers decode
with φ⁻¹. The agent network is a recurrent Q-learner (VDN: Q_tot = Σ_i Q_i) with two extra
choices, both straight-through (hard value in the environment, soft relaxation on the gradient
path, as in DIAL):

- the gate: send (execute a scouting action) or act (a regular action from the Q-head);
- the message head: m ∈ M, |M| <= |A^s|, a straight-through Gumbel-Softmax sample.

Two ways to get the map (the paper's two training algorithms):

- ICP-RM (`mode="icp_rm"`): φ is drawn at random once and frozen; DIAL trains the message head
  through the receivers' TD losses while the environment executes φ(hard m).
- ICP-DM (`mode="icp_dm"`): stage 1 trains with an explicit per-receiver channel
  (`mode="explicit"`, DIAL), then a lookup table private-information -> message is read off the
  greedy message head; stage 2 executes the *delayed* map: the sender broadcasts one scouting
  action φ(s) with the hat code s = Σ_{j≠sender} m_j mod K, and receiver j recovers
  m_j = s - Σ_{k≠j,sender} m_k mod K because it sees everybody's secrets but its own and shares
  the table.

Public API: `InformationMap`, `hat_encode`, `hat_decode`, `st_gumbel_softmax`, `AgentNet`,
`ICPAgent`, `rollout`, `td_loss`, `fit` (the training loop), `lookup_table`, `train_icp_rm`,
`train_icp_dm`, `evaluate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_float, check_int
from iclr25.papers.icp.env import GuessingNumbersSpec

MODES = ("vdn", "explicit", "icp_rm", "icp_dm")
"""Agent modes: VDN (no channel, scouting actions in the Q action space), DIAL with an explicit
per-receiver channel, ICP with a random fixed map, ICP with the delayed map and hat coding."""


# ---------------------------------------------------------------- the information map


class InformationMap:
    """An injective map φ from messages {0..M-1} to scouting actions, fixed once built.

    Args:
        actions: φ(m) for m = 0..M-1: distinct environment action indices (scouting actions).

    One object is shared by all agents; its table is read-only, so the map cannot drift during
    training or differ between agents at execution.
    """

    def __init__(self, actions: np.ndarray | list[int]) -> None:
        phi = np.asarray(actions, dtype=np.int64).copy()
        if phi.ndim != 1 or len(phi) == 0:
            raise ValueError(f"actions must be a non-empty 1-d list, got {actions!r}")
        if len(set(phi.tolist())) != len(phi):
            raise ValueError(f"an information map must be injective, got actions {phi.tolist()}")
        phi.setflags(write=False)
        self.phi = phi
        self._inverse = {int(a): m for m, a in enumerate(phi)}

    @classmethod
    def random(
        cls, num_messages: int, scouting_actions: np.ndarray, rng: np.random.Generator
    ) -> InformationMap:
        """ICP-RM's map: num_messages distinct scouting actions in a random order."""
        if num_messages > len(scouting_actions):
            raise ValueError(
                f"num_messages={num_messages} exceeds the {len(scouting_actions)} scouting actions"
            )
        return cls(rng.permutation(np.asarray(scouting_actions))[:num_messages])

    @property
    def num_messages(self) -> int:
        """M, the message alphabet size."""
        return len(self.phi)

    def encode(self, messages: np.ndarray) -> np.ndarray:
        """φ(m): the scouting action of each message."""
        m = np.asarray(messages)
        if m.size and (m.min() < 0 or m.max() >= self.num_messages):
            raise ValueError(f"messages must lie in 0..{self.num_messages - 1}, got {m}")
        return self.phi[m]

    def decode(self, actions: np.ndarray) -> np.ndarray:
        """φ⁻¹(a): the message of each scouting action (a non-scouting action raises)."""
        flat = np.asarray(actions).reshape(-1)
        bad = [int(a) for a in flat if int(a) not in self._inverse]
        if bad:
            raise ValueError(f"actions {bad} are not in the map's image {self.phi.tolist()}")
        return np.array([self._inverse[int(a)] for a in flat], dtype=np.int64).reshape(
            np.shape(actions)
        )


# ---------------------------------------------------------------- hat coding


def hat_encode(messages: np.ndarray, sender: int, modulus: int) -> np.ndarray:
    """The hat code of one broadcast: s = Σ_{j≠sender} m_j mod K.

    Shapes: messages (B, N) ints in 0..K-1 (the sender's own column is ignored) -> (B,).
    """
    m = np.asarray(messages, dtype=np.int64)
    keep = np.ones(m.shape[-1], dtype=bool)
    keep[sender] = False
    return m[..., keep].sum(-1) % modulus


def hat_decode(
    code: np.ndarray, messages: np.ndarray, sender: int, receiver: int, modulus: int
) -> np.ndarray:
    """Receiver's message from the hat code: m_j = s - Σ_{k≠j,sender} m_k mod K.

    `messages` holds the messages the receiver can compute itself; its own column and the
    sender's are ignored (the receiver does not know them).

    Shapes: code (B,), messages (B, N) -> (B,).
    """
    if receiver == sender:
        raise ValueError(f"receiver {receiver} is the sender; the sender receives nothing")
    m = np.asarray(messages, dtype=np.int64)
    keep = np.ones(m.shape[-1], dtype=bool)
    keep[[sender, receiver]] = False
    return (np.asarray(code) - m[..., keep].sum(-1)) % modulus


# ---------------------------------------------------------------- straight-through Gumbel


def st_gumbel_softmax(
    logits: torch.Tensor, tau: float, generator: torch.Generator | None, scale: float = 1.0
) -> torch.Tensor:
    """Straight-through Gumbel-Softmax: the forward value is the hard one-hot of
    argmax(logits + g), the gradient is that of softmax((logits + g) / tau).

    `generator=None` draws no noise (greedy execution); `scale` multiplies the Gumbel noise.
    Uses only `generator`, never torch's global RNG (unlike `nn.functional.gumbel_softmax`).

    Shapes: logits (..., M) -> (..., M).
    """
    check_float("tau", tau, 0, None, low_open=True)
    if generator is not None:
        u = torch.rand(logits.shape, generator=generator, dtype=logits.dtype)
        logits = logits - scale * torch.log(-torch.log(u.clamp(1e-10, 1.0 - 1e-7)))
    soft = torch.softmax(logits / tau, dim=-1)
    hard = nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(soft.dtype)
    return hard + soft - soft.detach()


# ---------------------------------------------------------------- networks


class AgentNet(nn.Module):
    """A GRU Q-network shared by all agents (the agent id is part of the input).

    Heads: Q over all A actions (from the recurrent state); a message head (M logits) that
    reads the sender's current input; the send-or-act gate reads the Q-head (see `rollout`);
    a per-receiver message head (M logits) that reads only the receiver's private information
    as the sender sees it, `(sender, receiver, value)` one-hots, so that every agent but the
    receiver can compute it (needed by hat decoding).

    Args:
        in_dim: D, the input length.
        num_actions: A.
        hidden: H, the GRU width.
        num_messages: M (0: no message heads).
        num_agents: N (for the per-receiver head).
        num_values: K, values of one agent's private information (for the per-receiver head).

    Shapes: forward(x (R, D), h (R, H)) -> q (R, A), h (R, H).
    """

    def __init__(
        self,
        *,
        in_dim: int,
        num_actions: int,
        hidden: int = 64,
        num_messages: int = 0,
        num_agents: int = 0,
        num_values: int = 0,
    ) -> None:
        super().__init__()
        self.hidden = check_int("hidden", hidden, 1)
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.gru = nn.GRUCell(hidden, hidden)
        self.q_head = nn.Sequential(
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, num_actions)
        )
        if num_messages:
            # DEVIATION: the message head is a small MLP on the sender's current input rather
            # than a head on the GRU state (the notes do not say which); on the GRU state
            # ICP-RM learned noticeably slower in our pilots.
            self.msg_head = nn.Sequential(
                nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, num_messages)
            )
            self.receiver_head = nn.Sequential(
                nn.Linear(2 * num_agents + num_values, hidden),
                nn.ReLU(),
                nn.Linear(hidden, num_messages),
            )
        self.num_agents, self.num_values = num_agents, num_values

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.gru(self.encoder(x), h)
        return self.q_head(h), h

    # DEVIATION: per-receiver messages (explicit channel, ICP-DM stage 1) are a function of the
    # receiver's private value only, so that the lookup table is computable by every other agent;
    # the notes say only "a lookup table from local observations to messages".
    def receiver_logits(self, sender: int, values: torch.Tensor) -> torch.Tensor:
        """Logits of the message to each receiver j given x_j.

        `values` are ints (one-hot encoded to `num_values`) or already float features of
        length `num_values` (Hanabi: the receiver's hand as the others see it).

        Shapes: values (B, N) or (B, N, num_values) -> (B, N, M).
        """
        B, N = values.shape[:2]
        if not values.is_floating_point():
            values = nn.functional.one_hot(values, self.num_values).float()
        eye = torch.eye(N)
        inp = torch.cat(
            [
                eye[sender].expand(B, N, N),
                eye.expand(B, N, N),
                values,
            ],
            dim=-1,
        )
        return self.receiver_head(inp)


def lookup_table(net: AgentNet, num_agents: int, num_values: int) -> np.ndarray:
    """ICP-DM's table: table[sender, receiver, value] = greedy message for that receiver.

    Read off the stage-1 per-receiver head by enumerating every value (greedy, so the sender's
    policy is deterministic given what it sees, which hat decoding needs).
    """
    with torch.no_grad():
        vals = torch.arange(num_values).repeat_interleave(num_agents).view(num_values, num_agents)
        table = np.zeros((num_agents, num_agents, num_values), dtype=np.int64)
        for s in range(num_agents):
            logits = net.receiver_logits(s, vals)  # (K, N, M): row v has x_j = v for every j
            table[s] = logits.argmax(-1).T.numpy()
    return table


class ICPAgent:
    """All agents of one team: a shared `AgentNet`, a mode, and (ICP modes) the fixed map.

    Args:
        spec: The game sizes.
        mode: One of `MODES`.
        net: The shared network (from `ICPAgent.network` or a previous stage).
        info_map: φ, required by "icp_rm" and "icp_dm"; read-only afterwards.
        table: ICP-DM's lookup table (N, N, K), required by "icp_dm".
    """

    def __init__(
        self,
        spec: GuessingNumbersSpec,
        mode: str,
        net: AgentNet,
        info_map: InformationMap | None = None,
        table: np.ndarray | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if mode in ("icp_rm", "icp_dm") and info_map is None:
            raise ValueError(f"mode {mode!r} needs an info_map")
        if mode == "icp_dm":
            shape = (spec.num_agents, spec.num_agents, spec.num_values)
            if table is None or np.shape(table) != shape:
                raise ValueError(
                    f"mode 'icp_dm' needs a lookup table of shape {shape}, got {table!r}"
                )
            table = np.array(table, dtype=np.int64)
            table.setflags(write=False)
        self.spec, self.mode, self.net = spec, mode, net
        self._info_map, self._table = info_map, table

    @property
    def info_map(self) -> InformationMap | None:
        """φ, fixed for the agent's lifetime and shared by every agent of the team."""
        return self._info_map

    @property
    def table(self) -> np.ndarray | None:
        """ICP-DM's read-only lookup table."""
        return self._table

    @property
    def num_messages(self) -> int:
        """M (0 for VDN)."""
        return 0 if self.mode == "vdn" else self.net.msg_head[-1].out_features

    @staticmethod
    def network(
        spec: GuessingNumbersSpec, mode: str, hidden: int = 64, num_messages: int | None = None
    ) -> AgentNet:
        """A fresh network for `mode` (build it under `core.seeding.torch_seed`)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        M = spec.num_values if num_messages is None else num_messages
        if mode in ("explicit", "icp_dm") and spec.num_values != M:
            raise ValueError(
                f"num_messages must equal num_values={spec.num_values} for mode {mode!r} "
                f"(hat coding works mod K), got {M}"
            )
        if mode != "vdn" and not 2 <= M <= spec.num_signals:
            raise ValueError(
                f"num_messages must lie in 2..num_signals={spec.num_signals} (φ is injective), "
                f"got {M}"
            )
        in_dim = spec.obs_dim if mode == "vdn" else spec.base_dim + spec.signal_turns * M
        return AgentNet(
            in_dim=in_dim,
            num_actions=spec.num_actions,
            hidden=hidden,
            num_messages=0 if mode == "vdn" else M,
            num_agents=spec.num_agents,
            num_values=spec.num_values,
        )


# ---------------------------------------------------------------- episodes


@dataclass
class Rollout:
    """One batch of episodes (L = T + 1 steps, B games, N agents).

    Attributes:
        q_taken: Q_i(o_i, a_i), (L, B, N), on the gradient path (DIAL: through the messages).
        next_max: max over legal a' of Q_i at the next step, (L, B, N), detached; 0 at the end.
        reward: (L, B).
        obs, mask, actions: the environment's observations (L, B, N, D), masks (L, B, N, A) and
            the joint actions (L, B, N), for a replay buffer.
        sent: (T, B) whether the active agent sent a message (ICP modes; scouting otherwise).
        received: (T, B, N, M) the message each receiver decoded on each signalling turn
            (forward values, detached; zeros for the sender, for VDN and when nothing was sent).
        live: (L, B) 1 where the game was still running before the step (games of different
            lengths, Hanabi); None: every step counts.
    """

    q_taken: torch.Tensor
    next_max: torch.Tensor
    reward: torch.Tensor
    obs: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    sent: np.ndarray
    received: np.ndarray
    live: torch.Tensor | None = None


def _choose(q: torch.Tensor, mask: np.ndarray, eps: float, rng: np.random.Generator) -> np.ndarray:
    """ε-greedy over legal actions. Shapes: q (..., A), mask (..., A) -> (...)."""
    greedy = q.detach().masked_fill(~torch.from_numpy(mask), float("-inf")).argmax(-1).numpy()
    if eps <= 0:
        return greedy
    u = rng.random(mask.shape) * mask  # a uniform legal action: argmax of random keys on legal
    rand = np.where(mask, u + 1.0, 0.0).argmax(-1)
    explore = rng.random(greedy.shape) < eps
    return np.where(explore, rand, greedy)


def _st_choice(logits: torch.Tensor, tau: float, choice: np.ndarray) -> torch.Tensor:
    """One-hot of `choice` in value, gradient of softmax(logits / tau). Shapes: (B, C) -> (B, C)."""
    soft = torch.softmax(logits / tau, dim=-1)
    hard = nn.functional.one_hot(torch.from_numpy(choice), logits.shape[-1]).to(soft.dtype)
    return hard + soft - soft.detach()


def td_loss(ro: Rollout, gamma: float) -> torch.Tensor:
    """VDN TD loss: (Σ_i Q_i(o_i, a_i) - r - γ Σ_i max_a' Q_i(o'_i, a'))² averaged over steps."""
    # DEVIATION: Guessing Numbers bootstraps from the online network (detached), with no target
    # network: its episodes are 3 steps long; the paper's hyperparameters were not available.
    # Small Hanabi and Revealing Goals have one as an option (`TrainSettings.target_every`).
    if ro.live is None:
        target = ro.reward + gamma * ro.next_max.sum(-1)
        return ((ro.q_taken.sum(-1) - target) ** 2).mean()
    # games of different lengths: no bootstrap past a game's end, finished steps do not count
    live_next = torch.cat([ro.live[1:], torch.zeros_like(ro.live[:1])])
    target = ro.reward + gamma * ro.next_max.sum(-1) * live_next
    err = (ro.q_taken.sum(-1) - target) ** 2 * ro.live
    return err.sum() / ro.live.sum().clamp(min=1.0)


def bootstrap_max(
    q: torch.Tensor,
    x: torch.Tensor,
    mask: np.ndarray,
    target: AgentNet | None,
    h_target: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """max over legal a' of the bootstrap Q at this step, (B, N), detached, and the target
    network's next hidden state.

    `target=None`: the online values `q` (B, N, A), detached. Otherwise the target network's
    values on the same inputs `x` (B, N, D), run on its own GRU state `h_target` (B N, hidden).
    """
    if target is not None:
        B, N, A = q.shape
        with torch.no_grad():
            qt, h_target = target(x.detach().reshape(B * N, -1), h_target)
        q = qt.view(B, N, A)
    best = q.detach().masked_fill(~torch.from_numpy(mask), float("-inf")).amax(-1)
    return best, h_target


def schedule(settings: TrainSettings, frac: float) -> tuple[float, float]:
    """(ε, Gumbel τ) after `frac` of the run: ε anneals linearly over `eps_frac` of the run,
    τ over the whole run."""
    eps = settings.eps_end + (settings.eps_start - settings.eps_end) * max(
        0.0, 1.0 - frac / settings.eps_frac
    )
    tau = settings.tau_start + (settings.tau_end - settings.tau_start) * min(1.0, frac)
    return eps, tau


def rollout(
    agent: ICPAgent,
    env,
    rng: np.random.Generator,
    *,
    eps: float = 0.0,
    tau: float = 1.0,
    generator: torch.Generator | None = None,
    noise: float = 1.0,
) -> Rollout:
    """Play one batch of episodes with the team, keeping the autograd graph.

    `eps` is the ε of ε-greedy regular actions; `generator=None` makes the gate and messages
    greedy (execution); with a generator they are Gumbel samples at temperature `tau`, the
    Gumbel noise multiplied by `noise`.
    In ICP modes the environment executes the hard scouting action φ(m) while each receiver's
    input holds the straight-through message (equal in value, soft in gradient), so the
    receivers' TD errors train the sender's message head and gate (DIAL).
    """
    sp, net, mode = agent.spec, agent.net, agent.mode
    B, N, T, K, A = env.num_envs, sp.num_agents, sp.signal_turns, sp.num_values, sp.num_actions
    if env.spec != sp:
        raise ValueError(f"the environment's spec {env.spec} differs from the agent's {sp}")
    M = agent.num_messages
    obs, mask = env.reset(rng)
    h = torch.zeros(B * N, net.hidden)
    slots = [torch.zeros(B, N, M) for _ in range(T)]
    not_sender = [torch.ones(N) for _ in range(T)]
    q_taken, best, rewards, all_obs, all_mask, all_act = [], [], [], [], [], []
    sent = np.zeros((T, B), dtype=bool)
    regular = np.ones(A, dtype=bool)
    regular[sp.scouting_actions] = False
    for t in range(sp.episode_len):
        x = torch.from_numpy(obs)
        if mode != "vdn":  # broadcast history replaced by the decoded messages
            x = torch.cat([x[..., : sp.base_dim], *slots], dim=-1)
        q, h = net(x.reshape(B * N, -1), h)
        q = q.view(B, N, A)
        actions = _choose(q, mask, eps, rng)
        if t < T:
            a = sp.active(t)
            not_sender[t][a] = 0.0
            if mode == "explicit":  # DIAL: a free per-receiver channel beside the action
                y = st_gumbel_softmax(
                    net.receiver_logits(a, torch.from_numpy(env.secrets)), tau, generator, noise
                )
                slots[t] = y * not_sender[t][None, :, None]
            elif mode in ("icp_rm", "icp_dm"):
                # DEVIATION: the send-or-act gate is a straight-through softmax over two logits
                # read from the Q-head (best legal regular action, best scouting action), with an
                # ε-greedy hard choice; the notes say only "binary gate, Gumbel-Softmax". Tying it
                # to Q lets TD learning decide when sending pays; DIAL still trains it (ST path).
                legal_q = q[:, a].masked_fill(~torch.from_numpy(mask[:, a]), float("-inf"))
                logits = torch.stack(
                    [
                        legal_q[:, torch.from_numpy(regular)].amax(-1),
                        legal_q[:, ~torch.from_numpy(regular)].amax(-1),
                    ],
                    dim=-1,
                )
                gate = _st_choice(logits, tau, _choose(logits, np.ones((B, 2), bool), eps, rng))[
                    :, 1
                ]
                act = _choose(q[:, a], mask[:, a] & regular, eps, rng)
                if mode == "icp_rm":
                    y = st_gumbel_softmax(net.msg_head(x[:, a]), tau, generator, noise)
                    msg = y.argmax(-1).numpy()
                else:  # the delayed map: hat code of the table's per-receiver messages
                    per_receiver = agent.table[a][np.arange(N), env.secrets]  # (B, N)
                    msg = hat_encode(per_receiver, a, K)
                send = gate.detach().numpy() > 0.5  # passing is always legal, so "act" is too
                actions[:, a] = np.where(send, agent.info_map.encode(msg), act)
        q_taken.append(q.gather(-1, torch.from_numpy(actions)[..., None])[..., 0])
        best.append(q.detach().masked_fill(~torch.from_numpy(mask), float("-inf")).amax(-1))
        all_obs.append(obs)
        all_mask.append(mask)
        all_act.append(actions)
        obs, mask, reward, _ = env.step(actions)
        rewards.append(torch.from_numpy(reward))
        if t < T and mode in ("icp_rm", "icp_dm"):
            # Receivers decode what the environment broadcast: φ⁻¹ of the observed action.
            observed = env.signals[:, t] + K
            sent[t] = env.signals[:, t] >= 0
            code = np.zeros(B, dtype=np.int64)
            code[sent[t]] = agent.info_map.decode(observed[sent[t]])
            on = gate * torch.from_numpy(sent[t]).float()  # ST gate value 1 exactly when sent
            if mode == "icp_rm":
                # the decoded message equals the sender's hard sample: use the ST sample itself
                assert (code[sent[t]] == msg[sent[t]]).all()
                slots[t] = on[:, None, None] * y[:, None, :] * not_sender[t][None, :, None]
            else:
                decoded = np.zeros((B, N), dtype=np.int64)
                for j in range(N):
                    if j != a:  # receiver j computes m_k for k != j from the secrets it sees
                        known = agent.table[a][np.arange(N), env.secrets]
                        known[:, j] = 0  # not its own: j does not see x_j
                        decoded[:, j] = hat_decode(code, known, a, j, K)
                onehot = nn.functional.one_hot(torch.from_numpy(decoded), M).float()
                slots[t] = on[:, None, None] * onehot * not_sender[t][None, :, None]
        elif t < T:
            sent[t] = env.signals[:, t] >= 0
    next_max = torch.stack([*best[1:], torch.zeros(B, N)])
    return Rollout(
        q_taken=torch.stack(q_taken),
        next_max=next_max,
        reward=torch.stack(rewards),
        obs=np.stack(all_obs),
        mask=np.stack(all_mask),
        actions=np.stack(all_act),
        sent=sent,
        received=torch.stack(slots).detach().numpy(),
    )


def evaluate(agent: ICPAgent, games: int, rng: np.random.Generator) -> dict[str, float]:
    """Greedy play (no exploration, no Gumbel noise) on `games` fresh games.

    Returns `success` (mean fraction of agents that guess their secret), `all_correct`
    (fraction of games where every agent is right), `reward` (the team return) and
    `send_rate` (scouting actions per signalling turn).
    """
    from iclr25.papers.icp.env import GuessingNumbersBatch

    env = GuessingNumbersBatch(games, agent.spec)
    with torch.no_grad():
        ro = rollout(agent, env, rng)
    success = env.success()
    return {
        "success": float(success.mean()),
        "all_correct": float((success == 1.0).mean()),
        "reward": float(ro.reward[-1].mean()),
        "send_rate": float(ro.sent.mean()),
    }


# ---------------------------------------------------------------- training


@dataclass(frozen=True)
class TrainSettings:
    """Training hyperparameters shared by every method (our defaults; the paper's are unknown).

    Attributes:
        episodes: Environment episodes of the whole run (the equal-steps budget).
        batch: Games per update.
        lr: Adam step size.
        gamma: Discount.
        eps_start, eps_end, eps_frac: ε-greedy, annealed linearly over `eps_frac` of the run.
        tau_start, tau_end: Gumbel-Softmax temperature, annealed linearly over the run.
        gumbel_scale: Multiplies the Gumbel noise of the message samples during training.
        grad_clip: Gradient-norm clip.
        eval_every: Updates between greedy evaluations (0: only at the end).
        eval_games: Games per evaluation.
        target_every: Small Hanabi and Revealing Goals (`hanabi_agents.fit_hanabi`): updates
            between copies of the online network into a target network that gives the
            bootstrap values max_a' Q(o', a'); 0: no target network (the online network's
            values, detached). Guessing Numbers' `fit` does not use it.
    """

    episodes: int = 30000
    batch: int = 32
    lr: float = 3e-3
    gamma: float = 0.99
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_frac: float = 0.5
    tau_start: float = 1.0
    tau_end: float = 0.5
    gumbel_scale: float = 1.0
    grad_clip: float = 10.0
    eval_every: int = 0
    eval_games: int = 1000
    target_every: int = 0

    def __post_init__(self) -> None:
        check_int("batch", self.batch, 1)
        check_int("episodes", self.episodes, 1)
        if self.episodes < self.batch:
            raise ValueError(f"episodes ({self.episodes}) must be >= batch ({self.batch}) >= 1")
        check_float("lr", self.lr, 0, None, low_open=True)
        check_float("gamma", self.gamma, 0, 1)
        check_float("eps_start", self.eps_start, 0, 1)
        check_float("eps_end", self.eps_end, 0, 1)
        check_float("eps_frac", self.eps_frac, 0, 1, low_open=True)
        check_float("tau_start", self.tau_start, 0, None, low_open=True)
        check_float("tau_end", self.tau_end, 0, None, low_open=True)
        check_float("gumbel_scale", self.gumbel_scale, 0, None)
        check_float("grad_clip", self.grad_clip, 0, None, low_open=True)
        check_int("eval_every", self.eval_every, 0)
        check_int("eval_games", self.eval_games, 1)
        check_int("target_every", self.target_every, 0)


def fit(
    agent: ICPAgent,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    episodes: int | None = None,
    replay: int = 0,
    start_episode: int = 0,
    total_episodes: int | None = None,
    log=None,
) -> int:
    """Train `agent` in place for `episodes` (default settings.episodes); returns episodes used.

    `replay > 0` trains off-policy from a buffer of that many episodes (VDN-off-policy: one
    minibatch of `batch` stored episodes per collected batch); otherwise every update uses the
    batch just played, with gradients through the messages (DIAL; VDN-on-policy).
    `start_episode`/`total_episodes` place a stage inside a longer run (ICP-DM's two stages
    share one ε and τ schedule). `log(episode, metrics)` receives the greedy evaluations.
    """
    from iclr25.papers.icp.env import GuessingNumbersBatch

    episodes = settings.episodes if episodes is None else episodes
    total = total_episodes or settings.episodes
    env = GuessingNumbersBatch(settings.batch, agent.spec)
    opt = torch.optim.Adam(agent.net.parameters(), lr=settings.lr)
    buffer: dict[str, np.ndarray] = {}
    filled, updates = 0, episodes // settings.batch
    for it in range(updates):
        done = start_episode + it * settings.batch
        eps, tau = schedule(settings, done / total)
        if replay:
            with torch.no_grad():
                ro = rollout(
                    agent,
                    env,
                    rng,
                    eps=eps,
                    tau=tau,
                    generator=generator,
                    noise=settings.gumbel_scale,
                )
            filled = _store(buffer, ro, filled, replay)
            idx = rng.integers(0, min(filled, replay), size=settings.batch)
            ro = replay_rollout(
                agent, *(buffer[k][:, idx] for k in ("obs", "mask", "actions", "reward"))
            )
        else:
            ro = rollout(
                agent, env, rng, eps=eps, tau=tau, generator=generator, noise=settings.gumbel_scale
            )
        loss = td_loss(ro, settings.gamma)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.net.parameters(), settings.grad_clip)
        opt.step()
        if log is not None and settings.eval_every and (it + 1) % settings.eval_every == 0:
            log(done + settings.batch, evaluate(agent, settings.eval_games, rng))
    return updates * settings.batch


def _store(buffer: dict[str, np.ndarray], ro: Rollout, filled: int, capacity: int) -> int:
    """Write a batch of episodes into the ring buffer (episode axis 1)."""
    items = {"obs": ro.obs, "mask": ro.mask, "actions": ro.actions, "reward": ro.reward.numpy()}
    B = ro.actions.shape[1]
    if not buffer:
        for k, v in items.items():
            buffer[k] = np.zeros((v.shape[0], capacity, *v.shape[2:]), dtype=v.dtype)
    pos = (filled + np.arange(B)) % capacity
    for k, v in items.items():
        buffer[k][:, pos] = v
    return filled + B


def replay_rollout(
    agent: ICPAgent, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray, reward: np.ndarray
) -> Rollout:
    """Recompute Q along stored VDN episodes (off-policy): the same quantities as `rollout`.

    Shapes: obs (L, B, N, D), mask (L, B, N, A), actions (L, B, N), reward (L, B).
    """
    if agent.mode != "vdn":
        raise ValueError(f"replay needs a channel-free agent (mode 'vdn'), got {agent.mode!r}")
    L, B, N, _ = obs.shape
    h = torch.zeros(B * N, agent.net.hidden)
    q_taken, best = [], []
    for t in range(L):
        q, h = agent.net(torch.from_numpy(obs[t]).reshape(B * N, -1), h)
        q = q.view(B, N, -1)
        q_taken.append(q.gather(-1, torch.from_numpy(actions[t])[..., None])[..., 0])
        best.append(q.detach().masked_fill(~torch.from_numpy(mask[t]), float("-inf")).amax(-1))
    return Rollout(
        q_taken=torch.stack(q_taken),
        next_max=torch.stack([*best[1:], torch.zeros(B, N)]),
        reward=torch.from_numpy(reward),
        obs=obs,
        mask=mask,
        actions=actions,
        sent=np.zeros((0, B), dtype=bool),
        received=np.zeros((0, B, N, 0)),
    )


def train_icp_rm(
    spec: GuessingNumbersSpec,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    hidden: int = 64,
    num_messages: int | None = None,
    log=None,
) -> ICPAgent:
    """ICP-RM: draw φ at random once, freeze it, and train with DIAL through φ.

    Build under `core.seeding.torch_seed` for reproducible initial weights.
    """
    net = ICPAgent.network(spec, "icp_rm", hidden, num_messages)
    info_map = InformationMap.random(net.msg_head[-1].out_features, spec.scouting_actions, rng)
    agent = ICPAgent(spec, "icp_rm", net, info_map)
    fit(agent, settings, rng, generator, log=log)
    return agent


def train_icp_dm(
    spec: GuessingNumbersSpec,
    settings: TrainSettings,
    rng: np.random.Generator,
    generator: torch.Generator,
    *,
    hidden: int = 64,
    stage1_frac: float = 0.5,
    log=None,
) -> ICPAgent:
    """ICP-DM: stage 1 with an explicit per-receiver channel (DIAL), then the lookup table and
    a map fixed only now (delayed), and stage 2 through the scouting actions with hat coding.

    The two stages together use `settings.episodes` (equal steps with the other methods).
    """
    check_float("stage1_frac", stage1_frac, 0, 1, low_open=True, high_open=True)
    net = ICPAgent.network(spec, "icp_dm", hidden)
    stage1 = ICPAgent(spec, "explicit", net)
    n1 = int(settings.episodes * stage1_frac) // settings.batch * settings.batch
    used = fit(stage1, settings, rng, generator, episodes=max(n1, settings.batch), log=log)
    table = lookup_table(net, spec.num_agents, spec.num_values)
    info_map = InformationMap.random(spec.num_values, spec.scouting_actions, rng)
    agent = ICPAgent(spec, "icp_dm", net, info_map, table)
    fit(
        agent,
        settings,
        rng,
        generator,
        episodes=settings.episodes - used,
        start_episode=used,
        log=log,  # fit counts episodes from start_episode
    )
    return agent
