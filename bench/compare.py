#!/usr/bin/env python3
"""Runs every whole-process workload plain, under memtrack and under the peer tools (valgrind
memcheck, heaptrack, LeakSanitizer with frame-pointer and with DWARF unwinding), alternating
the configurations within each repetition, and writes a markdown table of the medians' wall
time and peak RSS ratios to the plain run, with the machine's facts, into docs/performance.md
between the compare:begin/compare:end markers (and prints it). Standard library only.

With --instructions it also counts instructions per operation under callgrind on the rows
whose cost is per allocation (churn at depth 10, the 806 call paths), each tool's runtime
preloaded without its report at exit: the count is steady where wall time on a shared
machine is not.

Usage: bench/compare.py [--build build/release] [--runs 5] [--only W,W] [--tools T,T] [--quick]
                        [--instructions]
How to read the table and what is measured: docs/performance.md, "Comparison with other tools".
"""

import argparse
import ctypes.util
import dataclasses
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD_DIR = os.path.join(SOURCE_DIR, "bench", "workloads")
BEGIN_MARK = "<!-- compare:begin -->"
END_MARK = "<!-- compare:end -->"
NUM_CALLERS = 32  # memtrack's default max_frames; every tool is asked for the same depth
CHURN_PAIRS = 20_000_000  # per thread: about 0.3 s plain on the 2-core development machine
CHURN_PAIRS_QUICK = 1_000_000
MANY_SITES_OPS = 1_000_000  # per thread: about 0.3 s plain on the 2-core development machine
MANY_SITES_OPS_QUICK = 100_000
LIVE_BLOCKS = 1_000_000  # the metadata-per-live-block program; same in --quick
GIT_COMMITS = 5000
SORT_MIB, SORT_MIB_QUICK = 50, 5
GNU_TIME = "/usr/bin/time"  # Debian package "time"
# A run longer than this is stopped and its cell becomes a lower bound (cap / plain time): the
# slowest peers take 100-400x on churn, and measuring those exactly 5 times would take hours.
DEFAULT_CAP = 30.0

# Variables from the caller's environment that would change what a run measures.
SCRUBBED_ENV = ("LD_PRELOAD", "MEMTRACK_OPTIONS", "MEMTRACK_RUNTIME", "LSAN_OPTIONS",
                "ASAN_OPTIONS", "VALGRIND_OPTS", "PYTHONMALLOC", "PYTHONHASHSEED", "GIT_DIR",
                "GIT_WORK_TREE")


# ---------------------------------------------------------------------------------------------
# Inputs generated once into the cache (deterministic: same bytes on every machine)


def lcg(seed):
    """A 64-bit linear congruential generator (Knuth's MMIX constants): fixed output on every
    Python version, unlike the random module's methods."""
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        yield x >> 33


def cached(path, stamp, make):
    """Calls make(tmp_path) unless path exists with the same stamp; returns path."""
    stamp_file = path + ".stamp"
    if os.path.exists(path) and os.path.exists(stamp_file):
        with open(stamp_file, encoding="utf-8") as f:
            if f.read() == stamp:
                return path
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    print(f"compare: generating {path}", file=sys.stderr)
    make(tmp)
    os.rename(tmp, path)
    with open(stamp_file, "w", encoding="utf-8") as f:
        f.write(stamp)
    return path


def make_sort_input(path, mib):
    """mib MiB of lines '<10 digits> <word> <8 hex digits>' in pseudo-random order."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    rng = lcg(20240607)
    target, size, lines = mib * 1024 * 1024, 0, []
    with open(path, "w", encoding="ascii") as f:
        while size < target:
            line = f"{next(rng) % 10**10:010d} {words[next(rng) % len(words)]} {next(rng):08x}\n"
            lines.append(line)
            size += len(line)
            if len(lines) == 10000:
                f.write("".join(lines))
                lines.clear()
        f.write("".join(lines))


def make_git_repo(path, commits, files=200, lines=60):
    """A repository of `commits` commits, each changing 3 lines in 2 of `files` text files,
    written with git fast-import (fixed authors and dates: the same object ids everywhere)."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    content = [[f"line {n} of file {i}: {words[(i + n) % 10]}\n" for n in range(lines)]
               for i in range(files)]
    rng = lcg(2024)
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True, env=tool_env())
    stream = []

    def data(text):
        raw = text.encode()
        stream.extend([b"data %d\n" % len(raw), raw, b"\n"])

    for c in range(1, commits + 1):
        when = 1700000000 + 600 * c
        stream.append(b"commit refs/heads/main\nmark :%d\n" % c)
        for role in (b"author", b"committer"):
            stream.append(b"%s Bench Author <bench@example.invalid> %d +0000\n" % (role, when))
        data(f"Change {c}: update {words[c % 10]}\n\nGenerated for the git log workload.\n")
        if c > 1:
            stream.append(b"from :%d\n" % (c - 1))
        for f in (range(files) if c == 1 else [next(rng) % files for _ in range(2)]):
            for _ in range(3):
                n = next(rng) % lines
                content[f][n] = f"line {n} of file {f}: {words[next(rng) % 10]} {c}\n"
            stream.append(f"M 100644 inline src/dir{f % 10}/file{f}.txt\n".encode())
            data("".join(content[f]))
        stream.append(b"\n")
    subprocess.run(["git", "-C", path, "fast-import", "--quiet"], input=b"".join(stream),
                   check=True, env=tool_env())


def tool_env():
    """The environment every run gets: the caller's, without variables that steer the tools,
    with the C locale and git kept away from the user's configuration."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    env.update(LC_ALL="C", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_PAGER="cat", PAGER="cat")
    return env


# ---------------------------------------------------------------------------------------------
# Workloads: rows of the table


@dataclasses.dataclass
class Context:
    build: str  # the CMake build directory (build/release)
    cache: str  # generated inputs, kept between runs
    tmp: str  # per-invocation scratch, removed at the end
    quick: bool


@dataclasses.dataclass
class Workload:
    name: str  # --only key and JSON key
    title: str  # first column of the table
    argv: object  # argv(ctx) -> list of strings; may generate inputs
    env: dict = dataclasses.field(default_factory=dict)
    threads: int = 1  # churn series: for the per-thread cost table
    pairs: object = None  # churn series: pairs(ctx) -> pairs per thread


def workload_binary(ctx, name):
    return os.path.join(ctx.build, "bench", "workloads", f"memtrack_workload_{name}")


def churn_pairs(ctx):
    return CHURN_PAIRS_QUICK if ctx.quick else CHURN_PAIRS


def churn(depth, threads):
    return lambda ctx: [workload_binary(ctx, "churn"), str(churn_pairs(ctx)), str(depth),
                        str(threads)]


def many_sites(threads):
    return lambda ctx: [workload_binary(ctx, "many_sites"),
                        str(MANY_SITES_OPS_QUICK if ctx.quick else MANY_SITES_OPS), str(threads)]


def python_argv(ctx):
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
    return [python, os.path.join(WORKLOAD_DIR, "snippet.py"), "0.1" if ctx.quick else "1"]


def git_log_argv(ctx):
    repo = cached(os.path.join(ctx.cache, "git-repo"), f"commits={GIT_COMMITS}",
                  lambda p: make_git_repo(p, GIT_COMMITS))
    return ["git", "-C", repo, "log", "-p"] + (["-n", "300"] if ctx.quick else [])


def sort_argv(ctx):
    mib = SORT_MIB_QUICK if ctx.quick else SORT_MIB
    path = cached(os.path.join(ctx.cache, f"sort-{mib}mib.txt"), f"mib={mib}",
                  lambda p: make_sort_input(p, mib))
    return ["sort", path]


def gxx_argv(ctx):
    source = os.path.join(WORKLOAD_DIR, "gxx_input.cpp")
    if ctx.quick:  # just the headers: a third of the time
        source = os.path.join(ctx.tmp, "gxx_quick.cpp")
        with open(source, "w", encoding="ascii") as f:
            f.write("#include <map>\n#include <string>\n#include <vector>\n"
                    "int f() { std::map<std::string, std::vector<int>> m; return m.size(); }\n")
    return ["g++", "-O2", "-c", source, "-o", os.path.join(ctx.tmp, "gxx_input.o")]


WORKLOADS = [
    Workload("churn_d10", "churn, depth 10", churn(10, 1), pairs=churn_pairs),
    Workload("churn_d30", "churn, depth 30", churn(30, 1), pairs=churn_pairs),
    Workload("churn_d10_t2", "churn, depth 10, 2 threads", churn(10, 2), threads=2,
             pairs=churn_pairs),
    Workload("churn_d10_t4", "churn, depth 10, 4 threads", churn(10, 4), threads=4,
             pairs=churn_pairs),
    Workload("many_sites", "806 call paths", many_sites(1)),
    Workload("many_sites_t2", "806 call paths, 2 threads", many_sites(2), threads=2),
    Workload("containers", "C++ containers",
             lambda ctx: [workload_binary(ctx, "containers"), "1" if ctx.quick else "3"]),
    Workload("realloc", "realloc growth",
             lambda ctx: [workload_binary(ctx, "realloc_growth"), "4" if ctx.quick else "40",
                          "1024", "4096", "64"]),
    Workload("live_blocks", "1M live blocks",
             lambda ctx: [workload_binary(ctx, "live_blocks"), str(LIVE_BLOCKS), "32"]),
    # A fixed hash seed: the same dict layouts, so the same allocations, in every run.
    Workload("python", "python3 snippet", python_argv,
             env={"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"}),
    Workload("git_log", "git log -p", git_log_argv),
    Workload("sort", "sort 50 MB", sort_argv),
    Workload("gxx", "g++ -O2 -c", gxx_argv),
]


# ---------------------------------------------------------------------------------------------
# Configurations: columns of the table


@dataclasses.dataclass
class Tool:
    name: str  # --tools key
    title: str  # column header
    missing: object  # missing(ctx) -> None when usable, else why not
    wrap: object  # wrap(ctx, workload, argv, env) -> (argv, env)


def memtrack_cli(ctx):
    return os.path.join(ctx.build, "cli", "memtrack")


def memtrack_runtime(ctx):
    return os.path.join(ctx.build, "runtime", "libmemtrack.so")


def needs_file(path_of, what):
    return lambda ctx: None if os.path.exists(path_of(ctx)) else f"not built ({what})"


def needs_program(program):
    return lambda _ctx: None if shutil.which(program) else "not installed"


def with_env(argv, env, **extra):
    return argv, {**env, **extra}


def heaptrack_wrap(ctx, workload, argv, env):
    return ["heaptrack", "-o", os.path.join(ctx.tmp, f"heaptrack.{workload.name}")] + argv, env


LSAN_COMMON = f"exitcode=0:malloc_context_size={NUM_CALLERS}:detect_leaks=1:leak_check_at_exit=1"


def lsan_shim(ctx):
    return os.path.join(ctx.build, "bench", "workloads", "libmemtrack_bench_lsan_signal_shim.so")


def lsan_missing(ctx):
    if not ctypes.util.find_library("lsan"):
        return "not installed (liblsan0)"
    return needs_file(lsan_shim, "bench/workloads")(ctx)


def lsan_wrap(options):
    """LD_PRELOAD=liblsan.so.0, after the signal() fix in workloads/lsan_signal_shim.c."""
    return lambda ctx, _w, argv, env: with_env(argv, env, LSAN_OPTIONS=options,
                                               LD_PRELOAD=f"{lsan_shim(ctx)} liblsan.so.0")


TOOLS = [
    Tool("plain", "plain", lambda _ctx: None, lambda _c, _w, a, e: (a, e)),
    Tool("memtrack", "memtrack", needs_file(memtrack_cli, "cli/memtrack"),
         lambda ctx, _w, a, e: ([memtrack_cli(ctx), "run", "--", *a], e)),
    Tool("memtrack-record", "memtrack, recording only", needs_file(memtrack_runtime, "runtime"),
         lambda ctx, _w, a, e: with_env(a, e, LD_PRELOAD=memtrack_runtime(ctx),
                                        MEMTRACK_OPTIONS="report_at_exit=0")),
    Tool("memtrack-sampled", "memtrack, sampled 512 KiB", needs_file(memtrack_cli, "cli/memtrack"),
         lambda ctx, _w, a, e: ([memtrack_cli(ctx), "run", "--sample=512KiB", "--", *a], e)),
    Tool("memtrack-sampled-check", "memtrack, sampled, check-heap sample:1000",
         needs_file(memtrack_cli, "cli/memtrack"),
         lambda ctx, _w, a, e: ([memtrack_cli(ctx), "run", "--sample=512KiB",
                                 "--check-heap=sample:1000", "--", *a], e)),
    Tool("memtrack-check-full", "memtrack, check-heap full", needs_file(memtrack_cli, "cli/memtrack"),
         lambda ctx, _w, a, e: ([memtrack_cli(ctx), "run", "--check-heap=full", "--", *a], e)),
    Tool("memcheck", "memcheck", needs_program("valgrind"),
         lambda _c, _w, a, e: (["valgrind", "--tool=memcheck", "--leak-check=full",
                                f"--num-callers={NUM_CALLERS}", "--trace-children=yes", *a], e)),
    Tool("heaptrack", "heaptrack", needs_program("heaptrack"), heaptrack_wrap),
    Tool("lsan", "LSan, fast unwind", lsan_missing, lsan_wrap(LSAN_COMMON)),
    Tool("lsan-dwarf", "LSan, DWARF unwind", lsan_missing,
         lsan_wrap(LSAN_COMMON + ":fast_unwind_on_malloc=0")),
]
PEERS_TO_BEAT = ("memcheck", "heaptrack", "lsan-dwarf")

# Cells that need a word of explanation under the table: (tool, workload) -> note.
CELL_NOTES = {
    ("heaptrack", "gxx"): "heaptrack does not follow exec: only the g++ driver is recorded, "
                          "not cc1plus and as",
}


# ---------------------------------------------------------------------------------------------
# Instructions per operation (--instructions)

# Each count is (Ir at the larger count - Ir at the smaller) / the difference: what one more
# operation costs, without start-up and exit. An operation is a malloc/free pair.
INSTRUCTION_OPS = (100_000, 300_000)
INSTRUCTION_WORKLOADS = {  # name -> argv for `ops` operations on one thread
    "churn_d10": lambda ctx, ops: [workload_binary(ctx, "churn"), str(ops), "10", "1"],
    "many_sites": lambda ctx, ops: [workload_binary(ctx, "many_sites"), str(ops), "1"],
}


def instruction_configs(ctx, tool_names):
    """(tool, variables) for the chosen tools that run preloaded: no report at exit, where the
    leak check would be counted as if it were per operation."""
    runtime = memtrack_runtime(ctx)
    configs = {
        "plain": {},
        "memtrack": {"LD_PRELOAD": runtime, "MEMTRACK_OPTIONS": "report_at_exit=0"},
        "memtrack-sampled": {"LD_PRELOAD": runtime,
                             "MEMTRACK_OPTIONS": "report_at_exit=0:sample_bytes=524288"},
        "memtrack-sampled-check": {"LD_PRELOAD": runtime,
                                   "MEMTRACK_OPTIONS": "report_at_exit=0:sample_bytes=524288:"
                                                       "check_heap=\"sample:1000\""},
        "memtrack-check-full": {"LD_PRELOAD": runtime,
                                "MEMTRACK_OPTIONS": "report_at_exit=0:check_heap=full"},
        "lsan": {"LD_PRELOAD": f"{lsan_shim(ctx)} liblsan.so.0",
                 "LSAN_OPTIONS": LSAN_COMMON.replace("leak_check_at_exit=1",
                                                     "leak_check_at_exit=0")},
    }
    usable = {"plain": None, "memtrack": needs_file(memtrack_runtime, "runtime")(ctx),
              "memtrack-sampled": needs_file(memtrack_runtime, "runtime")(ctx),
              "memtrack-sampled-check": needs_file(memtrack_runtime, "runtime")(ctx),
              "memtrack-check-full": needs_file(memtrack_runtime, "runtime")(ctx),
              "lsan": lsan_missing(ctx)}
    return [(name, configs[name]) for name in configs
            if (name == "plain" or name in tool_names) and usable[name] is None]


def callgrind_count(ctx, argv, variables):
    """The instructions callgrind counts for the whole run (the program's and the tool's)."""
    out = os.path.join(ctx.tmp, "callgrind.out")
    command = ["valgrind", "--tool=callgrind", "--trace-children=yes",
               f"--callgrind-out-file={out}", "env",
               *(f"{k}={v}" for k, v in variables.items()), *argv]
    run = subprocess.run(command, env=tool_env(), capture_output=True, text=True, timeout=900)
    found = re.search(r"Collected : ([\d,]+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind failed ({run.returncode}): {last_text(run.stderr)}")
    return int(found.group(1).replace(",", ""))


def last_text(text, n=3):
    """The last n lines of text, on one line."""
    return " | ".join(line.strip() for line in text.splitlines()[-n:])


def count_instructions(ctx, workloads, tool_names):
    """{workload: {tool: instructions per operation}} (None where the count failed)."""
    if shutil.which("valgrind") is None:
        sys.exit("compare: --instructions needs valgrind (Debian package valgrind)")
    counts = {}
    low, high = INSTRUCTION_OPS
    for name, argv_of in INSTRUCTION_WORKLOADS.items():
        if name not in workloads:
            continue
        counts[name] = {}
        for tool, variables in instruction_configs(ctx, tool_names):
            try:
                per_op = (callgrind_count(ctx, argv_of(ctx, high), variables) -
                          callgrind_count(ctx, argv_of(ctx, low), variables)) / (high - low)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"compare: instructions of {tool} on {name}: {e}", file=sys.stderr)
                per_op = None
            counts[name][tool] = per_op
            shown = "failed" if per_op is None else f"{per_op:.0f}"
            print(f"compare: instructions per operation, {name}, {tool}: {shown}",
                  file=sys.stderr)
    return counts


def instruction_table(results, counts):
    """Instructions per operation beside the wall time ratio of the main table."""
    tools = [t for t in TOOLS if any(t.name in c for c in counts.values())]
    lines = ["| workload | " + " | ".join(
        "plain: instructions per operation" if t.name == "plain"
        else f"{t.title}: added instructions, wall ratio" for t in tools) + " |",
             "|---|" + "---|" * len(tools)]
    for workload in WORKLOADS:
        if workload.name not in counts:
            continue
        cells = []
        plain = counts[workload.name].get("plain")
        for tool in tools:
            count = counts[workload.name].get(tool.name)
            if count is None:
                cells.append("-")
            elif tool.name == "plain":
                cells.append(f"{count:,.0f}")
            else:
                added = f"{count - plain:+,.0f}" if plain is not None else f"{count:,.0f}"
                wall = ratio(results, workload.name, tool.name)
                cells.append(added + (f", {fmt_bound(wall)}" if wall is not None else ""))
        lines.append(f"| {workload.title} | " + " | ".join(cells) + " |")
    return lines


# ---------------------------------------------------------------------------------------------
# Running and measuring


@dataclasses.dataclass
class Run:
    wall: float  # seconds, from spawn to reaping the child
    maxrss_kib: int  # ru_maxrss: the largest single process in the tree, see measure()
    cpu: float  # user + system seconds of the whole tree
    status: int  # exit code, or -N when signal N ended the program
    timed_out: bool = False


def kill_group(pid, killed=None):
    if killed is not None:
        killed.set()
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def measure(argv, env, stderr_path, timeout):
    """Runs argv in a new session with stdin and stdout on /dev/null and stderr into
    stderr_path; kills the whole session after timeout seconds.

    Peak RSS comes from GNU time (%M, the child's ru_maxrss from wait4), not from our own
    wait4: Linux keeps a process's peak RSS across exec, so a child spawned by this Python
    process would start from Python's 18 MiB, while time's child starts from time's 1-2 MiB.
    ru_maxrss covers the waited-for descendants as the largest single process, not a sum."""
    rss_path = stderr_path + ".rss"
    timed = [GNU_TIME, "-f", "%M", "-o", rss_path, "--", *argv]
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    start = time.perf_counter()
    pid = os.posix_spawn(GNU_TIME, timed, env, file_actions=actions, setsid=True)
    killed = threading.Event()
    timer = threading.Timer(timeout, kill_group, (pid, killed))
    timer.start()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    timer.cancel()
    if killed.is_set():
        kill_group(pid)  # what the killed process's children left behind
    status = os.waitstatus_to_exitcode(status)
    try:
        with open(rss_path, encoding="utf-8") as f:
            words = f.read().split()  # "[Command terminated by signal N] KiB"
        maxrss = int(words[-1])
        if words[:4] == ["Command", "terminated", "by", "signal"]:
            status = -int(words[4])
    except (OSError, ValueError, IndexError):
        maxrss = 0
    return Run(wall, maxrss, usage.ru_utime + usage.ru_stime, status, killed.is_set())


def last_lines(path, n=3):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return last_text(f.read(), n)
    except OSError:
        return ""


@dataclasses.dataclass
class Cell:
    runs: list = dataclasses.field(default_factory=list)
    error: str = ""  # why there is no number
    stopped_at: float = 0.0  # the cap in seconds, when a run went past it and was stopped

    def median(self, field):
        return statistics.median(getattr(r, field) for r in self.runs) if self.runs else None

    def wall_ratio(self, plain):
        """The median over the repetitions of this cell's wall time over the plain run's of the
        same repetition: the runs of one repetition are seconds apart, so a machine whose
        speed drifts over minutes moves both sides of each ratio alike."""
        pairs = list(zip(self.runs, plain.runs))
        if not pairs:
            return None
        return statistics.median(mine.wall / theirs.wall for mine, theirs in pairs)

    def measured(self):
        return bool(self.runs) and not self.error and not self.stopped_at


def run_one(ctx, tool, workload, argv, env, cap):
    """One run of workload under tool; returns the Run and why it failed ("" if it did not).
    A run stopped at the cap is not a failure: the caller reads run.timed_out."""
    wrapped, wrapped_env = tool.wrap(ctx, workload, argv, env)
    stderr_path = os.path.join(ctx.tmp, f"{workload.name}.{tool.name}.stderr")
    run = measure(wrapped, wrapped_env, stderr_path, cap)
    for leftover in os.listdir(ctx.tmp):
        if leftover.startswith("heaptrack."):
            os.remove(os.path.join(ctx.tmp, leftover))
    if run.timed_out:
        return run, ""
    if run.status < 0:
        return run, f"crashed ({signal.Signals(-run.status).name}): {last_lines(stderr_path)}"
    if run.status != 0:
        return run, f"failed (exit {run.status}): {last_lines(stderr_path)}"
    return run, ""


def run_workload(ctx, workload, tools, runs, cap):
    """Measures one workload: a plain warm-up run, then `runs` rounds over the tools, each round
    starting one tool later, so no tool always runs right after the same one. A tool whose run
    goes past `cap` seconds is stopped and not run again on this workload: its cell then holds
    a lower bound (cap / plain median)."""
    cells = {tool.name: Cell() for tool in tools}
    for tool in tools:
        cells[tool.name].error = tool.missing(ctx) or ""
    env = {**tool_env(), **workload.env, "TMPDIR": ctx.tmp}  # what a stopped run leaves behind
    argv = workload.argv(ctx)
    warm, error = run_one(ctx, TOOLS[0], workload, argv, env, cap)  # warms the page cache
    if error or warm.timed_out:
        error = error or f"ran longer than the cap ({cap:.0f} s)"
        return {name: Cell(error="plain run " + error) for name in cells}
    for rep in range(runs):
        order = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for tool in order:
            cell = cells[tool.name]
            if cell.error or cell.stopped_at:
                continue
            run, cell.error = run_one(ctx, tool, workload, argv, env, cap)
            if run.timed_out:
                cell.stopped_at = cap
            elif not cell.error:
                cell.runs.append(run)
        progress = ", ".join(f"{t.name} " + (f"> {c.stopped_at:.0f} s" if c.stopped_at
                                              else f"{c.runs[-1].wall:.2f} s")
                             for t in tools for c in [cells[t.name]]
                             if not c.error and (c.runs or c.stopped_at))
        print(f"compare: {workload.name} {rep + 1}/{runs}: {progress}", file=sys.stderr)
    return cells


# ---------------------------------------------------------------------------------------------
# Machine facts and the markdown


def command_line(argv, pick=lambda out: out.splitlines()[0]):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
        return pick(out) if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "not installed"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_total_gib():
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1024 * 1024)
    return 0.0


def machine_facts(ctx):
    commit = command_line(["git", "-C", SOURCE_DIR, "describe", "--always", "--dirty"])
    lsan = command_line(["dpkg-query", "-W", "-f=${Version}", "liblsan0"], lambda out: out)
    python = python_argv(ctx)[0]
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "ram": f"{mem_total_gib():.1f} GiB",
        "kernel": platform.release(),
        "glibc": os.confstr("CS_GNU_LIBC_VERSION") or "unknown",
        "gcc": command_line(["gcc", "-dumpfullversion"]),
        "valgrind": command_line(["valgrind", "--version"]),
        "heaptrack": command_line(["heaptrack", "--version"]),
        "liblsan": f"liblsan0 {lsan}" if lsan not in ("unknown", "not installed") else lsan,
        "python3": command_line([python, "--version"]) + f" ({python})",
        "git": command_line(["git", "--version"]),
        "sort": command_line(["sort", "--version"]),
        "memtrack": f"commit {commit}",
        "load_start": "%.2f %.2f %.2f" % os.getloadavg(),
    }


def fmt_seconds(s):
    return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"


def fmt_duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def fmt_ratio(r):
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def mib(kib):
    return f"{kib / 1024:.0f} MiB" if kib >= 10 * 1024 else f"{kib / 1024:.1f} MiB"


def ratio_cell(plain, cell):
    """'time ratio / RSS ratio' of the medians, or why there is none."""
    if cell.error:
        return cell.error.split(":")[0]
    if not plain.measured():
        return "-"
    if cell.stopped_at:
        return f"> {fmt_ratio(cell.stopped_at / plain.median('wall'))} / ?"
    if not cell.runs:
        return "-"
    return (f"{fmt_ratio(cell.wall_ratio(plain))} / "
            f"{fmt_ratio(cell.median('maxrss_kib') / plain.median('maxrss_kib'))}")


def main_table(results, tools):
    columns = ["workload", "plain: time, peak RSS"] + [t.title for t in tools if t.name != "plain"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    notes = []
    for workload in (w for w in WORKLOADS if w.name in results):
        cells = results[workload.name]
        plain = cells["plain"]
        row = [workload.title, (f"{fmt_seconds(plain.median('wall'))}, "
                                f"{mib(plain.median('maxrss_kib'))}") if plain.runs
               else (plain.error.split(":")[0] or "-")]
        for tool in (t for t in tools if t.name != "plain"):
            text = ratio_cell(plain, cells[tool.name])
            if (tool.name, workload.name) in CELL_NOTES and cells[tool.name].runs:
                notes.append(CELL_NOTES[(tool.name, workload.name)])
                text += f" ({len(notes)})"
            elif cells[tool.name].error and ":" in cells[tool.name].error:
                notes.append(f"{tool.title} on {workload.title}: {cells[tool.name].error}")
                text += f" ({len(notes)})"
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines += [""] + [f"({i}) {note}" for i, note in enumerate(notes, 1)]
    return lines


def per_core_ns(ctx, workload, cell, cores):
    """Wall nanoseconds per malloc+free pair per busy core: equal for 1, 2 and 4 threads when a
    tool scales perfectly (4 threads on 2 cores take twice the wall time of 2 threads)."""
    total_pairs = workload.pairs(ctx) * workload.threads
    return cell.median("wall") * 1e9 * min(workload.threads, cores) / total_pairs


def thread_table(ctx, results, tools, cores):
    series = [w for w in WORKLOADS if w.name in ("churn_d10", "churn_d10_t2", "churn_d10_t4")
              and w.name in results]
    if len(series) < 2:
        return []
    names = [f"{w.threads} thread" + ("s" if w.threads > 1 else "") for w in series]
    lines = ["| " + " | ".join(["ns per pair per core"] + names
                                 + [f"{w.threads} vs 1" for w in series[1:]]) + " |",
             "|" + "---|" * (1 + 2 * len(series) - 1)]
    for tool in tools:
        cells = [results[w.name][tool.name] for w in series]
        if not all(c.measured() for c in cells):
            continue
        ns = [per_core_ns(ctx, w, c, cores) for w, c in zip(series, cells)]
        lines.append("| " + " | ".join([tool.title] + [f"{v:,.0f}" for v in ns]
                                       + [fmt_ratio(v / ns[0]) for v in ns[1:]]) + " |")
    return lines


def live_block_table(results, tools):
    cells = results.get("live_blocks")
    if not cells or not cells["plain"].measured():
        return []
    plain = cells["plain"].median("maxrss_kib")
    shown = [t for t in tools if t.name != "plain" and cells[t.name].measured()]
    header = [t.title for t in shown]
    values = [f"{(cells[t.name].median('maxrss_kib') - plain) * 1024 / LIVE_BLOCKS:.0f}"
              for t in shown]
    if not header:
        return []
    return ["| bytes per live block | " + " | ".join(header) + " |",
            "|" + "---|" * (1 + len(header)),
            "| (peak RSS - plain) / 1,000,000 | " + " | ".join(values) + " |"]


def ratio(results, workload, tool):
    """(median wall time under tool / plain median, whether that is only a lower bound because
    the run was stopped at the cap), or None when there is no number."""
    cells = results.get(workload, {})
    mine, plain = cells.get(tool), cells.get("plain")
    if not mine or not plain or mine.error or not plain.measured():
        return None
    if mine.stopped_at:
        return mine.stopped_at / plain.median("wall"), True
    return (mine.wall_ratio(plain), False) if mine.runs else None


def fmt_bound(r):
    return ("> " if r[1] else "") + fmt_ratio(r[0])


def faster(mine, theirs):
    """True or False when the ratios decide whether memtrack is faster, None when bounds
    leave it open."""
    (m, m_bound), (t, t_bound) = mine, theirs
    if m_bound and t_bound:
        return None
    if t_bound:
        return True if m < t else None
    if m_bound:
        return False if m >= t else None
    return m < t


def verdict(ok):
    return "met" if ok else "**missed**"


# Ratio ceilings of the speed targets, per workload (the rest must only not exceed LSan's).
RATIO_TARGETS = {"churn_d10": 3.0, "containers": 2.0, "python": 2.0, "git_log": 1.3,
                 "gxx": 1.3, "sort": 1.3, "live_blocks": 5.0}


# The sampled mode's targets over every row (docs/sampling.md).
SAMPLED_GEOMEAN = 1.05
SAMPLED_CEILING = 1.3
# The heap check's (docs/heap-errors.md): each mode over the leak mode it runs on.
CHECK_HEAP_TARGETS = (("memtrack-sampled-check", "memtrack-sampled", "check-heap=sample:1000", 1.05),
                      ("memtrack-check-full", "memtrack", "check-heap=full", 2.0))


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def bytes_per_live_block(results, tool):
    cells = results.get("live_blocks")
    if not cells or not cells["plain"].measured() or tool not in cells:
        return None
    if not cells[tool].measured():
        return None
    return ((cells[tool].median("maxrss_kib") - cells["plain"].median("maxrss_kib")) * 1024
            / LIVE_BLOCKS)


def lsan_targets(results):
    """Every row at or below LeakSanitizer fast mode's ratio, and the geomean below it."""
    out, pairs, above = [], [], []
    for workload in (w for w in WORKLOADS if w.name in results):
        mine, theirs = ratio(results, workload.name, "memtrack"), ratio(results, workload.name, "lsan")
        if mine is None or theirs is None or mine[1] or theirs[1]:
            continue
        pairs.append((mine[0], theirs[0]))
        if mine[0] > theirs[0]:
            above.append(f"{workload.title} ({fmt_ratio(mine[0])} against {fmt_ratio(theirs[0])})")
    if pairs:
        out.append(f"- every row at or below LSan fast unwind's ratio ({len(pairs)} rows): "
                   + ("met" if not above else "**missed** on " + "; ".join(above)))
        g_mine, g_lsan = geomean(m for m, _ in pairs), geomean(t for _, t in pairs)
        out.append(f"- geomean below LSan fast unwind's: {fmt_ratio(g_mine)} against "
                   f"{fmt_ratio(g_lsan)}, {verdict(g_mine < g_lsan)}")
    return out


def check_heap_targets(results):
    """Each heap check mode's geomean over the rows, against the leak mode it adds to."""
    out = []
    for tool, base, title, ceiling in CHECK_HEAP_TARGETS:
        rows = []
        for workload in (w for w in WORKLOADS if w.name in results):
            checked, plain_base = ratio(results, workload.name, tool), ratio(results, workload.name, base)
            if checked is None or plain_base is None or checked[1] or plain_base[1]:
                continue
            rows.append((workload.title, checked[0] / plain_base[0]))
        if not rows:
            continue
        g = geomean(r for _, r in rows)
        base_title = next(t.title for t in TOOLS if t.name == base)
        worst_title, worst = max(rows, key=lambda row: row[1])
        out.append(f"- {title} geomean at most {ceiling:.2f}x {base_title} ({len(rows)} rows): "
                   f"{fmt_ratio(g)}, {verdict(g <= ceiling)}; the costliest row: {worst_title}, "
                   f"{fmt_ratio(worst)}")
    return out


def targets(ctx, results, cores):
    """The issue's targets for memtrack, each with its verdict on this run."""
    out = lsan_targets(results)
    for workload in (w for w in WORKLOADS if w.name in RATIO_TARGETS):
        r = ratio(results, workload.name, "memtrack")
        if r is not None:
            ceiling = RATIO_TARGETS[workload.name]
            out.append(f"- {workload.title} at most {ceiling:.1f}x plain: {fmt_bound(r)}, "
                       f"{verdict(not r[1] and r[0] <= ceiling)}")
    one, four = (results.get(n, {}).get("memtrack") for n in ("churn_d10", "churn_d10_t4"))
    if one and four and one.measured() and four.measured():
        w1, w4 = (next(w for w in WORKLOADS if w.name == n) for n in ("churn_d10", "churn_d10_t4"))
        r = (per_core_ns(ctx, w4, results["churn_d10_t4"]["memtrack"], cores)
             / per_core_ns(ctx, w1, results["churn_d10"]["memtrack"], cores))
        out.append(f"- per-thread cost with 4 threads within 1.2x of 1 thread ({cores} cores): "
                   f"{fmt_ratio(r)}, {verdict(r <= 1.2)}")
    sampled = [(w.title, ratio(results, w.name, "memtrack-sampled"))
               for w in WORKLOADS if w.name in results]
    sampled = [(title, r[0]) for title, r in sampled if r is not None and not r[1]]
    if sampled:
        g = geomean(r for _, r in sampled)
        out.append(f"- sampled mode (512 KiB) geomean at most {SAMPLED_GEOMEAN:.2f}x plain "
                   f"({len(sampled)} rows): {fmt_ratio(g)}, {verdict(g <= SAMPLED_GEOMEAN)}")
        above = [f"{title} ({fmt_ratio(r)})" for title, r in sampled if r > SAMPLED_CEILING]
        out.append(f"- sampled mode no row above {SAMPLED_CEILING:.1f}x plain: "
                   + ("met" if not above else "**missed** on " + "; ".join(above)))
    out.extend(check_heap_targets(results))
    recording = bytes_per_live_block(results, "memtrack-record")
    if recording is not None:
        out.append(f"- recording at most 32 bytes per live block: {recording:.0f}, "
                   f"{verdict(recording <= 32)}")
        whole = bytes_per_live_block(results, "memtrack")
        if whole is not None:
            out.append(f"- the exit scan under 24 extra bytes per live block: "
                       f"{whole - recording:.0f}, {verdict(whole - recording <= 24)}")
    compared, slower, open_ = 0, [], []
    for workload in (w for w in WORKLOADS if w.name in results):
        mine = ratio(results, workload.name, "memtrack")
        beaten_by = []
        for peer in PEERS_TO_BEAT:
            theirs = ratio(results, workload.name, peer)
            if mine is None or theirs is None:
                continue
            compared += 1
            decided = faster(mine, theirs)
            if decided is None:
                open_.append(f"{workload.title} vs {peer}")
            elif not decided:
                beaten_by.append(f"{peer} {fmt_bound(theirs)}")
        if beaten_by:
            slower.append(f"{workload.title} ({fmt_bound(mine)}; {', '.join(beaten_by)})")
    if compared:
        out.append(f"- faster than memcheck, heaptrack and DWARF-mode LSan on every workload "
                   f"({compared} pairs compared): "
                   + ("met" if not slower else "**missed** on " + "; ".join(slower))
                   + (f" (undecided, both stopped at the cap: {', '.join(open_)})" if open_ else ""))
    return out


def render(ctx, results, tools, facts, args, elapsed):
    cores, runs = facts["cores"], args.runs
    command = shlex.join(["bench/compare.py", *sys.argv[1:]])
    lines = [BEGIN_MARK,
             f"Generated by `{command}` on {facts['date']} in {fmt_duration(elapsed)}"
             + (" (**quick run: small work, 1 run; a smoke test, not for comparison**)"
                if ctx.quick else "") + ".",
             "",
             f"Machine: {facts['cpu']}, {cores} cores, {facts['ram']} RAM; Linux "
             f"{facts['kernel']}; {facts['glibc']}; gcc {facts['gcc']}; {facts['valgrind']}; "
             f"{facts['heaptrack']}; {facts['liblsan']}; {facts['python3']}; {facts['git']}; "
             f"{facts['sort']}; memtrack {facts['memtrack']}. Load average at the start "
             f"{facts['load_start']}, at the end {facts['load_end']}.",
             "",
             f"Each cell: median wall time / median peak RSS under the tool, divided by the plain "
             f"run's (median of {runs}). `> Nx / ?`: the run went past the {args.cap or 1e9:.0f} s "
             f"cap and was stopped, so N (cap / plain time) is a lower bound and the peak RSS "
             f"is unknown; it is not repeated.",
             ""]
    lines += main_table(results, tools)
    thread_lines = thread_table(ctx, results, tools, cores)
    if thread_lines:
        lines += ["", "Per-thread cost, churn at depth 10 with the same work in every thread "
                  f"(wall time x busy cores / pairs; {cores} cores):", ""] + thread_lines
    counts = facts.get("instructions")
    if counts:
        low, high = INSTRUCTION_OPS
        lines += ["", f"Instructions per operation (a malloc/free pair; callgrind, the difference "
                  f"between {low:,} and {high:,} operations on one thread, each tool's runtime "
                  "preloaded without its report at exit), and the wall time ratio of the table "
                  "above:", ""] + instruction_table(results, counts)
    block_lines = live_block_table(results, tools)
    if block_lines:
        lines += ["", f"Memory per live block ({LIVE_BLOCKS:,} blocks of 32 bytes held to exit):",
                  ""] + block_lines
    target_lines = targets(ctx, results, cores)
    if target_lines:
        lines += ["", "memtrack's targets on this run:", ""] + target_lines
    lines.append(END_MARK)
    return "\n".join(lines) + "\n"


def write_doc(path, block):
    """Replaces the text between the markers (the markers included) or appends the block."""
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    begin, end = text.find(BEGIN_MARK), text.find(END_MARK)
    if begin != -1 and end > begin:
        text = text[:begin] + block.rstrip("\n") + text[end + len(END_MARK):]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def save_json(path, ctx, results, facts, runs):
    data = {"facts": facts, "runs": runs, "quick": ctx.quick, "workloads": {
        w: {t: {"error": c.error, "stopped_at": c.stopped_at,
                "runs": [dataclasses.asdict(r) for r in c.runs]}
            for t, c in cells.items()} for w, cells in results.items()}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)


# ---------------------------------------------------------------------------------------------


def pick(names, known, what):
    if not names:
        return list(known)
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in known]
    if unknown:
        sys.exit(f"compare: unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return [k for k in known if k in chosen]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(SOURCE_DIR, "build", "release"),
                        help="CMake build directory with cli/memtrack, runtime/libmemtrack.so and "
                             "bench/workloads/ (default: build/release)")
    parser.add_argument("--runs", type=int, default=5, help="repetitions per cell (default 5)")
    parser.add_argument("--only", help="comma-separated workloads: "
                        + ",".join(w.name for w in WORKLOADS))
    parser.add_argument("--tools", help="comma-separated configurations (plain is always run): "
                        + ",".join(t.name for t in TOOLS))
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 run of small work; prints, does not write the doc")
    parser.add_argument("--cap", type=float, default=DEFAULT_CAP,
                        help="seconds after which a run is stopped; its cell then shows a lower "
                             f"bound ('> Nx') and is not repeated (default {DEFAULT_CAP:.0f}; "
                             "0: no cap)")
    parser.add_argument("--doc", default=os.path.join(SOURCE_DIR, "docs", "performance.md"),
                        help="markdown file to update between the markers")
    parser.add_argument("--no-doc", action="store_true", help="only print the table")
    parser.add_argument("--json", help="where to keep every run's numbers "
                                       "(default: BUILD/bench/compare-results.json)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per operation under callgrind (churn at "
                             "depth 10, the 806 call paths; needs valgrind)")
    parser.add_argument("--render", metavar="JSON",
                        help="render the table of a run kept with --json, without running "
                             "anything (writes the doc unless --no-doc)")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def load_json(path):
    """The results, facts and repetitions kept by save_json: to render a table again."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    results = {w: {t: Cell([Run(**r) for r in c["runs"]], c["error"], c["stopped_at"])
                   for t, c in cells.items()} for w, cells in data["workloads"].items()}
    return results, data["facts"], data["runs"], data["quick"]


def render_saved(args):
    """--render: the table of a saved run, without running anything."""
    results, facts, runs, quick = load_json(args.render)
    names = {t for cells in results.values() for t in cells}
    tools = [t for t in TOOLS if t.name in names]
    ctx = Context(os.path.abspath(args.build), "", "", quick)
    args.runs = runs
    block = render(ctx, results, tools, facts, args, 0.0)
    print(block, end="")
    if not quick and not args.no_doc:
        write_doc(args.doc, block)
        print(f"compare: wrote {args.doc}", file=sys.stderr)


def main():
    args = parse_args()
    if args.render:
        render_saved(args)
        return
    workloads = pick(args.only, [w.name for w in WORKLOADS], "workload")
    tool_names = ["plain"] + [t for t in pick(args.tools, [t.name for t in TOOLS], "tool")
                              if t != "plain"]
    tools = [t for t in TOOLS if t.name in tool_names]
    build = os.path.abspath(args.build)
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"compare: {GNU_TIME} not found: install GNU time (scripts/install-bench-deps.sh)")
    if not os.path.isdir(os.path.join(build, "bench", "workloads")):
        sys.exit(f"compare: {build}/bench/workloads not found: build first (make compare)")
    cache = os.path.join(build, "bench", "cache")
    os.makedirs(cache, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memtrack-compare-") as tmp:
        ctx = Context(build, cache, tmp, args.quick)
        facts = machine_facts(ctx)
        results = {}
        for workload in (w for w in WORKLOADS if w.name in workloads):
            results[workload.name] = run_workload(ctx, workload, tools, args.runs,
                                                  args.cap or 1e9)
        if args.instructions:
            facts["instructions"] = count_instructions(ctx, workloads, tool_names)
    facts["load_end"] = "%.2f %.2f %.2f" % os.getloadavg()
    block = render(ctx, results, tools, facts, args, time.monotonic() - started)
    print(block, end="")
    save_json(args.json or os.path.join(build, "bench", "compare-results.json"), ctx, results,
              facts, args.runs)
    if not args.quick and not args.no_doc:
        write_doc(args.doc, block)
        print(f"compare: wrote {args.doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
