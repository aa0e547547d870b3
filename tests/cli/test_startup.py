"""What a short run does besides running the program, seen from outside with strace: files
opened, not time. A run whose report has no stack opens no debug file; the runtime opens no
file of another thread's /proc directory (once a process has, reaping it costs its parent
milliseconds in the kernel); and a heap with nothing live at exit is not scanned (the scan
reads /proc/self/maps)."""

import re
import shutil

from cli_harness import Failure, cli_test

# `PID openat(AT_FDCWD, "PATH", FLAGS) = RESULT` in strace -f -o output.
OPEN_LINE = re.compile(r'^(\d+) +open(?:at)?\((?:[A-Z_]+, )?"([^"]*)"')


def traced_run(ctx, *args):
    """`memtrack run ARGS` under strace -f; returns the run, the pid of memtrack itself and
    the (pid, path) of every file opened by any process."""
    strace = shutil.which("strace")
    ctx.require(strace is not None, "strace is installed (scripts/install-deps.sh installs it)")
    log = ctx.path("strace.log")
    run = ctx.run([strace, "-f", "-qq", "-o", log, "-e", "trace=open,openat",
                   ctx.paths.memtrack, "run", *args])
    opened = []
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = OPEN_LINE.match(line)
            if match:
                opened.append((int(match.group(1)), match.group(2)))
    if not opened:
        raise Failure(f"strace logged no open calls in {log}\n" + run.describe())
    return run, opened[0][0], opened


def is_debug_file(path):
    return path.startswith("/usr/lib/debug/") or path.endswith(".debug")


def other_thread_proc_file(path):
    """A file of /proc/self/task/TID/ (a thread's own directory, not the task list)."""
    return re.match(r"^/proc/(self|\d+)/task/\d+/", path) is not None


@cli_test
def test_startup_nothing_to_symbolize(ctx):
    """memtrack run -- /bin/true: no stack in the report, so no symbol table is read and no
    debug file opened (the modules are opened only to check that they are the files the
    program ran); the runtime does not scan the empty heap and opens no thread's /proc
    files."""
    run, cli_pid, opened = traced_run(ctx, "--", "/bin/true")
    ctx.require_eq(run.exit, 0, "exit status", run)
    ctx.expect("exited with status 0: no leaks (0 allocations, all freed)" in run.stderr,
               "the one-line report", run)
    ctx.expect_eq([p for _, p in opened if is_debug_file(p)], [], "debug files opened", run)
    program_opened = [path for pid, path in opened if pid != cli_pid]
    ctx.expect_eq([p for p in program_opened if p == "/proc/self/maps"], [],
                  "/proc/self/maps read by the program (the scan of an empty heap)", run)
    ctx.expect_eq([p for p in program_opened if other_thread_proc_file(p)], [],
                  "files of a thread's /proc directory opened by the program", run)


@cli_test
def test_startup_leak_still_symbolized(ctx):
    """A leak still gets its stack symbolized (the symbol tables are read when a stack
    needs them) and is found by the scan; memtrack's own thread is known to the scan, which
    asks no thread's /proc files about it."""
    run, cli_pid, opened = traced_run(ctx, ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    ctx.expect("100 bytes in 1 block is definitely lost" in run.stderr, "the leak", run)
    ctx.expect(re.search(r"#0 make_leak \(.*leak_one\.c:6:13\) cli_leak_one", run.stderr),
               "the leak's first frame, symbolized", run)
    program_opened = [path for pid, path in opened if pid != cli_pid]
    ctx.expect("/proc/self/maps" in program_opened, "the scan ran (it reads the maps)", run)
    ctx.expect_eq([p for p in program_opened if other_thread_proc_file(p)], [],
                  "files of a thread's /proc directory opened by the program", run)
