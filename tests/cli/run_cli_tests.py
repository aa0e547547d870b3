#!/usr/bin/env python3
"""Behaviour and golden tests of the memtrack command: exit codes, text/JSON reports,
suppressions, processes, dlopen, result files, the installed tree, signals, the
environment, allocator misuse errors, descriptors left open and the event log. Standard
library only. ctest runs one test per call (cli_behaviour.NAME), each in its own temporary
directory, so they can run in parallel.

Usage:
  run_cli_tests.py [TEST...]           run the tests (all without names); exit 1 on failure
  run_cli_tests.py --update [TEST...]  rewrite the golden files of these tests (golden/*)
  run_cli_tests.py --list              print the test names
Paths default to the release build of this checkout (build/release); CMake passes them.

The tests live in test_*.py beside this file, one module per area, and golden files in
golden/NAME.{stdout,stderr,exit}, normalized: <PROGRAMS>, <BUILD>, <SRC>, <TMP> stand for
the directories, <PID1>, <PID2>, ... for pids in order of appearance, <ADDR> for JSON code
addresses. After an intended change of the output, run with --update and review the diff.
"""

import argparse
import os
import shutil
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cli_harness  # noqa: E402
import test_allocators  # noqa: E402,F401
import test_annotations  # noqa: E402,F401
import test_attach  # noqa: E402,F401
import test_ci_recipes  # noqa: E402,F401
import test_crash  # noqa: E402,F401
import test_ctest  # noqa: E402,F401
import test_diff  # noqa: E402,F401  (each module registers its tests)
import test_dlopen  # noqa: E402,F401
import test_edges  # noqa: E402,F401
import test_heap_errors  # noqa: E402,F401
import test_heap_errors_full  # noqa: E402,F401
import test_environment  # noqa: E402,F401
import test_exec_env  # noqa: E402,F401
import test_exit_codes  # noqa: E402,F401
import test_fds  # noqa: E402,F401
import test_formats  # noqa: E402,F401
import test_golden  # noqa: E402,F401
import test_html  # noqa: E402,F401
import test_live  # noqa: E402,F401
import test_lsan_options  # noqa: E402,F401
import test_install  # noqa: E402,F401
import test_misuse  # noqa: E402,F401
import test_profile  # noqa: E402,F401
import test_processes  # noqa: E402,F401
import test_pprof_http  # noqa: E402,F401
import test_profiles  # noqa: E402,F401
import test_readme  # noqa: E402,F401
import test_runtime_reports  # noqa: E402,F401
import test_scan_edges  # noqa: E402,F401
import test_startup  # noqa: E402,F401
import test_stress  # noqa: E402,F401
import test_static_link  # noqa: E402,F401
import test_result_files  # noqa: E402,F401
import test_retainers  # noqa: E402,F401
import test_sarif  # noqa: E402,F401
import test_suppressions  # noqa: E402,F401
import test_ui  # noqa: E402,F401
import test_valgrind_cli  # noqa: E402,F401
import test_valgrind_xml  # noqa: E402,F401


def parse_args():
    source_dir = os.path.dirname(os.path.dirname(HERE))
    build_dir = os.path.join(source_dir, "build", "release")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memtrack", default=os.path.join(build_dir, "cli", "memtrack"))
    parser.add_argument("--programs", default=os.path.join(build_dir, "tests", "cli"),
                        help="directory of the cli_* test programs")
    parser.add_argument("--build-dir", default=build_dir)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--update", action="store_true", help="rewrite golden files")
    parser.add_argument("--keep-temp", action="store_true",
                        help="keep each test's temporary directory")
    parser.add_argument("--list", action="store_true", help="print the test names")
    parser.add_argument("--check-registered", action="store_true",
                        help="fail unless the TEST names are exactly the tests defined here")
    parser.add_argument("tests", nargs="*", metavar="TEST")
    args = parser.parse_args()
    args.source_dir = source_dir
    return args


def check_registered(names):
    """CMake's list (CLI_TESTS in CMakeLists.txt) must name every test exactly once."""
    defined, given = set(cli_harness.TESTS), set(names)
    problems = [f"not registered in tests/cli/CMakeLists.txt: {n}" for n in sorted(defined - given)]
    problems += [f"registered but not defined: {n}" for n in sorted(given - defined)]
    problems += [f"registered twice: {n}" for n in sorted(given) if names.count(n) > 1]
    for p in problems:
        print(p)
    return 1 if problems else 0


def run_test(name, paths, keep_temp):
    tmp = tempfile.mkdtemp(prefix=f"memtrack-cli-{name}-")
    ctx = cli_harness.Context(paths, name, tmp)
    try:
        cli_harness.TESTS[name](ctx)
    except cli_harness.Failure as e:
        ctx.failures.append(str(e))
    except Exception:  # a bug in the test itself: show where
        ctx.failures.append("the test raised:\n" + traceback.format_exc())
    for failure in ctx.failures:
        print(f"FAIL {name}: {failure}\n")
    if keep_temp:
        print(f"{name}: temporary files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'FAILED' if ctx.failures else 'PASSED'}: {name}"
          + (f" ({len(ctx.failures)} failed checks)" if ctx.failures else ""))
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
    paths = cli_harness.Paths(memtrack=os.path.abspath(args.memtrack),
                              programs=os.path.abspath(args.programs),
                              build_dir=os.path.abspath(args.build_dir),
                              source_dir=args.source_dir, cmake=args.cmake, update=args.update)
    names = args.tests or sorted(cli_harness.TESTS)
    results = [run_test(name, paths, args.keep_temp) for name in names]
    if len(names) > 1:
        print(f"{results.count(True)} of {len(names)} tests passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
