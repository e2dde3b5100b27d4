"""f-MCTS guided by a Python prior that prefers fusing.

The prior reads the graph observation of each state it is asked about: a
candidate (operand >= 1) of an alternatives node is a fusion, so it gets
more weight than the original (operand 0), the more so when the node's
tensors are large. The value estimate is neutral.

    PYTHONPATH=build-py/python python3 python/examples/fmcts_with_prior.py [module.hlo] [budget]
"""

import sys

import numpy as np

from _common import module_argument, report

import hlogym


def fusion_prior(state):
    obs = state.observation()
    sizes = obs.node_features.out_tensor_sizes
    priors = []
    for node, count in zip(obs.alternative_indices, state.choice_counts()):
        # Larger tensors: fusing saves more memory traffic.
        bias = 2.0 + np.log10(1.0 + float(sizes[node]))
        priors.append(np.concatenate([[1.0], np.full(count - 1, bias)]))
    return priors, 0.0


def fusion_prior_with_value(state):
    """The same prior; the value is the gain of fusing everything from here
    (a pick-first rollout, in modelled seconds)."""
    priors, _ = fusion_prior(state)
    rollout = state.fork()
    start = rollout.seconds()
    while rollout.paused:
        rollout.step(np.minimum(1, rollout.choice_counts() - 1))
    return priors, start - rollout.seconds()


def main():
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    env = hlogym.make("hlogym/general-fusion-v0", module=module_argument())
    obs, info = env.reset(seed=0)
    calls = []

    def prior(state):
        calls.append(1)
        return fusion_prior_with_value(state)

    result = hlogym.search(env.core, "fmcts", budget=budget, seed=0, prior=prior)
    print(
        f"f-MCTS: {len(result.trajectory)} steps, {result.evaluations} evaluations, "
        f"{len(calls)} prior calls, {result.search_seconds:.2f} s"
    )
    # Replay the decisions in the gym env: the rewards add up to the gain.
    total = 0.0
    for decisions in result.trajectory:
        obs, reward, terminated, truncated, info = env.step(decisions)
        total += reward
    print(f"return {total:+.4f}")
    report("f-MCTS with a Python prior", info["seconds"], info["baseline_seconds"], info["unoptimized_seconds"])


if __name__ == "__main__":
    main()
