#!/usr/bin/env python3
"""Runs programs under libmemtrack.so with check_unwinder=1 and fails if any stack the fast
unwinder captured differs from libgcc's _Unwind_Backtrace, or if a program compared nothing.

The runtime prints, per process, at exit:
  memtrack[PID]: unwinder check: N fast stacks compared with libgcc, M differed; F stacks went
  to libgcc; R reused from the memo
and, for the first differences, both stacks in full.

Usage: run_unwind_check.py --runtime LIBMEMTRACK [--emulator COMMAND] PROGRAM[@ARG]...
With --emulator ("qemu-aarch64 -L ROOT"), the programs and runtime were built for another
architecture and run under that emulator, the runtime's variables passed with its -E."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

SUMMARY = re.compile(r"unwinder check: (\d+) fast stacks compared with libgcc, (\d+) differed; "
                     r"(\d+) stacks went to libgcc; (\d+) reused from the memo")
TIMEOUT_SECONDS = 120


def run_one(runtime, program, tmp, emulator):
    env = dict(os.environ)
    env.pop("MEMTRACK_OPTIONS", None)
    env.pop("LD_PRELOAD", None)
    # Reports off: only the check's summary is wanted (it is printed either way).
    variables = {"LD_PRELOAD": runtime, "MEMTRACK_OPTIONS": "check_unwinder=1:report_at_exit=0"}
    argv = program.split("@")
    if emulator:
        passed = [arg for k, v in variables.items() for arg in ("-E", f"{k}={v}")]
        argv = emulator.split() + passed + argv
    else:
        env.update(variables)
    result = subprocess.run(argv, env=env, cwd=tmp, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            errors="replace", timeout=TIMEOUT_SECONDS)
    return result.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--emulator", help="run the programs under this emulator command")
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    failures = []
    totals = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        for program in args.programs:
            name = os.path.basename(program.split("@")[0])
            stderr = run_one(args.runtime, program, tmp, args.emulator)
            summaries = [tuple(map(int, m.groups())) for m in SUMMARY.finditer(stderr)]
            if not summaries:
                failures.append(f"{name}: no unwinder check summary in stderr:\n{stderr}")
                continue
            compared = sum(s[0] for s in summaries)
            differed = sum(s[1] for s in summaries)
            fallback = sum(s[2] for s in summaries)
            reused = sum(s[3] for s in summaries)
            totals = [totals[0] + compared, totals[1] + differed, totals[2] + fallback,
                      totals[3] + reused]
            print(f"{name}: {compared} stacks compared ({reused} of them reused from the memo), "
                  f"{differed} differed, {fallback} captured by libgcc "
                  f"({len(summaries)} processes)")
            if differed:
                failures.append(f"{name}: {differed} stacks differed:\n{stderr}")
            if compared == 0:
                failures.append(f"{name}: no stack was captured by the fast unwinder")
    print(f"total: {totals[0]} stacks compared ({totals[3]} reused from the memo), "
          f"{totals[1]} differed, {totals[2]} captured by libgcc")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
