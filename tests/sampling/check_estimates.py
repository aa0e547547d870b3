#!/usr/bin/env python3
"""The sampled mode's estimates by site against the truth (docs/sampling.md, "Estimates and
their error"): runs tests/sampling/two_sites.c under `memtrack run --sample=SIZE
--sample-seed=N` for seeds 1..RUNS, and checks that the blocks left at exit are counted exactly in every run and
that each site's estimated bytes is within 10% of its truth in at least 95% of the runs.
Standard library only.

Usage: check_estimates.py MEMTRACK PROGRAM [--runs 100] [--sample 4KiB]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

PER_ROUND = 16 * 4096 + 1024 * 64 + 16384 * 4 + (1 << 20)
BLOCKS_PER_ROUND = 4096 + 64 + 4 + 1
TRUTH = {"big_site": 100 * PER_ROUND, "small_site": PER_ROUND}


def site_estimates(document):
    process = document["processes"][0]
    estimates = {}
    for group in process["leaks"]:
        if group.get("sampling") != "estimated" or not group["stack"]:
            continue
        for frame in group["stack"]:
            if frame["function"] in TRUTH:
                estimates[frame["function"]] = (estimates.get(frame["function"], 0)
                                                + group["estimated_bytes"])
                break
    return process["summary"], estimates


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("memtrack")
    parser.add_argument("program")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--sample", default="4KiB")
    args = parser.parse_args()
    failures, errors = [], {site: [] for site in TRUTH}
    with tempfile.TemporaryDirectory(prefix="memtrack-sampling-") as temp:
        for seed in range(1, args.runs + 1):
            path = os.path.join(temp, f"{seed}.json")
            run = subprocess.run([args.memtrack, "run", f"--sample={args.sample}",
                                  f"--sample-seed={seed}", f"--json={path}", "--",
                                  args.program], capture_output=True, text=True, timeout=300)
            if run.returncode != 0 or run.stdout != "done\n":
                sys.exit(f"seed {seed}: exit {run.returncode}\n{run.stderr[-3000:]}")
            with open(path, encoding="utf-8") as f:
                summary, estimates = site_estimates(json.load(f))
            # Nearly all definitely lost; the last block's address may still be in a register
            # or on the stack (reachable or possibly lost), exactly as in the full mode.
            kinds = ("definite", "indirect", "possible", "reachable")
            exact = (sum(summary[f"{k}_bytes"] for k in kinds),
                     sum(summary[f"{k}_blocks"] for k in kinds))
            if exact != (101 * PER_ROUND, 101 * BLOCKS_PER_ROUND):
                failures.append(f"seed {seed}: blocks left {exact}, truth "
                                f"{(101 * PER_ROUND, 101 * BLOCKS_PER_ROUND)}")
            for site, truth in TRUTH.items():
                errors[site].append(abs(estimates.get(site, 0) / truth - 1))
    for site, values in errors.items():
        values.sort()
        p95 = values[int(0.95 * len(values)) - 1]
        print(f"{site}: truth {TRUTH[site]} bytes; relative error median "
              f"{values[len(values) // 2]:.2%}, 95th percentile {p95:.2%}, worst {values[-1]:.2%}")
        if p95 > 0.10:
            failures.append(f"{site}: 95th percentile of the relative error {p95:.2%} > 10%")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
