"""HloGym: optimise XLA HLO graphs by deciding between rewrite alternatives.

Core (C++, ``hlogym._hlogym``):

* :class:`Env` -- a module, a decision pipeline and its pauses
  (``start_pipeline``, ``apply``/``step``, ``evaluate``, ``seconds``,
  ``hash``, ``fork``, ``save``/``load``, ``observation``, ``summary``).
* :class:`Observation` -- HloEnv's HloGraph as zero-copy numpy views.
* :func:`search` -- the search agents (``agents()``), with Python priors.
* :func:`passes`, :func:`pipelines`, :func:`decision_pipelines`,
  :func:`devices`.

Gymnasium-style (pure Python): :func:`make` (``hlogym/<pipeline>-v0``),
:class:`HloGymEnv`, :class:`MultiDiscrete`.

Errors: every failure raises a subclass of :class:`HloGymError` that also
derives from a builtin: ``InvalidArgumentError`` (ValueError),
``NotFoundError`` (LookupError), ``FailedPreconditionError``
(RuntimeError), ``UnimplementedError`` (NotImplementedError),
``DeadlineExceededError`` (TimeoutError), ``InternalError``
(RuntimeError). ``e.code`` names the status code ("INVALID_ARGUMENT").
"""

from ._hlogym import (
    SUMMARY_STATS,
    ApplyStats,
    DeadlineExceededError,
    EdgeFeatures,
    Env,
    EnvView,
    FailedPreconditionError,
    HloGymError,
    InternalError,
    InvalidArgumentError,
    NodeFeatures,
    NotFoundError,
    Observation,
    SearchResult,
    Snapshot,
    StepResult,
    UnimplementedError,
    agents,
    decision_pipelines,
    devices,
    num_opcodes,
    opcode_name,
    passes,
    pipelines,
    summary_size,
)
from ._hlogym import search as _search
from .gym_env import (
    ENV_VERSION,
    HloGymEnv,
    LazyObservation,
    MultiDiscrete,
    env_ids,
    make,
    register_gymnasium,
)

__version__ = "0.1.0"


def load(module, device="h100", evaluator=None, verify=False):
    """An :class:`Env` over ``module`` (HLO text or a path), priced with the
    model of ``device`` unless ``evaluator`` names another backend."""
    return Env(module, evaluator=evaluator or f"model:{device}", verify=verify)


def search(env, agent="fmcts", **kwargs):
    """Runs a search agent from ``env`` (an :class:`Env`, or an
    :class:`HloGymEnv`, whose current state is used); see
    ``hlogym._hlogym.search`` for the options. ``env`` is not changed."""
    core = env.core if isinstance(env, HloGymEnv) else env
    if core is None:
        raise FailedPreconditionError("the environment has no state: call reset() first")
    return _search(core, agent, **kwargs)


search.__doc__ += "\n\n" + (_search.__doc__ or "")

register_gymnasium()

__all__ = [
    "SUMMARY_STATS",
    "ApplyStats",
    "DeadlineExceededError",
    "EdgeFeatures",
    "ENV_VERSION",
    "Env",
    "EnvView",
    "FailedPreconditionError",
    "HloGymEnv",
    "HloGymError",
    "InternalError",
    "InvalidArgumentError",
    "LazyObservation",
    "MultiDiscrete",
    "NodeFeatures",
    "NotFoundError",
    "Observation",
    "SearchResult",
    "Snapshot",
    "StepResult",
    "UnimplementedError",
    "agents",
    "decision_pipelines",
    "devices",
    "env_ids",
    "load",
    "make",
    "num_opcodes",
    "opcode_name",
    "passes",
    "pipelines",
    "register_gymnasium",
    "search",
    "summary_size",
]
