"""A partially observed gridworld whose layout can change (Gymnasium environment).

The agent sees only the colour of its cell: the free cells carry `n_colours` colours at random
(aliased), the goal a unique colour `n_colours`. Actions: 0 up, 1 right, 2 down, 3 left. Each
step costs `step_reward`; moving into a wall or the border leaves the agent in place and costs
`collision_reward` more; reaching the goal gives `goal_reward` and ends the episode; episodes
are truncated after `max_steps`. A collision is observed (`collision_hint`, the official
environment's rule, the default): the observation of that step is `border_obs` or `wall_obs`
instead of the cell's colour.

Layouts, the official code's `free` and `blocked` setups (5 x 5 by default; start at the bottom
left, goal one row below the top in the left column):

- "free": no walls; the shortest path goes straight up (size - 2 steps).
- "blocked": a wall fills row 2 from the left edge to the middle column, so the agent must go
  round it on the right (`set_layout` switches it mid-run: the non-stationarity of the paper's
  gridworld).

Needs the `rl` extra (gymnasium).
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from iclr25.core.checks import check_choice, check_float, check_int

MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])
LAYOUTS = ("free", "blocked")


class GridWorldPOMDP(gym.Env):
    """Gymnasium environment: `reset(seed=...)` -> (colour, info); `step(a)` -> (colour,
    reward, terminated, truncated, info). `info` holds the position (not part of the
    observation). Observations: the colours 0 .. n_colours - 1, the goal `n_colours`, and with
    the collision hint `border_obs` (n_colours + 1) and `wall_obs` (n_colours + 2)."""

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(
        self,
        size: int = 5,
        n_colours: int = 4,
        layout: str = "free",
        max_steps: int = 50,
        step_reward: float = -0.02,
        collision_reward: float = -0.1,
        goal_reward: float = 1.0,
        colour_seed: int = 0,
        collision_hint: bool = True,
    ) -> None:
        # The layouts and the collision hint are the official environment's (him-agent:
        # hima/envs/gridworld.py; successor_representations configs: environment/gridworld/
        # pomdp.yaml has `collision_hint: true`, setups/free.yaml and blocked.yaml the rooms);
        # `collision_hint=False` is our earlier variant, where a collision shows the cell's
        # colour again.
        size = check_int("size", size, 4)
        n_colours = check_int("n_colours", n_colours, 1)
        self.size = size
        self.n_colours = n_colours
        self.max_steps = check_int("max_steps", max_steps, 1)
        self.step_reward = check_float("step_reward", step_reward)
        self.collision_reward = check_float("collision_reward", collision_reward)
        self.goal_reward = check_float("goal_reward", goal_reward)
        self.start = (size - 1, 0)
        self.goal = (1, 0)
        rng = np.random.default_rng(check_int("colour_seed", colour_seed, 0))
        self.colours = rng.integers(n_colours, size=(size, size))
        self.colours[self.goal] = n_colours
        self.collision_hint = bool(collision_hint)
        self.border_obs, self.wall_obs = n_colours + 1, n_colours + 2
        self.observation_space = spaces.Discrete(n_colours + (3 if self.collision_hint else 1))
        self.action_space = spaces.Discrete(4)
        self.set_layout(layout)
        self._pos = self.start
        self._t = 0

    def set_layout(self, layout: str) -> None:
        """Switch between "free" and "blocked" (takes effect from the next step)."""
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.walls = np.zeros((self.size, self.size), bool)
        if layout == "blocked":
            self.walls[2, : self.size // 2 + 1] = True

    def shortest_path(self) -> int:
        """Steps of the shortest path from start to goal in the current layout (BFS)."""
        dist = {self.start: 0}
        frontier = [self.start]
        while frontier:
            nxt = []
            for p in frontier:
                for m in MOVES:
                    q = (p[0] + m[0], p[1] + m[1])
                    if (
                        0 <= q[0] < self.size
                        and 0 <= q[1] < self.size
                        and not self.walls[q]
                        and q not in dist
                    ):
                        dist[q] = dist[p] + 1
                        nxt.append(q)
            frontier = nxt
        return dist[self.goal]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._pos = self.start
        self._t = 0
        return int(self.colours[self._pos]), {"position": self._pos}

    def step(self, action):
        action = check_int("action", action, 0, len(MOVES) - 1)
        self._t += 1
        q = (self._pos[0] + MOVES[action][0], self._pos[1] + MOVES[action][1])
        reward = self.step_reward
        inside = 0 <= q[0] < self.size and 0 <= q[1] < self.size
        obs = None
        if inside and not self.walls[q]:
            self._pos = q
        else:
            reward += self.collision_reward
            if self.collision_hint:
                obs = self.wall_obs if inside else self.border_obs
        terminated = self._pos == self.goal
        if terminated:
            reward += self.goal_reward
        truncated = not terminated and self._t >= self.max_steps
        obs = int(self.colours[self._pos]) if obs is None else obs
        return obs, reward, terminated, truncated, {"position": self._pos}
