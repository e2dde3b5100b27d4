"""Search agents from Python, f-MCTS with a Python prior, callbacks."""

import numpy as np
import pytest

import hlogym
from conftest import CHAIN, SHARED, firsts


def started(text=SHARED):
    env = hlogym.Env(text)
    env.start_pipeline("general-fusion-vertical")
    return env


def replay(text, trajectory):
    env = started(text)
    for decisions in trajectory:
        env.step(decisions)
    assert env.done
    return env


@pytest.mark.parametrize("agent", ["pick-first", "random", "greedy", "beam"])
def test_agents_reach_an_end_state(agent):
    start = started(CHAIN)
    h = start.hash()
    r = hlogym.search(start, agent, seed=1, budget=200)
    assert isinstance(r, hlogym.SearchResult)
    assert start.hash() == h  # the start is not changed
    assert r.best.done
    assert r.best_seconds == pytest.approx(r.best.seconds(), rel=1e-12)
    assert r.evaluations >= 1
    assert r.timed_out is False
    # The trajectory replays to the same end state.
    assert replay(CHAIN, r.trajectory).hash() == r.best.hash()


def test_pick_first_matches_stepping_by_hand():
    start = started(CHAIN)
    r = hlogym.search(start, "pick-first")
    env = started(CHAIN)
    while env.paused:
        env.step(firsts(env.choice_counts()))
    assert r.best.hash() == env.hash()


def test_random_agent_is_seeded():
    a = hlogym.search(started(CHAIN), "random", seed=4)
    b = hlogym.search(started(CHAIN), "random", seed=4)
    assert a.trajectory == b.trajectory
    assert a.best.hash() == b.best.hash()


def test_fmcts_threads_do_not_change_the_result():
    runs = [hlogym.search(started(CHAIN), "fmcts", seed=3, budget=30,
                          threads=t) for t in (1, 2)]
    assert runs[0].trajectory == runs[1].trajectory
    assert runs[0].best_seconds == runs[1].best_seconds
    assert runs[0].evaluations == runs[1].evaluations
    assert [r.threads for r in runs] == [1, 2]
    assert hlogym.search(started(CHAIN), "pick-first").threads == 1
    with pytest.raises(ValueError, match="threads must be >= 0"):
        hlogym.search(started(CHAIN), "fmcts", threads=-1)


def test_fmcts_reports_its_statistics():
    r = hlogym.search(started(CHAIN), "fmcts", seed=0, budget=8,
                      mcts_min_budget=4, threads=1)
    s = r.stats
    assert set(s) == {"commits", "simulations_per_commit", "rollouts",
                      "rollout_steps", "prior_calls", "tree_states",
                      "merged_edges", "committed_seconds", "commit_returns",
                      "commit_cycles"}
    assert s["commits"] == len(s["simulations_per_commit"]) >= 1
    assert s["simulations_per_commit"][0] == 8
    assert all(n == 4 for n in s["simulations_per_commit"][1:])
    assert s["tree_states"] == r.states_visited
    assert s["rollouts"] % 5 == 0 and s["rollout_steps"] >= s["rollouts"]
    assert s["prior_calls"] == 0
    assert s["committed_seconds"] >= r.best_seconds
    assert hlogym.search(started(CHAIN), "pick-first").stats is None


def test_unknown_agent():
    with pytest.raises(hlogym.NotFoundError, match="unknown agent 'nosuch'"):
        hlogym.search(started(), "nosuch")


def test_fmcts_with_a_python_prior():
    calls = []
    views = []

    def prior(state):
        assert isinstance(state, hlogym.EnvView)
        counts = state.choice_counts()
        obs = state.observation()
        assert len(obs.alternative_indices) == len(counts)
        assert state.paused
        calls.append(state.hash())
        views.append(state)
        # Prefer fusing: weight 3 on every candidate, 1 on the original.
        priors = [np.concatenate([[1.0], np.full(c - 1, 3.0)]) for c in counts]
        return priors, 0.5

    progress = []
    start = started(CHAIN)
    r = hlogym.search(start, "fmcts", budget=30, seed=2, prior=prior, progress=progress.append)
    assert r.best.done
    assert len(calls) >= 1
    assert calls[0] == start.hash()  # the root is the start state
    assert r.best_seconds == pytest.approx(r.best.seconds(), rel=1e-12)
    assert replay(CHAIN, r.trajectory).hash() == r.best.hash()
    assert progress and set(progress[-1]) == {"evaluations", "elapsed_seconds", "best_seconds", "steps"}
    # A view is only valid during its call.
    assert views[0].valid is False
    with pytest.raises(hlogym.FailedPreconditionError, match="only valid during that call"):
        views[0].choice_counts()
    # Deterministic for a seed.
    r2 = hlogym.search(started(CHAIN), "fmcts", budget=30, seed=2, prior=prior)
    assert r2.trajectory == r.trajectory


def test_prior_fork_outlives_the_call():
    kept = []

    def prior(state):
        kept.append(state.fork())
        return [np.ones(c) for c in state.choice_counts()], 0.0

    hlogym.search(started(), "fmcts", budget=5, prior=prior)
    assert kept and kept[0].paused
    assert kept[0].choice_counts().tolist() == [2, 2, 2, 2]


def test_prior_exceptions_propagate():
    class Boom(Exception):
        pass

    def prior(state):
        raise Boom("no idea")

    with pytest.raises(Boom, match="no idea"):
        hlogym.search(started(), "fmcts", budget=10, prior=prior)


@pytest.mark.parametrize(
    "result, message",
    [
        (([1.0, 1.0], 0.0), "the prior returned weights for 2 nodes but the state has 4"),
        (([[1, 1]] * 3 + [[1, 1, 1]], 0.0), "weights for node 3 have 3 entries but the node has 2 choices"),
        ((None, 0.0), "one array per alternatives node"),
        (([[1, 1]] * 4, "x"), "the prior's value must be a float"),
        (7, "must return \\(priors, value\\)"),
    ],
)
def test_bad_prior_results(result, message):
    with pytest.raises(hlogym.InvalidArgumentError, match=message):
        hlogym.search(started(), "fmcts", budget=10, prior=lambda s: result)


def test_callbacks_must_be_callable():
    with pytest.raises(TypeError, match="prior must be callable"):
        hlogym.search(started(), "fmcts", prior=3)
    with pytest.raises(TypeError, match="progress must be callable"):
        hlogym.search(started(), "fmcts", progress=3)


def test_search_from_the_gym_env():
    env = hlogym.make("hlogym/general-fusion-v0", module=CHAIN)
    _, info = env.reset()
    r = hlogym.search(env.core, "greedy", seed=0)
    # Replaying the agent's decisions in the gym env reaches its end state.
    total = 0.0
    for decisions in r.trajectory:
        _, reward, terminated, _, info = env.step(decisions)
        total += reward
    assert terminated
    assert env.state_hash == r.best.hash()
    assert info["seconds"] == pytest.approx(r.best_seconds, rel=1e-12)
