#!/usr/bin/env python3
"""Runs a real program plainly and under libmemtrack.so and checks that the runtime changes
nothing the program shows: stdout, exit status, the program's own stderr and (for the
compiler) the files it writes are identical. Every process under the runtime must write a
complete, well-formed report; reports go to one log file per process (log_file=...%p), so
processes that run at the same time cannot interleave them. Standard library only.

Usage: run_real.py --runtime libmemtrack.so --case NAME --source-dir DIR [--keep-temp]
Each case gets its own temporary directory; plain and traced runs work in its plain/ and
traced/ subdirectories.
"""

import argparse
import difflib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import memtrack_report  # noqa: E402

TIMEOUT_SECONDS = 240

PYTHON_SNIPPET = """
import collections
words = [f"w{i % 5003}-{i % 7}" for i in range(300000)]
counts = collections.Counter(words)
index = {}
for position, word in enumerate(words):
    index.setdefault(word, []).append(position)
table = [[row * column for column in range(60)] for row in range(3000)]
merged = {**{k: len(v) for k, v in index.items()}, **{str(i): i for i in range(20000)}}
top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:3]
print(len(index), sum(map(len, index.values())), len(merged), top)
print(sum(sum(row) for row in table), sorted(merged)[:3])
"""

CXX_SOURCE = """
#include <algorithm>
#include <map>
#include <string>
#include <vector>

template <typename T> T total(const std::vector<T>& values) {
  T sum{};
  for (const T& v : values) sum += v;
  return sum;
}

std::map<std::string, int> count_words(const std::vector<std::string>& words) {
  std::map<std::string, int> counts;
  for (const std::string& w : words) ++counts[w];
  return counts;
}

int run(int n) {
  std::vector<std::string> words;
  for (int i = 0; i < n; ++i) words.push_back("w" + std::to_string(i % 17));
  std::vector<int> sizes;
  for (const auto& [word, count] : count_words(words)) sizes.push_back(count + int(word.size()));
  std::sort(sizes.begin(), sizes.end());
  return total(sizes);
}
"""


def git(args, cwd=None):
    """Runs git for setting up a case (never under the runtime); returns the result."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def setup_git(source_dir, temp_dir):
    """The repository to read: the source tree if it has commits, else a fresh one."""
    if git(["-C", source_dir, "rev-parse", "--verify", "-q", "HEAD"]).returncode == 0:
        return ["git", "-C", source_dir, "log", "--oneline", "-n", "50"]
    repo = os.path.join(temp_dir, "repo")
    os.makedirs(repo)
    git(["init", "-q", repo])
    for i in range(5):
        with open(os.path.join(repo, "notes.txt"), "a", encoding="utf-8") as f:
            f.write(f"note {i}\n")
        git(["add", "notes.txt"], cwd=repo)
        commit = git(["-c", "user.name=memtrack", "-c", "user.email=memtrack@example.invalid",
                      "commit", "-q", "-m", f"Add note {i}"], cwd=repo)
        if commit.returncode != 0:
            sys.exit(f"cannot create the test repository: {commit.stderr}")
    return ["git", "-C", repo, "log", "--oneline", "-n", "50"]


def setup_gxx(_source_dir, temp_dir):
    source = os.path.join(temp_dir, "sample.cpp")
    with open(source, "w", encoding="utf-8") as f:
        f.write(CXX_SOURCE)
    return ["g++", "-O2", "-c", source, "-o", "sample.o"]


def setup_sort(_source_dir, temp_dir):
    """10 MiB of lines in a fixed pseudo-random order (same seed, same file)."""
    rng = random.Random(20240607)
    path = os.path.join(temp_dir, "input.txt")
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    size = 0
    with open(path, "w", encoding="ascii") as f:
        while size < 10 * 1024 * 1024:
            line = f"{rng.randrange(10**9):09d} {rng.choice(words)} {rng.random():.6f}\n"
            f.write(line)
            size += len(line)
    return ["sort", path]


# name -> (setup(source_dir, temp_dir) -> argv, minimum number of reports, files to compare)
CASES = {
    "ls": (lambda _s, _t: ["ls", "-la", "/usr/bin"], 1, []),
    "python": (lambda _s, _t: [sys.executable, "-c", PYTHON_SNIPPET], 1, []),
    "git_log": (setup_git, 1, []),
    "gxx": (setup_gxx, 3, ["sample.o"]),  # the g++ driver, cc1plus and as
    "sort": (setup_sort, 1, []),
}


def run(argv, env, cwd):
    return memtrack_report.run_process(argv, env, cwd, TIMEOUT_SECONDS, text=False)


def diff(what, plain, traced):
    """A short unified diff of two byte strings."""
    lines = difflib.unified_diff(plain.decode(errors="replace").splitlines(True),
                                 traced.decode(errors="replace").splitlines(True),
                                 "plain run", "under memtrack")
    return f"{what} differs from the plain run:\n" + "".join(list(lines)[:40])


def check_reports(report_dir, min_reports, failures):
    """Every log file holds one complete report of the pid in its name."""
    pids = []
    for name in sorted(os.listdir(report_dir)):
        m = re.fullmatch(r"memtrack\.(\d+)\.log", name)
        with open(os.path.join(report_dir, name), encoding="utf-8", errors="replace") as f:
            output = memtrack_report.parse(f.read())
        failures += [f"{name}: {e}" for e in output.errors]
        report_pids = [r.pid for r in output.reports]
        if m is None or report_pids != [int(m.group(1))]:
            failures.append(f"{name}: expected one report of its pid, found pids {report_pids}")
        pids += report_pids
    if len(pids) < min_reports:
        failures.append(f"{len(pids)} report(s) (pids {pids}), expected at least {min_reports}")
    return pids


def check(args, temp_dir):
    setup, min_reports, files = CASES[args.case]
    argv = setup(os.path.abspath(args.source_dir), temp_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MEMTRACK_OPTIONS")}
    env.update(LC_ALL="C", TMPDIR=temp_dir, PYTHONHASHSEED="0", GIT_PAGER="cat")
    for sub in ("plain", "traced", "reports"):
        os.makedirs(os.path.join(temp_dir, sub))
    plain, _ = run(argv, env, os.path.join(temp_dir, "plain"))
    report_dir = os.path.join(temp_dir, "reports")
    env.update(LD_PRELOAD=os.path.abspath(args.runtime),
               MEMTRACK_OPTIONS=f"log_file={report_dir}/memtrack.%p.log")
    traced, traced_pid = run(argv, env, os.path.join(temp_dir, "traced"))

    failures = []
    if plain.returncode != 0:
        failures.append(f"the plain run failed (exit {plain.returncode}): "
                        f"{plain.stderr.decode(errors='replace')[:2000]}")
    if traced.returncode != plain.returncode:
        failures.append(f"exit status {traced.returncode}, plain run {plain.returncode}")
    if traced.stdout != plain.stdout:
        failures.append(diff("stdout", plain.stdout, traced.stdout))
    stderr = memtrack_report.parse(traced.stderr.decode(errors="replace"))
    failures += [f"runtime diagnostic: {d.rstrip()}" for d in stderr.diagnostics]
    if stderr.reports:
        failures.append("report lines on stderr although log_file is set")
    if stderr.other.encode() != plain.stderr:
        failures.append(diff("stderr", plain.stderr, stderr.other.encode()))
    for name in files:
        paths = [os.path.join(temp_dir, sub, name) for sub in ("plain", "traced")]
        contents = [open(p, "rb").read() if os.path.exists(p) else None for p in paths]
        if contents[0] is None or contents[0] != contents[1]:
            failures.append(f"{name} differs from the plain run's (or is missing)")
    pids = check_reports(report_dir, min_reports, failures)
    if traced_pid not in pids:
        failures.append(f"no report from the started process (pid {traced_pid}); pids {pids}")
    return failures, argv, pids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runtime", required=True, help="path of libmemtrack.so")
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("--source-dir", required=True, help="memtrack's source tree (for git)")
    parser.add_argument("--keep-temp", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    temp_dir = tempfile.mkdtemp(prefix=f"memtrack-real-{args.case}-")
    try:
        failures, argv, pids = check(args, temp_dir)
    finally:
        if args.keep_temp:
            print(f"temporary directory kept: {temp_dir}")
        else:
            shutil.rmtree(temp_dir, ignore_errors=True)
    command = " ".join("'...'" if "\n" in a else a for a in argv)[:120]
    if failures:
        print(f"FAIL {args.case}: {command}")
        for failure in failures:
            print("  - " + failure.replace("\n", "\n    "))
        return 1
    print(f"PASS {args.case}: {command}: same output, {len(pids)} report(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
