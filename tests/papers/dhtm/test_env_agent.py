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
    env = make_env(colour_seed=seed)
    obs, info = env.reset()
    assert info["position"] == (0, 2) and obs == env.colours[0, 2]
    _, r, term, trunc, info = env.step(0)  # up: the border
    assert info["position"] == (0, 2) and r == pytest.approx(-0.12)
    assert env.shortest_path() == 4
    for _ in range(3):
        env.step(2)
    obs, r, term, trunc, info = env.step(2)
    assert term and not trunc and obs == env.n_colours and r == pytest.approx(0.98)
    env.set_layout("blocked")
    assert env.shortest_path() == 8
    env.reset()
    env.step(2)
    _, r, _, _, info = env.step(2)  # into the wall
    assert info["position"] == (1, 2) and r == pytest.approx(-0.12)


def test_env_truncates():
    env = make_env(max_steps=3)
    env.reset()
    out = [env.step(0) for _ in range(3)]
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
        ({"size": 2}, ValueError, "size=2"),
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
    memory = DHTM(
        5,
        4,
        cells_per_column=10,
        n_copies=1,
        n_vars_per_factor=2,
        burst="uniform",
        random_state=seed,
    )
    agent = SFAgent(memory, 5, 4, horizon=8, stop=GoalStop(), random_state=seed)
    steps = [run_episode(env, agent) for _ in range(25)]
    assert agent.rewards_[env.n_colours] > 0.5  # the goal colour is rewarding
    assert np.mean(steps[-5:]) < np.mean(steps[:5])


def test_grid_config_groups():
    from iclr25.core.config import ConfigError
    from iclr25.papers.dhtm.experiments.gridworld import ECConfig, GridConfig

    cfg = GridConfig()
    assert cfg.dhtm.burst == "uniform" and cfg.dhtm.cells_per_column == 20
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
