"""A partially observed gridworld whose layout can change (Gymnasium environment).

The agent sees only the colour of its cell: the free cells carry `n_colours` colours at random
(aliased), the goal a unique colour `n_colours`. Actions: 0 up, 1 right, 2 down, 3 left. Each
step costs `step_reward`; moving into a wall or the border leaves the agent in place and costs
`collision_reward` more; reaching the goal gives `goal_reward` and ends the episode; episodes
are truncated after `max_steps`.

Layouts (5 x 5 by default; start at the top middle, goal at the bottom middle):

- "free": no walls; the shortest path goes straight down (size - 1 steps).
- "blocked": a wall fills the middle row except its first cell, so the agent must detour
  (`set_layout` switches it mid-run: the non-stationarity of the paper's gridworld).

Needs the `rl` extra (gymnasium).
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])
LAYOUTS = ("free", "blocked")


class GridWorldPOMDP(gym.Env):
    """Gymnasium environment: `reset(seed=...)` -> (colour, info); `step(a)` -> (colour,
    reward, terminated, truncated, info). `info` holds the position (not part of the
    observation)."""

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
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 3:
            raise ValueError(f"size={size!r} is not allowed: must be an int >= 3")
        if isinstance(n_colours, bool) or not isinstance(n_colours, int) or n_colours < 1:
            raise ValueError(f"n_colours={n_colours!r} is not allowed: must be an int >= 1")
        if max_steps < 1:
            raise ValueError(f"max_steps={max_steps!r} is not allowed: must be >= 1")
        self.size = size
        self.n_colours = n_colours
        self.max_steps = max_steps
        self.step_reward = step_reward
        self.collision_reward = collision_reward
        self.goal_reward = goal_reward
        self.start = (0, size // 2)
        self.goal = (size - 1, size // 2)
        rng = np.random.default_rng(colour_seed)
        self.colours = rng.integers(n_colours, size=(size, size))
        self.colours[self.goal] = n_colours
        self.observation_space = spaces.Discrete(n_colours + 1)
        self.action_space = spaces.Discrete(4)
        self.set_layout(layout)
        self._pos = self.start
        self._t = 0

    def set_layout(self, layout: str) -> None:
        """Switch between "free" and "blocked" (takes effect from the next step)."""
        if layout not in LAYOUTS:
            raise ValueError(f"layout={layout!r} is not allowed: must be one of {LAYOUTS}")
        self.layout = layout
        self.walls = np.zeros((self.size, self.size), bool)
        if layout == "blocked":
            self.walls[self.size // 2, 1:] = True

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
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise TypeError(f"action={action!r}: must be one int in [0, 4)")
        if not 0 <= action < 4:
            raise ValueError(f"action={action!r} is out of range: must be in [0, 4)")
        self._t += 1
        q = (self._pos[0] + MOVES[action][0], self._pos[1] + MOVES[action][1])
        reward = self.step_reward
        if 0 <= q[0] < self.size and 0 <= q[1] < self.size and not self.walls[q]:
            self._pos = q
        else:
            reward += self.collision_reward
        terminated = self._pos == self.goal
        if terminated:
            reward += self.goal_reward
        truncated = not terminated and self._t >= self.max_steps
        return int(self.colours[self._pos]), reward, terminated, truncated, {"position": self._pos}
