"""Pick-first: take the first candidate of every alternatives node, in the
gym loop and with the C++ agent (the two agree).

    PYTHONPATH=build-py/python python3 python/examples/pick_first.py [module.hlo]
"""

import numpy as np

from _common import module_argument, report

import hlogym


def main():
    env = hlogym.make("hlogym/general-fusion-v0", module=module_argument())
    obs, info = env.reset()
    while not info["done"]:
        # Operand 1 is the first candidate; 0 keeps the original.
        action = np.minimum(1, env.action_space.nvec - 1)
        obs, reward, terminated, truncated, info = env.step(action)
    report("pick-first (gym loop)", info["seconds"], info["baseline_seconds"], info["unoptimized_seconds"])

    start = hlogym.load(module_argument())
    start.start_pipeline("general-fusion")
    result = hlogym.search(start, "pick-first")
    print(f"pick-first agent: {result.best_seconds * 1e6:.2f} us, same end state: {result.best.hash() == env.state_hash}")


if __name__ == "__main__":
    main()
