"""A Gymnasium-style environment over HloGym's decision pipelines.

Gymnasium is optional: the environment follows its signatures
(``reset(*, seed, options) -> (obs, info)``, ``step(a) -> (obs, reward,
terminated, truncated, info)``) and, when gymnasium is importable, derives
from ``gymnasium.Env`` and registers its ids (``hlogym/<pipeline>-v0``).

MDP (id ``hlogym/<pipeline>-v0``, ``pipeline`` one of
``hlogym.decision_pipelines()``):

* ``reset`` loads the module afresh and runs the pipeline to its first
  pause. If the pipeline finishes without pausing, the episode is over at
  once: ``info["done"]`` is True, the action space is empty, and ``step``
  raises ``FailedPreconditionError``.
* An action picks one operand per ``alternatives`` node, in observation
  order (operand 0 keeps the original); HloEnv's N x 2 rows (node index,
  operand index) are accepted too. A bad action raises
  ``InvalidArgumentError`` (a ``ValueError``) with the library's message and
  leaves the environment unchanged.
* reward = (T(before) - T(after)) / T(baseline): T is the modelled time of
  the program the state stands for (``Env.seconds``, every alternatives node
  counted as its original) and T(baseline) the modelled time of the module
  after the ``xla-gpu`` pipeline. The rewards of an episode add up to
  (T(first pause) - T(end)) / T(baseline).
* ``terminated`` when the pipeline has run to its end; ``truncated`` when
  ``max_steps`` steps were taken first. A failure inside the pipeline after
  a valid action ends the episode (terminated, ``info["error_details"]``);
  ``reset`` recovers.
"""

import copy
import math
import re
import weakref

import numpy as np

from . import _hlogym

try:  # Optional: only to derive from gymnasium.Env and register the ids.
    import gymnasium as _gymnasium

    _Base = _gymnasium.Env
except ImportError:  # pragma: no cover - gymnasium is not required
    _gymnasium = None
    _Base = object

ENV_VERSION = 0
_ID_RE = re.compile(r"hlogym/(?P<name>.+)-v(?P<version>[0-9]+)")
_OBSERVATION_KINDS = ("graph", "summary", "text")


def _error(cls, code, message):
    e = cls(message)
    e.code = code
    return e


def env_ids():
    """Every id ``make`` accepts, one per decision pipeline."""
    return [f"hlogym/{name}-v{ENV_VERSION}" for name in _hlogym.decision_pipelines()]


def _pipeline_of(env_id):
    m = _ID_RE.fullmatch(env_id) if isinstance(env_id, str) else None
    if m is None:
        raise _error(
            _hlogym.NotFoundError,
            "NOT_FOUND",
            f"unknown environment id {env_id!r}: ids look like "
            f"'hlogym/<pipeline>-v{ENV_VERSION}', e.g. "
            f"'hlogym/general-fusion-v{ENV_VERSION}' (hlogym.env_ids() lists them)",
        )
    name, version = m.group("name"), int(m.group("version"))
    if name not in _hlogym.decision_pipelines():
        raise _error(
            _hlogym.NotFoundError,
            "NOT_FOUND",
            f"unknown environment id {env_id!r}: no decision pipeline or pass "
            f"named {name!r} (pipelines: {', '.join(_hlogym.pipelines())}; or "
            f"any name of hlogym.passes())",
        )
    if version != ENV_VERSION:
        raise _error(
            _hlogym.NotFoundError,
            "NOT_FOUND",
            f"unknown environment id {env_id!r}: the current version is "
            f"v{ENV_VERSION}",
        )
    return name


def make(env_id, **kwargs):
    """Creates the environment ``env_id`` (``hlogym/<pipeline>-v0``).

    Keyword arguments go to :class:`HloGymEnv`: ``module`` (HLO text or a
    path), ``device`` ("h100"), ``evaluator`` (overrides ``device``),
    ``numbering`` ("hlogym" or "hloenv"), ``max_steps``, ``verify``,
    ``disabled`` (passes switched off), ``render_mode`` ("ansi").
    """
    return HloGymEnv(pipeline=_pipeline_of(env_id), **kwargs)


class MultiDiscrete:
    """One choice per alternatives node: ``0 <= action[j] < nvec[j]``.

    A small stand-in for ``gymnasium.spaces.MultiDiscrete`` (the number of
    nodes changes from step to step, so each pause has its own space).
    """

    dtype = np.dtype(np.int64)

    def __init__(self, nvec, rng=None):
        self.nvec = np.asarray(nvec, dtype=np.int64).reshape(-1)
        if np.any(self.nvec < 1):
            raise _error(
                _hlogym.InvalidArgumentError,
                "INVALID_ARGUMENT",
                f"every node needs at least one choice, got nvec={self.nvec}",
            )
        self.np_random = self._generator(rng)

    @staticmethod
    def _generator(rng):
        if isinstance(rng, np.random.Generator):
            return rng
        return np.random.default_rng(rng)

    @property
    def shape(self):
        return self.nvec.shape

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self, rng=None):
        """A uniform action; ``rng`` (Generator or seed) defaults to the
        space's generator, which ``HloGymEnv.reset(seed=...)`` seeds."""
        r = self.np_random if rng is None else self._generator(rng)
        if self.nvec.size == 0:
            return np.zeros(0, dtype=np.int64)
        return r.integers(0, self.nvec, dtype=np.int64)

    def contains(self, x):
        a = np.asarray(x)
        if a.shape != self.nvec.shape:
            return False
        if a.size and a.dtype.kind not in "iu":
            return False
        return bool(np.all((a >= 0) & (a < self.nvec)))

    __contains__ = contains

    def mask(self):
        """Boolean (nodes, max choices) array: which choices exist."""
        width = int(self.nvec.max()) if self.nvec.size else 0
        return np.arange(width)[None, :] < self.nvec[:, None]

    def __len__(self):
        return int(self.nvec.size)

    def __eq__(self, other):
        return isinstance(other, MultiDiscrete) and np.array_equal(self.nvec, other.nvec)

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist()})"


class LazyObservation:
    """The graph observation (``hlogym.Observation``) of one state, built on
    first use. Attribute access (``obs.out_edge_offsets``,
    ``obs.node_features.opcodes``, ...) builds it; ``obs.graph`` returns it.

    It always describes the state it was returned for: when the environment
    moves on before the observation was built, it keeps a copy of that state.
    """

    __slots__ = ("_source", "_numbering", "_graph", "__weakref__")

    def __init__(self, source, numbering):
        self._source = source
        self._numbering = numbering
        self._graph = None

    @property
    def graph(self):
        if self._graph is None:
            self._graph = self._source.observation(self._numbering)
            self._source = None
        return self._graph

    @property
    def built(self):
        return self._graph is not None

    def _detach(self):
        # Called before the environment changes the state this describes.
        if self._graph is None and self._source is not None:
            self._source = self._source.fork()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.graph, name)

    def __dir__(self):
        return sorted(set(dir(type(self))) | set(dir(_hlogym.Observation)))

    def __repr__(self):
        if self._graph is None:
            return "<hlogym.LazyObservation (not built)>"
        return f"<hlogym.LazyObservation {self._graph!r}>"


class HloGymEnv(_Base):
    """Decisions of one HloGym decision pipeline over one module, with
    Gymnasium's signatures. See the module docstring for the MDP."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        pipeline="general-fusion",
        module=None,
        device="h100",
        evaluator=None,
        numbering="hlogym",
        max_steps=None,
        verify=False,
        disabled=(),
        render_mode=None,
    ):
        if pipeline not in _hlogym.decision_pipelines():
            raise _error(
                _hlogym.NotFoundError,
                "NOT_FOUND",
                f"unknown decision pipeline {pipeline!r} (pipelines: "
                f"{', '.join(_hlogym.pipelines())}; or any pass name)",
            )
        if numbering not in ("hlogym", "hloenv"):
            raise _error(
                _hlogym.InvalidArgumentError,
                "INVALID_ARGUMENT",
                f"unknown opcode numbering {numbering!r} (known: hlogym, hloenv)",
            )
        if max_steps is not None and max_steps < 1:
            raise _error(
                _hlogym.InvalidArgumentError,
                "INVALID_ARGUMENT",
                f"max_steps must be at least 1, got {max_steps}",
            )
        if render_mode not in (None, "ansi"):
            raise _error(
                _hlogym.InvalidArgumentError,
                "INVALID_ARGUMENT",
                f"unknown render_mode {render_mode!r} (known: 'ansi')",
            )
        self.pipeline = pipeline
        self.evaluator = evaluator if evaluator is not None else f"model:{device}"
        self.numbering = numbering
        self.max_steps = max_steps
        self.verify = bool(verify)
        self.disabled = list(disabled)
        self.render_mode = render_mode
        self.observation_space = None  # graphs have no fixed-size space
        self.reward_range = (-math.inf, math.inf)
        self._template = None  # the module as loaded, never started
        self._baseline_seconds = None
        self._unoptimized_seconds = None
        self._core = None
        self._np_random = np.random.default_rng()
        self.action_space = MultiDiscrete([], self._np_random)
        self._live_obs = None
        self._over = True
        self._steps = 0
        self._seconds = None
        self._kernel_count = None
        if module is not None:
            self._load(module)

    # ---- Setup.
    def _load(self, module):
        self._template = _hlogym.Env(module, evaluator=self.evaluator, verify=self.verify)
        self._baseline_seconds = None
        self._unoptimized_seconds = None

    def _ensure_baselines(self):
        if self._baseline_seconds is not None:
            return
        self._unoptimized_seconds = self._template.seconds()
        baseline = self._template.fork()
        baseline.start_pipeline("xla-gpu")
        self._baseline_seconds = baseline.seconds()

    @property
    def np_random(self):
        """The generator ``action_space.sample()`` uses (seeded by reset)."""
        return self._np_random

    @property
    def unwrapped(self):
        return self

    @property
    def core(self):
        """The underlying ``hlogym.Env`` (None before the first reset)."""
        return self._core

    @property
    def baseline_seconds(self):
        return self._baseline_seconds

    @property
    def unoptimized_seconds(self):
        return self._unoptimized_seconds

    @property
    def state_hash(self):
        """DagHash of the current state (a tree-search key)."""
        self._require_core()
        return self._core.hash()

    def _require_core(self):
        if self._core is None:
            raise _error(
                _hlogym.FailedPreconditionError,
                "FAILED_PRECONDITION",
                "the environment has no state: call reset() first",
            )

    def reset(self, *, seed=None, options=None):
        """Starts an episode: returns (observation, info).

        options: {"module": HLO text or path} switches to another module.
        """
        options = dict(options or {})
        unknown = set(options) - {"module"}
        if unknown:
            raise _error(
                _hlogym.InvalidArgumentError,
                "INVALID_ARGUMENT",
                f"unknown reset option(s) {sorted(unknown)} (known: 'module')",
            )
        if "module" in options:
            self._load(options["module"])
        if self._template is None:
            raise _error(
                _hlogym.InvalidArgumentError,
                "INVALID_ARGUMENT",
                "no module: pass module=PATH_OR_TEXT to make() or "
                "reset(options={'module': ...})",
            )
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        self._ensure_baselines()
        core = self._template.fork()
        paused = core.start_pipeline(self.pipeline, self.disabled)
        self._core = core
        self._live_obs = None
        self._steps = 0
        self._over = not paused
        self._measure()
        self._set_action_space()
        info = self._info(no_effect=False, new_space=True)
        return self._observe(), info

    def step(self, action):
        """Applies one choice per alternatives node and runs the pipeline to
        its next pause: returns (obs, reward, terminated, truncated, info)."""
        self._require_core()
        if self._over:
            raise _error(
                _hlogym.FailedPreconditionError,
                "FAILED_PRECONDITION",
                "the episode is over (the pipeline is done or max_steps was "
                "reached): call reset()",
            )
        # The previous observation must keep describing the previous state.
        live = self._live_obs() if self._live_obs is not None else None
        if live is not None:
            live._detach()
        stats = self._core.apply(action)  # raises on a bad action, unchanged
        self._steps += 1
        before = self._seconds
        old_nvec = self.action_space.nvec
        try:
            paused = self._core.resume()
        except _hlogym.HloGymError as e:
            self._over = True
            self._set_action_space()
            info = self._info(no_effect=stats.non_original == 0, new_space=True)
            info["error_details"] = f"{type(e).__name__}: {e}"
            info["applied"] = _stats_dict(stats)
            return self._observe(), 0.0, True, False, info
        self._measure()
        terminated = not paused
        truncated = (
            not terminated and self.max_steps is not None and self._steps >= self.max_steps
        )
        self._over = terminated or truncated
        self._set_action_space()
        scale = self._baseline_seconds if self._baseline_seconds > 0 else 1.0
        reward = (before - self._seconds) / scale
        new_space = not np.array_equal(old_nvec, self.action_space.nvec)
        info = self._info(no_effect=stats.non_original == 0, new_space=new_space)
        info["applied"] = _stats_dict(stats)
        return self._observe(), float(reward), terminated, truncated, info

    def _measure(self):
        r = self._core.evaluate(state=True)
        self._seconds = r["total_seconds"]
        self._kernel_count = r["kernel_count"]

    def _set_action_space(self):
        nvec = [] if self._over else self._core.choice_counts()
        self.action_space = MultiDiscrete(nvec, self._np_random)

    def _observe(self):
        obs = LazyObservation(self._core, self.numbering)
        self._live_obs = weakref.ref(obs)
        return obs

    def _info(self, no_effect, new_space):
        counts = self.action_space.nvec
        return {
            "seconds": self._seconds,
            "baseline_seconds": self._baseline_seconds,
            "unoptimized_seconds": self._unoptimized_seconds,
            "kernel_count": self._kernel_count,
            "hash": self._core.hash(),
            "num_alternatives": int(counts.size),
            "choice_counts": counts.copy(),
            "action_mask": self.action_space.mask(),
            "action_had_no_effect": bool(no_effect),
            "new_action_space": bool(new_space),
            "step": self._steps,
            "done": self._core.done,
        }

    # ---- Observations and state.
    def observation(self, kind="graph", numbering=None):
        """The current state as ``kind``: "graph" (an hlogym.Observation),
        "summary" (a float32 vector) or "text" (HLO text)."""
        self._require_core()
        numbering = numbering or self.numbering
        if kind == "graph":
            return self._core.observation(numbering)
        if kind == "summary":
            return self._core.summary(numbering)
        if kind == "text":
            return self._core.export_text()
        raise _error(
            _hlogym.InvalidArgumentError,
            "INVALID_ARGUMENT",
            f"unknown observation kind {kind!r} (known: {', '.join(_OBSERVATION_KINDS)})",
        )

    def fork(self):
        """An independent copy of the environment in its current state (the
        random generator's state included). Forks share the evaluator's cache:
        use them from one thread."""
        new = copy.copy(self)
        if self._core is not None:
            new._core = self._core.fork()
        new._np_random = copy.deepcopy(self._np_random)
        new.action_space = MultiDiscrete(self.action_space.nvec, new._np_random)
        new._live_obs = None
        return new

    def render(self):
        if self.render_mode == "ansi":
            self._require_core()
            return self._core.export_text()
        return None

    def close(self):
        self._core = None
        self._live_obs = None
        self._over = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return (
            f"<HloGymEnv hlogym/{self.pipeline}-v{ENV_VERSION} "
            f"evaluator={self.evaluator!r} steps={self._steps}>"
        )


def _stats_dict(stats):
    return {
        "alternatives": stats.alternatives,
        "non_original": stats.non_original,
        "removed_instructions": stats.removed_instructions,
        "removed_fusion_parameters": stats.removed_fusion_parameters,
        "removed_computations": stats.removed_computations,
    }


_registered = False


def register_gymnasium():
    """Registers every id with gymnasium when it is importable; returns
    whether it did (or had already)."""
    global _registered
    if _gymnasium is None:
        return False
    if not _registered:
        for name in _hlogym.decision_pipelines():
            env_id = f"hlogym/{name}-v{ENV_VERSION}"
            if env_id in _gymnasium.registry:
                continue
            _gymnasium.register(
                id=env_id,
                entry_point="hlogym.gym_env:HloGymEnv",
                kwargs={"pipeline": name},
                # Graph observations have no gymnasium space to check.
                disable_env_checker=True,
            )
        _registered = True
    return True
