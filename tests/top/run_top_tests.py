#!/usr/bin/env python3
"""Tests of `memtrack top` from the command line: --once and --json on the fixture tree
(fixtures/proc, golden files in golden/), usage errors, the real /proc, and the full-screen
view driven through tmux. Standard library only; reuses the CLI tests' harness
(tests/cli/cli_harness.py). ctest runs one test per call (top.NAME).

Usage:
  run_top_tests.py [TEST...]           run the tests (all without names); exit 1 on failure
  run_top_tests.py --update [TEST...]  rewrite the golden files of these tests (golden/*)
  run_top_tests.py --list              print the test names
Paths default to the release build of this checkout (build/release); CMake passes them.
"""

import argparse
import os
import shutil
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "cli"))

import cli_harness  # noqa: E402
import top_harness  # noqa: E402
import test_top_once  # noqa: E402,F401  (each module registers its tests)
import test_top_live  # noqa: E402,F401


def parse_args():
    build_dir = os.path.join(SOURCE_DIR, "build", "release")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memtrack", default=os.path.join(build_dir, "cli", "memtrack"))
    parser.add_argument("--grower", default=os.path.join(build_dir, "tests", "top", "top_grower"))
    parser.add_argument("--update", action="store_true", help="rewrite golden files")
    parser.add_argument("--keep-temp", action="store_true")
    parser.add_argument("--list", action="store_true", help="print the test names")
    parser.add_argument("--check-registered", action="store_true",
                        help="fail unless the TEST names are exactly the tests defined here")
    parser.add_argument("tests", nargs="*", metavar="TEST")
    return parser.parse_args()


def check_registered(names):
    """CMake's list (TOP_TESTS in CMakeLists.txt) must name every test exactly once."""
    defined, given = set(cli_harness.TESTS), set(names)
    problems = [f"not registered in tests/top/CMakeLists.txt: {n}" for n in sorted(defined - given)]
    problems += [f"registered but not defined: {n}" for n in sorted(given - defined)]
    problems += [f"registered twice: {n}" for n in sorted(given) if names.count(n) > 1]
    for p in problems:
        print(p)
    return 1 if problems else 0


def run_test(name, paths, keep_temp):
    tmp = tempfile.mkdtemp(prefix=f"memtrack-top-{name}-")
    ctx = top_harness.TopContext(paths, name, tmp)
    try:
        cli_harness.TESTS[name](ctx)
    except cli_harness.Failure as e:
        ctx.failures.append(str(e))
    except top_harness.Skip as e:
        print(f"SKIPPED: {name}: {e}")
        shutil.rmtree(tmp, ignore_errors=True)
        return True
    except Exception:  # a bug in the test itself: show where
        ctx.failures.append("the test raised:\n" + traceback.format_exc())
    finally:
        ctx.cleanup()
    for failure in ctx.failures:
        print(f"FAIL {name}: {failure}\n")
    if keep_temp:
        print(f"{name}: temporary files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'FAILED' if ctx.failures else 'PASSED'}: {name}")
    return not ctx.failures


def main():
    args = parse_args()
    if args.list:
        print("\n".join(sorted(cli_harness.TESTS)))
        return 0
    if args.check_registered:
        return check_registered(args.tests)
    unknown = [n for n in args.tests if n not in cli_harness.TESTS]
    if unknown:
        print(f"unknown test(s): {' '.join(unknown)} (see --list)")
        return 2
    paths = top_harness.TopPaths(memtrack=os.path.abspath(args.memtrack),
                                 programs=os.path.dirname(os.path.abspath(args.grower)),
                                 build_dir="", source_dir=SOURCE_DIR, cmake="cmake",
                                 update=args.update, grower=os.path.abspath(args.grower))
    names = args.tests or sorted(cli_harness.TESTS)
    results = [run_test(name, paths, args.keep_temp) for name in names]
    if len(names) > 1:
        print(f"{results.count(True)} of {len(names)} tests passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
