"""A random agent in the Gymnasium-style loop.

    PYTHONPATH=build-py/python python3 python/examples/random_agent.py [module.hlo] [seed]
"""

import sys

from _common import module_argument, report

import hlogym


def main():
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with hlogym.make("hlogym/general-fusion-v0", module=module_argument()) as env:
        obs, info = env.reset(seed=seed)
        total, steps, terminated, truncated = 0.0, 0, info["done"], False
        while not (terminated or truncated):
            action = env.action_space.sample()  # seeded by reset(seed=...)
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            steps += 1
            print(
                f"step {steps}: {len(action)} decisions, reward {reward:+.4f}, "
                f"{info['kernel_count']} kernels"
            )
        print(f"{steps} steps, return {total:+.4f}")
        report("random agent", info["seconds"], info["baseline_seconds"], info["unoptimized_seconds"])


if __name__ == "__main__":
    main()
