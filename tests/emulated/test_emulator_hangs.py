#!/usr/bin/env python3
"""The emulated runners' verdicts when the emulator hangs (tests/e2e/emulator_run.py), with a
stand-in for qemu that hangs on chosen runs and hands the others to the real one:

- every run with the default CPU model hangs: the case runs with the fallback model and
  passes;
- every run hangs, with memtrack or without, on both models: the case is skipped (77), never
  passed;
- only the runs under memtrack hang: the case fails.

Usage: test_emulator_hangs.py --emulator "qemu-aarch64 -L ROOT" --runtime LIBMEMTRACK
       --program E2E_PROGRAM --source SOURCE --cli HOST_MEMTRACK --unwind-program PROGRAM
Standard library only."""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_E2E = os.path.join(HERE, "..", "e2e", "run_e2e.py")
RUN_UNWIND = os.path.join(HERE, "..", "unwind", "run_unwind_check.py")

# The stand-in, named like the real emulator (the fallback CPU model is chosen by that name).
# FAKE_HANG: "default" hangs every run without -cpu; "all" every run; "traced" every run with
# the runtime's variables.
STAND_IN = """#!/bin/sh
traced=no; cpu=no
for arg in "$@"; do
  case "$arg" in LD_PRELOAD=*|MEMTRACK_OPTIONS=*) traced=yes ;; -cpu) cpu=yes ;; esac
done
case "$FAKE_HANG/$traced/$cpu" in
  default/*/no|all/*/*|traced/yes/*) exec sleep 1000 ;;
esac
exec {real} "$@"
"""

EXPECTED = {"default": 0, "all": 77, "traced": 1}


def main():
    parser = argparse.ArgumentParser()
    for name in ("emulator", "runtime", "program", "source", "cli", "unwind-program"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    for name in ("runtime", "program", "source", "cli", "unwind_program"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    emulator = args.emulator.split()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        stand_in = os.path.join(tmp, os.path.basename(emulator[0]))
        with open(stand_in, "w", encoding="utf-8") as f:
            f.write(STAND_IN.format(real=subprocess.list2cmdline([emulator[0]])))
        os.chmod(stand_in, 0o755)
        fake = " ".join([stand_in] + emulator[1:])
        env = dict(os.environ, MEMTRACK_TEST_EMULATOR_TIMEOUT="3", MEMTRACK_TEST_EMULATOR_GDB="0")
        runs = {
            "e2e": [sys.executable, RUN_E2E, "--runtime", args.runtime, "--program",
                    args.program, "--source", args.source, "--cli", args.cli,
                    "--emulator", fake],
            "unwind check": [sys.executable, RUN_UNWIND, "--runtime", args.runtime,
                             "--emulator", fake, args.unwind_program],
        }
        for mode, expected in EXPECTED.items():
            for what, argv in runs.items():
                result = subprocess.run(argv, env=dict(env, FAKE_HANG=mode),
                                        stdin=subprocess.DEVNULL, capture_output=True,
                                        text=True, errors="replace", timeout=240)
                verdict = f"{what}, hang '{mode}': exit {result.returncode}, expected {expected}"
                print(verdict)
                if result.returncode != expected:
                    failures.append(f"{verdict}\n{result.stdout}{result.stderr}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
