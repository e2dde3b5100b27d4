"""The Gymnasium-style environment: ids, the episode loop, rewards, info,
bad actions, seeds, lazy observations, forks."""

import numpy as np
import pytest

import hlogym
from conftest import CHAIN, SHARED, firsts


# The producer-consumer pipeline: the hand-counted choices below are those of
# its decision space (general-fusion adds a sibling candidate on SHARED).
def make(text=SHARED, **kwargs):
    return hlogym.make("hlogym/general-fusion-vertical-v0", module=text, **kwargs)


def random_episode(env, seed):
    obs, info = env.reset(seed=seed)
    hashes, rewards = [info["hash"]], []
    terminated = info["done"]
    while not terminated:
        action = env.action_space.sample()
        obs, reward, terminated, truncated, info = env.step(action)
        hashes.append(info["hash"])
        rewards.append(reward)
    return hashes, rewards


def test_unknown_ids():
    for bad in ("general-fusion", "hlogym/nosuch-v0", "hlogym/general-fusion-v1", "hlogym/general-fusion", 3):
        with pytest.raises(hlogym.NotFoundError) as e:
            hlogym.make(bad, module=SHARED)
        assert "unknown environment id" in str(e.value)
        assert e.value.code == "NOT_FOUND"
    assert isinstance(hlogym.make("hlogym/algebraic-simplifier-v0", module=SHARED), hlogym.HloGymEnv)
    assert "hlogym/general-fusion-v0" in hlogym.env_ids()
    assert "hlogym/single-fusion-v0" in hlogym.env_ids()
    with pytest.raises(ValueError, match="no module"):
        hlogym.make("hlogym/general-fusion-v0").reset()
    with pytest.raises(ValueError, match="unknown opcode numbering"):
        make(numbering="xla")
    with pytest.raises(hlogym.NotFoundError):
        make("/nonexistent.hlo")


def test_episode_end_to_end():
    with make() as env:
        assert env.unwrapped is env
        obs, info = env.reset(seed=0)
        assert info["done"] is False
        assert info["num_alternatives"] == 4
        assert info["choice_counts"].tolist() == [2, 2, 2, 2]
        assert info["action_mask"].shape == (4, 2) and info["action_mask"].all()
        assert env.action_space.nvec.tolist() == [2, 2, 2, 2]
        assert info["baseline_seconds"] > 0
        assert info["unoptimized_seconds"] == pytest.approx(hlogym.Env(SHARED).seconds(), rel=1e-12)
        # Before any decision the state prices as the unoptimised module.
        assert info["seconds"] == pytest.approx(info["unoptimized_seconds"], rel=1e-12)
        assert info["seconds"] == pytest.approx(env.core.seconds(), rel=1e-12)
        assert info["kernel_count"] == 3  # e, a, n
        assert info["hash"] == env.state_hash
        first_seconds = info["seconds"]
        total = 0.0
        steps = 0
        terminated = False
        while not terminated:
            before = info["seconds"]
            obs, reward, terminated, truncated, info = env.step(firsts(info["choice_counts"]))
            steps += 1
            assert truncated is False
            assert reward == pytest.approx((before - info["seconds"]) / info["baseline_seconds"])
            assert info["action_had_no_effect"] is False
            assert info["step"] == steps
            total += reward
            assert steps < 20
        assert info["done"] is True
        assert info["num_alternatives"] == 0
        assert env.action_space.nvec.tolist() == []
        assert info["action_mask"].shape == (0, 0)
        assert total == pytest.approx((first_seconds - info["seconds"]) / info["baseline_seconds"])
        # Fusing e into its users makes the program faster.
        assert info["seconds"] < first_seconds
        assert total > 0
        assert env.core.done
        with pytest.raises(hlogym.FailedPreconditionError, match="the episode is over"):
            env.step([])
        with pytest.raises(RuntimeError):
            env.step([0])
        # reset recovers and replays the same start.
        _, again = env.reset()
        assert again["hash"] == make(SHARED).reset()[1]["hash"]
    assert env.core is None  # closed by the context manager


def test_keeping_the_originals_has_no_effect():
    env = make()
    _, info0 = env.reset()
    _, reward, terminated, _, info = env.step([0, 0, 0, 0])
    assert info["action_had_no_effect"] is True
    assert info["applied"]["non_original"] == 0
    assert info["applied"]["alternatives"] == 4
    # Nothing more to decide; the rest of the pipeline still runs: the
    # horizontal fusion of a and n leaves 2 kernels (e, the fusion).
    assert terminated is True
    assert info["kernel_count"] == 2
    assert reward == pytest.approx((info0["seconds"] - info["seconds"]) / info["baseline_seconds"])


def test_bad_actions_raise_and_leave_the_env_unchanged():
    env = make()
    _, info = env.reset()
    h = env.state_hash
    with pytest.raises(ValueError, match="expected 4 decision\\(s\\), one per alternatives node, got 2"):
        env.step([1, 1])
    with pytest.raises(hlogym.InvalidArgumentError, match="is 5, but it has 2 operand"):
        env.step([0, 5, 0, 0])
    with pytest.raises(ValueError, match="is -1"):
        env.step(np.array([-1, 0, 0, 0]))
    with pytest.raises(ValueError, match="must be integers"):
        env.step([0.0, 1.0, 1.0, 1.0])
    assert env.state_hash == h
    assert env.action_space.nvec.tolist() == [2, 2, 2, 2]
    # A valid action still works and reports step 1.
    _, _, _, _, info = env.step([1, 1, 1, 1])
    assert info["step"] == 1


def test_step_before_reset():
    env = make()
    with pytest.raises(hlogym.FailedPreconditionError, match="call reset\\(\\) first"):
        env.step([0])


def test_identical_seeds_give_identical_episodes():
    a = random_episode(make(CHAIN), seed=123)
    b = random_episode(make(CHAIN), seed=123)
    assert a == b
    assert len(a[1]) >= 1
    # The same env, reseeded, replays it too.
    env = make(CHAIN)
    random_episode(env, seed=5)
    assert random_episode(env, seed=123) == a


def test_action_space():
    space = hlogym.MultiDiscrete([2, 3, 1], rng=0)
    for _ in range(20):
        a = space.sample()
        assert a.dtype == np.int64 and a.shape == (3,)
        assert space.contains(a) and a in space
        assert a[2] == 0
    assert not space.contains([0, 3, 0])
    assert not space.contains([0, 0])
    assert not space.contains([0.0, 0.0, 0.0])
    assert space.mask().tolist() == [[True, True, False], [True, True, True], [True, False, False]]
    x = hlogym.MultiDiscrete([2, 3, 1], rng=0).sample()
    y = hlogym.MultiDiscrete([2, 3, 1]).sample(rng=0)
    assert x.tolist() == y.tolist()
    assert hlogym.MultiDiscrete([]).sample().shape == (0,)
    with pytest.raises(ValueError):
        hlogym.MultiDiscrete([2, 0])


def test_lazy_observation_keeps_its_state():
    env = make()
    obs0, info0 = env.reset()
    assert not obs0.built
    expected = env.observation()
    env.step([1, 1, 1, 1])
    # Built after the step, it still describes the first pause.
    assert obs0.num_nodes == expected.num_nodes
    assert np.array_equal(obs0.alternative_indices, expected.alternative_indices)
    assert obs0.node_features.names == expected.node_features.names
    assert obs0.built
    assert isinstance(obs0.graph, hlogym.Observation)


def test_observation_kinds():
    env = make()
    obs, _ = env.reset()
    g = env.observation("graph")
    assert isinstance(g, hlogym.Observation)
    assert obs.num_nodes == g.num_nodes
    assert len(g.alternative_indices) == 4
    s = env.observation("summary")
    assert s.dtype == np.float32 and s.shape == (hlogym.summary_size(),)
    assert env.observation("text").startswith("HloModule shared")
    assert env.observation("summary", numbering="hloenv").shape == (hlogym.summary_size("hloenv"),)
    with pytest.raises(ValueError, match="unknown observation kind 'pixels'"):
        env.observation("pixels")


def test_fork_independence():
    env = make(CHAIN)
    env.reset(seed=9)
    fork = env.fork()
    h = env.state_hash
    assert fork.state_hash == h
    a = fork.action_space.sample()
    b = env.action_space.sample()
    assert a.tolist() == b.tolist()  # the generator state is copied
    _, _, _, _, info = fork.step(firsts(fork.action_space.nvec))
    assert env.state_hash == h
    assert fork.state_hash == info["hash"] != h
    _, _, _, _, info2 = env.step(firsts(env.action_space.nvec))
    assert info2["hash"] == info["hash"]


def test_max_steps_truncates():
    env = make(CHAIN, max_steps=1)
    _, info = env.reset()
    assert info["done"] is False
    _, _, terminated, truncated, info = env.step(firsts(info["choice_counts"]))
    assert truncated is (not terminated)
    if truncated:
        with pytest.raises(hlogym.FailedPreconditionError):
            env.step(firsts(info["choice_counts"]))


def test_pipeline_without_pauses_is_done_at_reset():
    env = hlogym.make("hlogym/xla-gpu-v0", module=SHARED)
    obs, info = env.reset()
    assert info["done"] is True
    assert info["num_alternatives"] == 0
    # The xla-gpu episode ends at the baseline itself.
    assert info["seconds"] == pytest.approx(info["baseline_seconds"], rel=1e-12)
    with pytest.raises(hlogym.FailedPreconditionError):
        env.step([])


def test_reset_switches_modules(transformer_path):
    env = make()
    _, a = env.reset()
    _, b = env.reset(options={"module": transformer_path})
    assert b["baseline_seconds"] != a["baseline_seconds"]
    assert b["num_alternatives"] > 0
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"modul": SHARED})


def test_render_ansi():
    env = make(render_mode="ansi")
    env.reset()
    assert env.render().startswith("HloModule shared")
    assert make().render() is None


GYMNASIUM_STUB = '''
registry = {}


class Env:
    pass


def register(id, entry_point, kwargs=None, disable_env_checker=False):
    registry[id] = dict(entry_point=entry_point, kwargs=kwargs or {},
                        disable_env_checker=disable_env_checker)


def make(id, **kwargs):
    import importlib
    spec = registry[id]
    module, name = spec["entry_point"].split(":")
    cls = getattr(importlib.import_module(module), name)
    return cls(**{**spec["kwargs"], **kwargs})
'''

GYMNASIUM_SCRIPT = '''
import gymnasium
import hlogym
assert issubclass(hlogym.HloGymEnv, gymnasium.Env)
assert sorted(gymnasium.registry) == sorted(hlogym.env_ids())
spec = gymnasium.registry["hlogym/general-fusion-v0"]
assert spec["entry_point"] == "hlogym.gym_env:HloGymEnv"
assert spec["kwargs"] == {"pipeline": "general-fusion"}
assert spec["disable_env_checker"] is True
env = gymnasium.make("hlogym/general-fusion-v0", module=MODULE)
obs, info = env.reset(seed=0)
print("alternatives", info["num_alternatives"])
'''


def test_gymnasium_registration_with_a_stub(tmp_path):
    # gymnasium is optional and not installed here: a stub stands in, in a
    # fresh interpreter so the package registers at import.
    import os
    import subprocess
    import sys

    (tmp_path / "gymnasium").mkdir()
    (tmp_path / "gymnasium" / "__init__.py").write_text(GYMNASIUM_STUB)
    script = tmp_path / "script.py"
    script.write_text(f"MODULE = {SHARED!r}\n" + GYMNASIUM_SCRIPT)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path), os.path.dirname(os.path.dirname(hlogym.__file__))]
    )
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "alternatives 4"


def test_search_takes_the_gym_env():
    env = make(CHAIN)
    with pytest.raises(hlogym.FailedPreconditionError):
        hlogym.search(env, "pick-first")
    env.reset()
    h = env.state_hash
    r = hlogym.search(env, "pick-first")
    assert env.state_hash == h
    assert r.best.done


def test_general_fusion_offers_sibling_candidates():
    # The uses of a and n by the root add the sibling fusion of a and n to
    # the original and the producer-consumer fusion of e.
    with hlogym.make("hlogym/general-fusion-v0", module=SHARED) as env:
        _, info = env.reset(seed=0)
        assert info["choice_counts"].tolist() == [2, 2, 3, 3]
        assert env.action_space.nvec.tolist() == [2, 2, 3, 3]
        assert info["action_mask"].tolist() == [[True, True, False], [True, True, False],
                                                 [True, True, True], [True, True, True]]
        terminated = False
        steps = 0
        while not terminated:
            _, _, terminated, truncated, info = env.step(firsts(info["choice_counts"]))
            assert not truncated
            steps += 1
        assert steps >= 1
        assert info["seconds"] <= info["unoptimized_seconds"]
