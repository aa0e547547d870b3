#!/usr/bin/env python3
"""Runs a real program under valgrind's memcheck (--trace-children=yes) and under `memtrack
run`, and checks that both call the same number of bytes definitely lost, per process.
Only definitely lost bytes are compared: they do not depend on what the C runtime keeps
(reachable), and false pointers are rare enough in these small runs that memcheck's verdict
is stable (every case gave the same numbers over repeated runs when it was written).
Standard library only.

Usage: run_real_memcheck.py --case NAME --memtrack CLI --runtime SO --source-dir DIR
                            [--memcheck-only] [--valgrind PATH] [--keep-temp]

Processes of the two runs are matched by the base name of their executable; each must
appear exactly once in both (g++ -c runs three: the driver g++, cc1plus and as, and each is
compared on its own: a sum could hide two errors that cancel out, and each process's number
is deterministic). Blocks that memtrack counts as runtime_internal are left out of
memcheck's numbers by the same rule as in run_memcheck.py (both totals are printed).

The cases run in their own temporary directory with the same environment for both tools,
plus PYTHONMALLOC=malloc for python: Python's own small-object allocator lives in mmap'd
arenas that neither tool sees as blocks, and a Python built --with-valgrind switches it off
under valgrind only, which would make the two runs allocate differently.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import leak_kinds  # noqa: E402
from leak_kinds import ToolError  # noqa: E402

TIMEOUT_SECONDS = 300
SKIP = 77

PYTHON_SNIPPET = """
counts = {}
for word in ("alpha beta gamma delta " * 500).split():
    counts[word] = counts.get(word, 0) + 1
table = [[row * column for column in range(20)] for row in range(200)]
print(sorted(counts.items()), sum(map(sum, table)))
"""

CXX_SOURCE = """\
#include <vector>
int total(const std::vector<int>& values) {
  int sum = 0;
  for (int v : values) sum += v;
  return sum;
}
"""


def setup_python(_source_dir, _temp_dir, env):
    env["PYTHONMALLOC"] = "malloc"
    return [os.path.realpath(sys.executable), "-c", PYTHON_SNIPPET]


def setup_git(source_dir, temp_dir, _env):
    """git log on the source tree if it has commits, else on a fresh repository."""
    def git(args, cwd=None):
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)

    if git(["-C", source_dir, "rev-parse", "--verify", "-q", "HEAD"]).returncode == 0:
        return ["git", "-C", source_dir, "log", "--oneline", "-n", "20"]
    repo = os.path.join(temp_dir, "repo")
    git(["init", "-q", repo])
    for i in range(5):
        with open(os.path.join(repo, "notes.txt"), "a", encoding="utf-8") as f:
            f.write(f"note {i}\n")
        git(["add", "notes.txt"], cwd=repo)
        commit = git(["-c", "user.name=memtrack", "-c", "user.email=memtrack@example.invalid",
                      "commit", "-q", "-m", f"Add note {i}"], cwd=repo)
        if commit.returncode != 0:
            raise ToolError(f"cannot create the test repository: {commit.stderr}")
    return ["git", "-C", repo, "log", "--oneline", "-n", "20"]


def setup_gxx(_source_dir, temp_dir, _env):
    with open(os.path.join(temp_dir, "sample.cpp"), "w", encoding="utf-8") as f:
        f.write(CXX_SOURCE)
    return ["g++", "-O0", "-c", "sample.cpp", "-o", "sample.o"]


# name -> (setup(source_dir, temp_dir, env) -> argv, the processes it runs (base names))
CASES = {
    "python": (setup_python, None),  # one process, named after the interpreter's file
    "git_log": (setup_git, ["git"]),
    "gxx": (setup_gxx, ["g++", "cc1plus", "as"]),
    "ls": (lambda _s, _t, _e: ["ls", "-la", "/usr/bin"], ["ls"]),
}


def memcheck_definite(args, argv, env, temp_dir, failures):
    """{process name: (program-only definite (bytes, blocks), all definite)}."""
    processes, summaries, _ = leak_kinds.run_memcheck(
        args.valgrind, argv, temp_dir, temp_dir, TIMEOUT_SECONDS, env,
        extra_options=["--trace-children=yes"])
    by_name = {}
    for process in processes:
        name = leak_kinds.program_name(process.argv[0] if process.argv else "")
        if name in by_name:
            failures.append(f"memcheck: two processes named {name}")
        by_name[name] = process
    # The text run is a second run: match its processes by name too, then cross-check.
    for summary in summaries:
        name = leak_kinds.program_name(summary.command.split(" ")[0])
        if name not in by_name:
            raise ToolError(f"memcheck's text run has a process {name!r} its XML run lacks")
        leak_kinds.agree_or_die(by_name[name], summary.totals, f"memcheck ({name})")
    if len(summaries) != len(by_name):
        raise ToolError(f"memcheck's XML run has {len(by_name)} processes, its text run "
                        f"{len(summaries)}")
    for name, process in by_name.items():
        print(f"memcheck definitely lost records of {name} (pid {process.pid}):")
        for record in process.records:
            if record.kind == "definite":
                print(f"  {record.describe()}")
    return {name: (p.totals(program_only=True).get("definite"),
                   p.totals(program_only=False).get("definite"))
            for name, p in by_name.items()}


def memtrack_definite(args, argv, env, temp_dir, failures):
    """{process name: definite (bytes, blocks)}."""
    processes, _ = leak_kinds.run_memtrack(args.memtrack, args.runtime, argv, temp_dir,
                                           temp_dir, TIMEOUT_SECONDS, env)
    result = {}
    for process in processes:
        command = process.get("command") or [""]
        name = leak_kinds.program_name(command[0])
        if name in result:
            failures.append(f"memtrack: two processes named {name}")
        totals, problems, notes = leak_kinds.memtrack_totals(process)
        failures.extend(f"memtrack ({name}): {p}" for p in problems)
        for note in notes:
            print(f"note: memtrack ({name}): {note}")
        result[name] = totals.get("definite")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("--memtrack")
    parser.add_argument("--runtime")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("--memcheck-only", action="store_true")
    parser.add_argument("--keep-temp", action="store_true")
    args = parser.parse_args()
    if not args.memcheck_only and not args.memtrack:
        parser.error("--memtrack is required unless --memcheck-only")
    if shutil.which(args.valgrind) is None:
        print(f"SKIP: {args.valgrind} not found")
        return SKIP

    setup, expected_names = CASES[args.case]
    temp_dir = tempfile.mkdtemp(prefix=f"memtrack-memcheck-real-{args.case}-")
    failures = []
    try:
        env = dict(os.environ)
        if args.runtime:  # what memtrack's run sets, in both runs: the environments are equal
            env["MEMTRACK_RUNTIME"] = os.path.abspath(args.runtime)
        argv = setup(os.path.abspath(args.source_dir), temp_dir, env)
        if expected_names is None:
            expected_names = [leak_kinds.program_name(argv[0])]
        print(f"command: {' '.join(argv)}")
        memcheck = memcheck_definite(args, argv, env, temp_dir, failures)
        if sorted(memcheck) != sorted(expected_names):
            failures.append(f"memcheck saw processes {sorted(memcheck)}, expected "
                            f"{sorted(expected_names)}")
        memtrack = None
        if not args.memcheck_only:
            memtrack = memtrack_definite(args, argv, env, temp_dir, failures)
            if sorted(memtrack) != sorted(expected_names):
                failures.append(f"memtrack saw processes {sorted(memtrack)}, expected "
                                f"{sorted(expected_names)}")
        print(f"\n{'process':10} {'memcheck (all)':>18} {'memcheck (program)':>18} "
              f"{'memtrack':>18}  definitely lost (bytes / blocks; bytes are compared)")
        for name in expected_names:
            program, everything = memcheck.get(name, (None, None))
            mine = memtrack.get(name) if memtrack is not None else None
            if memtrack is None:
                verdict = "memtrack not run"
            elif program is None or mine is None:
                verdict = "missing"
            elif mine[0] == program[0]:
                verdict = "ok"
            else:
                verdict = "FAIL"
                failures.append(f"{name}: memtrack says {mine[0]} bytes definitely lost, "
                                f"memcheck says {program[0]}")

            def show(numbers):
                return f"{numbers[0]} B / {numbers[1]}" if numbers is not None else "-"
            print(f"{name:10} {show(everything):>18} {show(program):>18} {show(mine):>18}  "
                  f"{verdict}")
    except ToolError as e:
        failures.append(str(e))
    return leak_kinds.finish(failures, temp_dir, args.keep_temp)


if __name__ == "__main__":
    sys.exit(main())
