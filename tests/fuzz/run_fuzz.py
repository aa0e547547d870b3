#!/usr/bin/env python3
"""Runs the result-file reader's libFuzzer target for a bounded time.

The seed corpus is made at test time: real result files written by libmemtrack.so for the
seed programs (one with leaks, one with allocator errors, one with descriptors left open),
plus truncated copies of the first. The seed programs run in a scratch directory. Inputs that once crashed the reader are kept in
tests/fuzz/regressions/ and replayed first. Exit status: 0 if nothing crashed.

Usage: run_fuzz.py --fuzzer BIN --runtime libmemtrack.so --seed-program "PROG ARGS" ... [--seconds N]
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def make_seeds(corpus, scratch, runtime, programs):
    """Runs each "PROG ARGS..." under the runtime in `scratch`; their result files seed the
    corpus."""
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(runtime),
               MEMTRACK_OPTIONS=f'result_dir="{corpus}"')
    for command in programs:
        subprocess.run(command.split(), env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
    files = sorted(glob.glob(os.path.join(corpus, "memtrack.*.mtr")))
    if len(files) < len(programs):
        sys.exit(f"FAIL: expected {len(programs)} result files in {corpus}, got {len(files)}")
    with open(files[0], "rb") as f:
        data = f.read()
    for cut in (16, 32, len(data) // 2, len(data) - 24, len(data) - 1):
        with open(os.path.join(corpus, f"cut-{cut}"), "wb") as f:
            f.write(data[:cut])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fuzzer", required=True)
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--seed-program", required=True, action="append",
                        help='"PROG ARGS..." to run for a seed result file; repeatable')
    parser.add_argument("--seconds", type=int, default=30)
    args = parser.parse_args()

    regressions = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "regressions", "*")))
    regressions = [r for r in regressions if os.path.isfile(r)]
    if regressions:
        replay = subprocess.run([args.fuzzer, *regressions])
        if replay.returncode != 0:
            print("FAIL: a recorded crash input crashes the reader again")
            return 1

    work = tempfile.mkdtemp(prefix="memtrack-fuzz-")
    try:
        corpus = os.path.join(work, "corpus")
        os.mkdir(corpus)
        scratch = os.path.join(work, "scratch")
        os.mkdir(scratch)
        make_seeds(corpus, scratch, args.runtime, args.seed_program)
        run = subprocess.run([args.fuzzer, corpus, f"-max_total_time={args.seconds}",
                              "-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1",
                              f"-artifact_prefix={work}/"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(run.stdout[-4000:])
        if run.returncode != 0:
            crashes = glob.glob(os.path.join(work, "crash-*")) + glob.glob(os.path.join(work, "oom-*"))
            kept = os.path.join(os.path.dirname(__file__), "regressions")
            for crash in crashes:
                shutil.copy(crash, kept)
            print(f"FAIL: the fuzzer found a crash; input(s) copied to {kept}: {crashes}")
            return 1
        print(f"PASS: {args.seconds} s of fuzzing found nothing")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
