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
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import emulator_run  # noqa: E402

SUMMARY = re.compile(r"unwinder check: (\d+) fast stacks compared with libgcc, (\d+) differed; "
                     r"(\d+) stacks went to libgcc; (\d+) reused from the memo")
TIMEOUT_SECONDS = 120
SKIPPED = 77  # ctest SKIP_RETURN_CODE: the emulator cannot run the programs here


def command(program, emulator, variables):
    """(argv, env) running `program` (PROGRAM@ARG...) with `variables`, under `emulator`
    (a list, or None) through its -E."""
    env = dict(os.environ)
    env.pop("MEMTRACK_OPTIONS", None)
    env.pop("LD_PRELOAD", None)
    argv = program.split("@")
    if emulator:
        passed = [arg for k, v in variables.items() for arg in ("-E", f"{k}={v}")]
        return emulator + passed + argv, env
    env.update(variables)
    return argv, env


def run_one(runtime, program, tmp, emulator):
    """The program's stderr under the runtime, or None if the emulator cannot run it on this
    host (it hangs on the program without memtrack too: tests/e2e/emulator_run.py), and the
    emulator command to use from then on (with the fallback CPU model once the default one
    hung on a plain program). Exits with a failure if only the run under memtrack hangs,
    twice."""
    # Reports off: only the check's summary is wanted (it is printed either way).
    variables = {"LD_PRELOAD": runtime, "MEMTRACK_OPTIONS": "check_unwinder=1:report_at_exit=0"}
    timeout = emulator_run.TIMEOUT_SECONDS if emulator else TIMEOUT_SECONDS
    result, _ = emulator_run.run(*command(program, emulator, variables), tmp, timeout)
    if not isinstance(result, emulator_run.Hang):
        return result.stderr, emulator
    print(f"the run under memtrack hung:\n{result.describe()}", file=sys.stderr)
    if emulator:
        plain, _ = emulator_run.run(*command(program, emulator, {}), tmp, timeout)
        if isinstance(plain, emulator_run.Hang):
            fallback = emulator_run.with_fallback_cpu(emulator)
            print(f"the plain program hangs too:\n{plain.describe()}", file=sys.stderr)
            if fallback is None:
                return None, emulator
            print(f"trying again with {' '.join(fallback[:3])}", file=sys.stderr)
            plain, _ = emulator_run.run(*command(program, fallback, {}), tmp, timeout)
            if isinstance(plain, emulator_run.Hang):
                return None, emulator
            emulator = fallback
        result, _ = emulator_run.run(*command(program, emulator, variables), tmp, timeout)
        if not isinstance(result, emulator_run.Hang):
            return result.stderr, emulator
        sys.exit(f"FAIL: under memtrack, while the plain program finished: "
                 f"{result.describe()}\n{emulator_run.host_description()}")
    sys.exit(f"FAIL: {result.describe()}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--emulator", help="run the programs under this emulator command")
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    failures = []
    cannot_run = []
    totals = [0, 0, 0, 0]
    emulator = args.emulator.split() if args.emulator else None
    with tempfile.TemporaryDirectory() as tmp:
        for program in args.programs:
            name = os.path.basename(program.split("@")[0])
            stderr, emulator = run_one(args.runtime, program, tmp, emulator)
            if stderr is None:
                print(f"{name}: not checked: {emulator_run.emulator_version(emulator)} did not "
                      f"finish it without memtrack either ({emulator_run.host_description()})")
                cannot_run.append(name)
                continue
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
    if failures:
        return 1
    if cannot_run and len(cannot_run) == len(args.programs):
        print("SKIP: the emulator could not run any of the programs on this host")
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main())
