"""The C++ Env bindings: loading, pipelines, decisions, measures, state,
registries and the exception hierarchy."""

import copy

import numpy as np
import pytest

import hlogym
from conftest import CHAIN, SHARED, firsts


# The producer-consumer pipeline: the hand-counted choices below are those of
# its decision space (general-fusion adds a sibling candidate on SHARED).
def started(text=SHARED, pipeline="general-fusion-vertical"):
    env = hlogym.Env(text)
    assert env.start_pipeline(pipeline) is True
    return env


# ---- Exceptions.


def test_exception_hierarchy():
    assert issubclass(hlogym.InvalidArgumentError, hlogym.HloGymError)
    assert issubclass(hlogym.InvalidArgumentError, ValueError)
    assert issubclass(hlogym.NotFoundError, LookupError)
    assert issubclass(hlogym.FailedPreconditionError, RuntimeError)
    assert issubclass(hlogym.UnimplementedError, NotImplementedError)
    assert issubclass(hlogym.DeadlineExceededError, TimeoutError)
    assert issubclass(hlogym.InternalError, RuntimeError)
    assert not issubclass(hlogym.NotFoundError, ValueError)


def test_load_errors():
    with pytest.raises(hlogym.NotFoundError) as e:
        hlogym.Env("/nonexistent/model.hlo")
    assert "/nonexistent/model.hlo" in str(e.value)
    assert e.value.code == "NOT_FOUND"
    with pytest.raises(hlogym.InvalidArgumentError) as e:
        hlogym.Env("HloModule m\nENTRY e { ROOT x = f32[] bad }")
    assert e.value.code == "INVALID_ARGUMENT"
    with pytest.raises(hlogym.HloGymError):
        hlogym.Env(SHARED, evaluator="model:nosuch")


def test_state_errors():
    env = hlogym.Env(SHARED)
    with pytest.raises(hlogym.FailedPreconditionError, match="no pipeline was started"):
        env.step([])
    with pytest.raises(hlogym.NotFoundError, match="unknown pipeline or pass 'nosuch'"):
        env.start_pipeline("nosuch")
    env.start_pipeline("general-fusion-vertical")
    with pytest.raises(hlogym.FailedPreconditionError, match="paused at a decision"):
        env.run_pass("hlo-dce")


# ---- Loading.


def test_load_text_path_and_pathlike(tmp_path):
    path = tmp_path / "shared.hlo"
    path.write_text(SHARED)
    by_text = hlogym.Env(SHARED)
    by_str = hlogym.Env(str(path))
    by_path = hlogym.Env(path)
    by_file = hlogym.Env.from_file(str(path))
    by_static = hlogym.Env.from_text(SHARED)
    hashes = {e.hash() for e in (by_text, by_str, by_path, by_file, by_static)}
    assert len(hashes) == 1
    assert by_text.name == "shared"
    assert by_text.instruction_count == 6
    assert by_text.computation_count == 1
    assert by_text.evaluator == "model:h100"
    assert hlogym.load(SHARED, device="a100-40gb").evaluator == "model:a100-40gb"


# ---- Pipelines and decisions.


def test_pause_choice_counts_and_names():
    env = started()
    assert env.paused and not env.done
    assert env.pipeline_name == "general-fusion-vertical"
    counts = env.choice_counts()
    assert counts.dtype == np.int64
    assert counts.tolist() == [2, 2, 2, 2]
    names = env.alternative_names()
    assert len(names) == 4 and len(set(names)) == 4


def test_step_to_the_end():
    env = started()
    steps = 0
    while env.paused:
        counts = env.choice_counts()
        r = env.step(firsts(counts))
        assert isinstance(r, hlogym.StepResult)
        assert r.no_effect is False
        assert r.applied.alternatives == len(counts)
        assert r.applied.non_original == sum(1 for c in counts if c > 1)
        steps += 1
        assert steps < 20
    assert r.done is True
    assert env.done and not env.paused
    assert env.steps == steps
    # Keeping every original changes nothing.
    env2 = started()
    r = env2.step([0, 0, 0, 0])
    assert r.no_effect is True
    assert r.applied.non_original == 0
    assert r.applied.alternatives == 4


def test_bad_decisions_leave_the_env_unchanged():
    env = started()
    h = env.hash()
    with pytest.raises(ValueError, match="expected 4 decision\\(s\\), one per alternatives node, got 3"):
        env.step([1, 1, 1])
    with pytest.raises(hlogym.InvalidArgumentError, match="is 2, but it has 2 operand\\(s\\) \\(valid: 0..1\\)"):
        env.step([0, 2, 0, 0])
    with pytest.raises(ValueError, match="is -1"):
        env.apply(np.array([0, 0, -1, 0]))
    with pytest.raises(ValueError, match="decisions must be integers"):
        env.step([0.5, 1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="got shape \\(2, 2, 1\\)"):
        env.apply(np.zeros((2, 2, 1), dtype=np.int64))
    with pytest.raises(ValueError, match="must be a sequence"):
        env.apply(3)
    assert env.hash() == h
    assert env.paused
    assert env.choice_counts().tolist() == [2, 2, 2, 2]
    # Booleans are 0/1 choices; numpy integer arrays of any width work.
    r = env.step(np.ones(4, dtype=np.int8))
    assert r.applied.non_original == 4


def test_indexed_form_matches_the_1d_form():
    a = started()
    b = a.fork()
    obs = a.observation()
    rows = np.stack([obs.alternative_indices.astype(np.int64), np.ones(4, dtype=np.int64)], axis=1)
    assert rows.shape == (4, 2)
    sa = a.apply(rows[::-1])  # any row order
    sb = b.apply([1, 1, 1, 1])
    assert sa.non_original == sb.non_original == 4
    assert a.hash() == b.hash()
    c = started()
    with pytest.raises(ValueError, match="is not an alternatives node"):
        c.apply([[0, 1], [1, 1], [2, 1], [3, 1]])
    with pytest.raises(ValueError, match="step\\(\\) takes one choice per alternatives node"):
        c.step(rows)


# ---- Measures.


def test_evaluate_and_seconds():
    env = hlogym.Env(CHAIN)
    r = env.evaluate()
    assert set(r) >= {
        "module", "backend", "device", "total_seconds", "kernel_count",
        "kernel_launches", "flops", "transcendentals", "bytes", "flags",
    }
    assert r["module"] == "chain"
    assert r["backend"] == "model:h100"
    assert r["device"] == "h100"
    # Unfused: one kernel per non-parameter instruction.
    assert r["kernel_count"] == 5
    assert "kernels" not in r
    assert env.seconds() == pytest.approx(r["total_seconds"], rel=1e-12)
    k = env.evaluate(per_kernel=True)
    assert len(k["kernels"]) == 5
    assert sorted(x["name"] for x in k["kernels"]) == ["e", "m", "r", "s", "t"]
    assert sum(x["seconds"] for x in k["kernels"]) == pytest.approx(k["total_seconds"], rel=1e-9)
    other = env.evaluate("model:a100-40gb")
    assert other["device"] == "a100-40gb"
    assert other["total_seconds"] != r["total_seconds"]


def test_state_evaluation_prices_the_originals():
    env = started()
    # evaluate(state=True) is what seconds() prices; plain evaluate() also
    # counts the candidates.
    assert env.evaluate(state=True)["total_seconds"] == pytest.approx(env.seconds(), rel=1e-12)
    fresh = hlogym.Env(SHARED)
    assert env.seconds() == pytest.approx(fresh.seconds(), rel=1e-12)


def test_interpreter_outputs_and_equal_output():
    env = hlogym.Env(SHARED)
    r = env.evaluate("interpreter")
    outs = r["outputs"]
    assert len(outs) == 2
    for o in outs:
        assert isinstance(o, np.ndarray)
        assert o.dtype == np.float32 and o.shape == (1024,)
    done = started()
    while done.paused:
        done.step(firsts(done.choice_counts()))
    assert env.has_equal_output(done)
    ok, report = env.compare_outputs(done, seed=3)
    assert ok is True and isinstance(report, str)


# ---- State.


def test_fork_clone_save_load():
    env = started()
    f = env.fork()
    c = copy.deepcopy(env)
    s = env.save()
    h0 = env.hash()
    f.step([1, 1, 1, 1])
    assert env.hash() == h0 and c.hash() == h0
    assert f.hash() != h0
    env.step([1, 1, 1, 1])
    assert env.hash() == f.hash()
    env.load(s)
    assert env.hash() == h0 == s.hash()
    assert env.paused and s.paused and s.pipeline_name == "general-fusion-vertical"
    env.load(s)  # any number of times
    assert env.choice_counts().tolist() == [2, 2, 2, 2]


def test_export_and_write_text(tmp_path):
    env = hlogym.Env(SHARED)
    text = env.export_text()
    assert "HloModule shared" in text
    assert hlogym.Env(text).hash() == env.hash()
    path = tmp_path / "out.hlo"
    env.write_text(str(path))
    assert hlogym.Env(str(path)).hash() == env.hash()
    with pytest.raises(hlogym.NotFoundError):
        env.write_text(str(tmp_path / "no" / "such" / "dir.hlo"))


# ---- Registries.


def test_registries():
    pipes = hlogym.pipelines()
    assert {"xla-gpu", "general-fusion", "single-fusion"} <= set(pipes)
    assert all(isinstance(v, str) and v for v in pipes.values())
    passes = hlogym.passes()
    assert "algebraic-simplifier" in passes and "hlo-dce" in passes
    assert list(passes) == sorted(passes)
    names = hlogym.decision_pipelines()
    # general-fusion is a pipeline and a pass: listed once.
    assert names == list(dict.fromkeys(list(pipes) + list(passes)))
    assert names.count("general-fusion") == 1
    assert len(hlogym.env_ids()) == len(names)
    assert "h100" in hlogym.devices()
    assert hlogym.agents() == ["pick-first", "random", "greedy", "beam", "fmcts"]
    assert hlogym.env_ids()[: len(pipes)] == [f"hlogym/{p}-v0" for p in pipes]


def test_pass_pipeline_runs_a_pass_dry():
    env = hlogym.Env(CHAIN)
    env.run_pass("hlo-dce")
    paused = env.start_pipeline("xla-gpu")
    assert paused is False and env.done
    # The baseline fuses the chain into one kernel.
    assert env.evaluate()["kernel_count"] == 1
