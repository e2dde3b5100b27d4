#!/usr/bin/env python3
"""Summaries of `hlogym pipeline DIR --json` runs, as markdown.

  fusion_report.py baseline RUN.jsonl [RUN.jsonl ...]
      per-module table and averages: unoptimized vs optimized kernels and
      modelled time (the baseline sanity table of docs/benchmarks.md)
  fusion_report.py compare A.jsonl B.jsonl
      per-module ratio of A's modelled time to B's (same files): average,
      min, max, share below 0.94 and above 1.06
"""
import json
import os
import statistics
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a run still being written
                rows[r["file"]] = r
    return rows


def baseline(paths):
    rows = []
    for p in paths:
        rows.extend(load(p).values())
    rows.sort(key=lambda r: r["file"])
    print("| module | kernels before | kernels after | modelled before (us) "
          "| modelled after (us) | speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        before, after = r["unoptimized_seconds"], r["seconds"]
        print("| %s | %d | %d | %.2f | %.2f | %.2fx |" % (
            os.path.basename(r["file"]), r["unoptimized_kernel_count"],
            r["kernel_count"], before * 1e6, after * 1e6,
            before / after if after > 0 else float("nan")))
    summarize(rows)


def summarize(rows):
    n = len(rows)
    kb = sum(r["unoptimized_kernel_count"] for r in rows)
    ka = sum(r["kernel_count"] for r in rows)
    ratios = [r["seconds"] / r["unoptimized_seconds"] for r in rows
              if r["unoptimized_seconds"] > 0]
    fewer = sum(r["kernel_count"] < r["unoptimized_kernel_count"] for r in rows)
    more = sum(r["kernel_count"] > r["unoptimized_kernel_count"] for r in rows)
    faster = sum(x < 1 for x in ratios)
    slower = sum(x > 1 for x in ratios)
    print()
    print("modules: %d; kernels %d -> %d (mean per module %.1f -> %.1f); "
          "fewer kernels in %d, more in %d" % (
              n, kb, ka, kb / max(n, 1), ka / max(n, 1), fewer, more))
    if ratios:
        print("modelled time ratio (optimized / unoptimized): mean %.3f, "
              "geometric mean %.3f, median %.3f; faster %d, slower %d" % (
                  statistics.mean(ratios),
                  statistics.geometric_mean([x for x in ratios if x > 0]),
                  statistics.median(ratios), faster, slower))


def compare(path_a, path_b):
    a, b = load(path_a), load(path_b)
    common = sorted(set(a) & set(b))
    ratios = []
    for f in common:
        if b[f]["seconds"] > 0:
            ratios.append(a[f]["seconds"] / b[f]["seconds"])
    n = len(ratios)
    if n == 0:
        print("no common modules")
        return
    below = sum(x < 0.94 for x in ratios)
    above = sum(x > 1.06 for x in ratios)
    print("| graphs | mean ratio | geometric mean | min | max | < 0.94 | > 1.06 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print("| %d | %.3f | %.3f | %.3f | %.3f | %.1f%% | %.1f%% |" % (
        n, statistics.mean(ratios),
                  statistics.geometric_mean([x for x in ratios if x > 0]),
        min(ratios), max(ratios), 100.0 * below / n, 100.0 * above / n))
    print()
    print("ratio = modelled time of %s / %s, per graph; only in one run: %d / %d"
          % (a[common[0]]["pipeline"], b[common[0]]["pipeline"],
             len(set(a) - set(b)), len(set(b) - set(a))))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "baseline":
        baseline(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
