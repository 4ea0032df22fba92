"""The gridworld environment (Gymnasium API) and the agents."""

import numpy as np
import pytest

from iclr25.core.testing import needs

pytestmark = needs("gymnasium")


def make_env(**kw):
    from iclr25.papers.dhtm.env import GridWorldPOMDP

    return GridWorldPOMDP(**kw)


def test_env_passes_gymnasium_checker():
    from gymnasium.utils.env_checker import check_env

    check_env(make_env(), skip_render_check=True)


def test_env_dynamics_rewards_and_layouts(seed):
    """The official environment's rooms and collision hint."""
    env = make_env(colour_seed=seed)
    obs, info = env.reset()
    assert info["position"] == (4, 0) and obs == env.colours[4, 0] < env.n_colours
    obs, r, term, trunc, info = env.step(3)  # left: the border, observed as such
    assert info["position"] == (4, 0) and r == pytest.approx(-0.12) and obs == env.border_obs
    assert env.shortest_path() == 3
    for _ in range(2):
        obs, *_ = env.step(0)
        assert obs < env.n_colours
    obs, r, term, trunc, info = env.step(0)
    assert term and not trunc and obs == env.n_colours and r == pytest.approx(0.98)
    env.set_layout("blocked")
    assert env.shortest_path() == 9
    assert env.walls[2].tolist() == [True, True, True, False, False]
    env.reset()
    env.step(0)
    obs, r, _, _, info = env.step(0)  # into the wall
    assert info["position"] == (3, 0) and r == pytest.approx(-0.12) and obs == env.wall_obs
    assert env.observation_space.n == env.n_colours + 3
    # without the hint a collision shows the cell's colour again (our earlier variant)
    plain = make_env(colour_seed=seed, collision_hint=False)
    plain.reset()
    obs, r, *_ = plain.step(3)
    assert obs == plain.colours[4, 0] and plain.observation_space.n == plain.n_colours + 1


def test_env_truncates():
    env = make_env(max_steps=3)
    env.reset()
    out = [env.step(3) for _ in range(3)]  # into the border
    assert [o[3] for o in out] == [False, False, True]


def test_env_bad_input():
    env = make_env()
    env.reset()
    with pytest.raises(ValueError, match="action=4"):
        env.step(4)
    with pytest.raises(TypeError, match="action="):
        env.step(np.array([1, 2]))
    with pytest.raises(ValueError, match="layout='maze'"):
        env.set_layout("maze")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"size": 3}, ValueError, "size=3"),
        ({"size": 5.0}, TypeError, r"size=5\.0"),
        ({"n_colours": True}, TypeError, "n_colours=True"),
        ({"max_steps": 0}, ValueError, "max_steps=0"),
        ({"step_reward": float("nan")}, ValueError, "step_reward=nan"),
        ({"goal_reward": float("inf")}, ValueError, "goal_reward=inf"),
        ({"collision_reward": "low"}, TypeError, "collision_reward='low'"),
    ],
)
def test_env_constructor_checks_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_env(**kwargs)


def test_episodic_control_replays_its_best_path(seed):
    from iclr25.papers.dhtm.agent import EpisodicControl, run_episode

    env = make_env(colour_seed=seed)
    agent = EpisodicControl(4, epsilon=0.0, random_state=seed)
    steps = [run_episode(env, agent) for _ in range(150)]
    assert min(steps) < 50
    assert steps[-1] == min(steps)  # greedy on the best return found


def test_sf_agent_with_dhtm_learns_the_free_layout(seed):
    from iclr25.papers.dhtm.agent import GoalStop, SFAgent, run_episode
    from iclr25.papers.dhtm.method import DHTM

    env = make_env(colour_seed=seed)
    n_obs = env.observation_space.n
    memory = DHTM(
        n_obs,
        4,
        cells_per_column=10,
        n_copies=1,
        n_vars_per_factor=2,
        burst="uniform",
        random_state=seed,
    )
    agent = SFAgent(memory, n_obs, 4, horizon=8, stop=GoalStop(), random_state=seed)
    steps = [run_episode(env, agent) for _ in range(25)]
    assert agent.rewards_[env.n_colours] > 0.5  # the goal colour is rewarding
    assert np.mean(steps[-5:]) < np.mean(steps[:5])


def test_grid_config_groups():
    from iclr25.core.config import ConfigError
    from iclr25.papers.dhtm.experiments.gridworld import ECConfig, GridConfig

    cfg = GridConfig()
    assert cfg.dhtm.burst == "uniform" and cfg.dhtm.cells_per_column == 40
    assert (cfg.dhtm.copies, cfg.dhtm.vars_per_factor, cfg.collision_hint) == (3, 4, True)
    assert (cfg.cscg.buffer, cfg.cscg.refit_every, cfg.lstm.batches) == (100, 10, 10)
    with pytest.raises(ConfigError, match="epsilon=nan"):
        ECConfig(epsilon=float("nan"))
    with pytest.raises(ConfigError, match="beta=inf"):
        GridConfig(beta=float("inf"))
    with pytest.raises(ConfigError, match="change_episode=5"):
        GridConfig(change_episode=5)  # before the first full window


def test_every_memory_is_a_sequence_model_and_drives_the_agent(seed):
    from iclr25.papers.dhtm.agent import GoalStop, SFAgent
    from iclr25.papers.dhtm.baselines import CloneHMM, LSTMPredictor, MarkovCounts
    from iclr25.papers.dhtm.method import DHTM, SequenceModel

    memories = [
        DHTM(5, 4, cells_per_column=3, n_copies=1, n_vars_per_factor=2, random_state=seed),
        CloneHMM(5, 4, clones=2, refit_every=2, em_iters=2, random_state=seed),
        LSTMPredictor(5, 4, hidden=4, n_batches=1, random_state=seed),
        MarkovCounts(5),
    ]
    for memory in memories:
        assert isinstance(memory, SequenceModel)
        agent = SFAgent(memory, 5, memory.n_actions, horizon=4, random_state=seed)
        agent.reset()
        agent.step(1)
        agent.step(2, reward=1.0)
        sf = memory.successor_features_actions(0.8, 4)
        assert sf.shape == (memory.n_actions, 5)
        for a in range(memory.n_actions):
            np.testing.assert_allclose(sf[a], memory.successor_features(0.8, 4, action=a))
        np.testing.assert_allclose(agent.q_values(), sf @ agent.rewards_)
    with pytest.raises(TypeError, match="min_kl"):  # only DHTM stops its rollouts early
        SFAgent(memories[1], 5, 4, stop=GoalStop()).q_values()
    with pytest.raises(ValueError, match="goal_prob=nan"):
        GoalStop(goal_prob=float("nan"))
    with pytest.raises(ValueError, match="beta=inf"):
        SFAgent(memories[0], 5, 4, beta=float("inf"))
