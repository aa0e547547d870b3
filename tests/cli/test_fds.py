"""Descriptors left open (docs/cli.md, "File descriptors") and the event log (--trace-log):
cli_fds runs one scenario per first argument (programs/fds.c), in the test's directory. The
JSON `resources` elements are checked exactly, with the file:line of the opening call;
descriptors the program inherited, and fds 0-2, are never reported; --track-fds=no turns it
all off (the FILE object then shows as memory); descriptors count for --error-exitcode;
the event log of the trace scenario is its calls, line by line."""

import os
import re
import subprocess

from cli_harness import Run, cli_test, exit_status, text_by_pid

SOURCE = "fds.c"


def run_fds(ctx, scenario, *options, exit=0, env=None):
    """memtrack run --json OPTIONS cli_fds SCENARIO: (run, the JSON processes)."""
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("fds"), scenario,
                       env=env)
    ctx.require_eq(run.exit, exit, "exit status", run)
    return run, ctx.read_json(json_path, run)["processes"]


def frame0(resource):
    top = resource["stack"][0] if resource["stack"] else {}
    return top.get("function"), top.get("file"), top.get("line")


def without_stack(resource):
    return {k: v for k, v in resource.items() if k != "stack"}


@cli_test
def test_fds_json_exact(ctx):
    """A FILE never closed and a descriptor never closed: exactly two resources, each with
    its path, flags, call and the line that opened it; no memory is leaked (the FILE object
    is not counted as a block)."""
    run, processes = run_fds(ctx, "leak", "--show-leak-kinds=all")
    ctx.require_eq(len(processes), 1, "number of processes", run)
    process = processes[0]
    resources = process["resources"]
    ctx.require_eq(len(resources), 2, "number of resources", run)
    by_call = {r["call"]: r for r in resources}
    ctx.expect_eq(without_stack(by_call.get("fopen", {})),
                  {"kind": "file", "fd": 3, "path": "log.txt", "flags": "w",
                   "stream": True, "call": "fopen", "suppression": "leak:^open_log$",
                   "suppression_block": "{\n   memtrack:fd:open_log\n   memtrack:FdLeak\n"
                   "   fun:open_log\n   fun:leak\n   fun:main\n}"},
                  "the FILE's resource", run)
    ctx.expect_eq(without_stack(by_call.get("open", {})),
                  {"kind": "file", "fd": 4, "path": "data.bin",
                   "flags": "O_RDWR|O_CREAT|O_TRUNC", "stream": False, "call": "open",
                   "suppression": "leak:^open_data$",
                   "suppression_block": "{\n   memtrack:fd:open_data\n   memtrack:FdLeak\n"
                   "   fun:open_data\n   fun:leak\n   fun:main\n}"},
                  "the descriptor's resource", run)
    ctx.expect_eq(frame0(by_call.get("fopen", {"stack": []})),
                  ("open_log", ctx.source(SOURCE), ctx.marker_line(SOURCE, "// FOPEN")),
                  "frame 0 of the fopen (function, file, line)", run)
    ctx.expect_eq(frame0(by_call.get("open", {"stack": []})),
                  ("open_data", ctx.source(SOURCE), ctx.marker_line(SOURCE, "// OPEN")),
                  "frame 0 of the open (function, file, line)", run)
    summary = process["summary"]
    ctx.expect_eq((summary["open_descriptors"], summary["suppressed_descriptors"],
                   summary["untracked_descriptors"]), (2, 0, 0), "descriptor counts", run)
    ctx.expect_eq((process["leaks"], summary["reachable_bytes"], summary["allocations"]),
                  ([], 0, 0), "memory: no groups, no reachable bytes, no allocations", run)
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    ctx.expect_line("\n".join(lines), "FILE DESCRIPTORS: 2 open at exit, from 2 sites",
                    "text report", run)
    ctx.expect_line("\n".join(lines), "LEAK SUMMARY: no memory leaks (0 allocations, all freed)",
                    "text report", run)


@cli_test
def test_fds_golden_text(ctx):
    """The whole text report of the leak scenario."""
    ctx.expect_golden("fds_leak", ctx.memtrack("run", ctx.program("fds"), "leak"))


@cli_test
def test_fds_path_as_opened(ctx):
    """A descriptor's path is the one the program passed to open or fopen (relative paths
    stay relative), not /proc/self/fd's link, which resolves symlinks (an
    open("/etc/os-release") is not shown as /usr/lib/os-release)."""
    ctx.mkdir("real")
    os.symlink(os.path.join("real", "target.txt"), ctx.path("log.txt"))
    run, processes = run_fds(ctx, "leak")
    paths = sorted((r["call"], r["path"]) for r in processes[0]["resources"])
    ctx.expect_eq(paths, [("fopen", "log.txt"), ("open", "data.bin")],
                  "resources (call, path)", run)
    ctx.expect(os.path.exists(ctx.path("real", "target.txt")), "fopen wrote through the link",
               run)


@cli_test
def test_fds_closed(ctx):
    """Everything closed again: an empty resources array and the one-line report."""
    run, processes = run_fds(ctx, "closed")
    ctx.expect_eq(processes[0]["resources"], [], "resources", run)
    ctx.expect(": no leaks (" in run.stderr and "FILE DESCRIPTORS" not in run.stderr,
               "one-line report without descriptors", run)


@cli_test
def test_fds_inherited_not_reported(ctx):
    """fd 5, opened by the test before memtrack starts and inherited by the program, is used
    and left open: only the program's own descriptor is reported, never fds 0-2 or 5."""
    inherited_path = ctx.path("inherited.txt")
    inherited = os.open(inherited_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    json_path = ctx.path("report.json")
    argv = [ctx.paths.memtrack, "run", f"--json={json_path}", ctx.program("fds"), "inherited"]
    try:
        process = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                 text=True, env=ctx.env(), cwd=ctx.tmp, pass_fds=(5,),
                                 preexec_fn=lambda: os.dup2(inherited, 5), timeout=120)
    finally:
        os.close(inherited)
    run = Run(argv, 0, exit_status(process.returncode), process.stdout, process.stderr)
    ctx.require_eq(run.exit, 0, "exit status (the program found fd 5 open)", run)
    with open(inherited_path, encoding="utf-8") as f:
        ctx.expect_eq(f.read(), "inherited\n", "what the program wrote to fd 5", run)
    resources = ctx.read_json(json_path, run)["processes"][0]["resources"]
    ctx.expect_eq([(r["fd"], r["path"], r["call"]) for r in resources],
                  [(3, "data.bin", "open")], "resources (fd, path, call)", run)


@cli_test
def test_fds_track_fds_no(ctx):
    """--track-fds=no: no resources array, no FILE DESCRIPTORS section, and the FILE object
    fopen allocated is memory again (still reachable: glibc keeps every open FILE in a list);
    with tracking on, no group has the fopen in its stack."""
    run, processes = run_fds(ctx, "leak", "--track-fds=no", "--show-leak-kinds=all")
    process = processes[0]
    ctx.expect("resources" not in process, "no resources array", run)
    ctx.expect("FILE DESCRIPTORS" not in run.stderr, "no FILE DESCRIPTORS section", run)
    stacks = [(g["kind"], g["bytes"], [f["function"] for f in g["stack"]])
              for g in process["leaks"]]
    ctx.expect(any(kind == "reachable" and size == 472 and "open_log" in functions
                   for kind, size, functions in stacks),
               f"a still reachable 472-byte group allocated under open_log: {stacks}", run)
    _, tracked = run_fds(ctx, "leak", "--show-leak-kinds=all")
    ctx.expect_eq(tracked[0]["leaks"], [], "groups with descriptors tracked", run)


@cli_test
def test_fds_error_exitcode(ctx):
    """Descriptors left open are reported but count for --error-exitcode only with
    --error-for-fds=yes (a short tool that exits with a file open passes a CI gate by
    default), and then not when a suppression matches their site; a program that closes
    everything keeps its own status."""
    run, processes = run_fds(ctx, "leak", "--error-exitcode=9", exit=0)
    ctx.expect_eq(len(processes[0]["resources"]), 2, "descriptors reported", run)
    run_fds(ctx, "leak", "--error-exitcode=9", "--error-for-fds=yes", exit=9)
    run_fds(ctx, "closed", "--error-exitcode=9", "--error-for-fds=yes", exit=0)
    suppressions = ctx.write("fds.supp", "leak:open_log\nleak:open_data\n")
    run, processes = run_fds(ctx, "leak", "--error-exitcode=9", "--error-for-fds=yes",
                             f"--suppressions={suppressions}", exit=0)
    summary = processes[0]["summary"]
    ctx.expect_eq((processes[0]["resources"], summary["open_descriptors"],
                   summary["suppressed_descriptors"]), ([], 0, 2),
                  "resources, open and suppressed descriptors", run)


@cli_test
def test_fds_fork_child_inherits(ctx):
    """A forked child has its parent's descriptors, as it has its blocks: the child that
    leaves with _exit reports the file the parent opened (with the parent's stack); the
    parent closes it and reports nothing."""
    run, processes = run_fds(ctx, "fork")
    ctx.require_eq(len(processes), 2, "number of processes", run)
    parent, child = processes
    ctx.expect_eq(parent["resources"], [], "parent's resources", run)
    ctx.expect_eq([(r["fd"], r["path"], frame0(r)[0]) for r in child["resources"]],
                  [(3, "data.bin", "open_data")], "child's resources", run)


ADDRESS = r"(0x[0-9a-f]+)"


def trace_lines(ctx, path, run):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError as e:
        ctx.fail(f"no trace log {path}: {e}", run)
        return []


@cli_test
def test_trace_log_exact(ctx):
    """The event log of the trace scenario: a header, then its calls, one line each, in order,
    with the program's thread id, arguments and results; each pointer freed or passed to
    realloc or fclose is one an earlier line returned, each freed once."""
    log = ctx.path("trace.log")
    ctx.write("trace.log", "left from an earlier run\n")  # memtrack run empties it
    run = ctx.memtrack("run", f"--trace-log={log}", ctx.program("fds"), "trace")
    ctx.require_eq(run.exit, 0, "exit status", run)
    lines = trace_lines(ctx, log, run)
    ctx.require(lines, "empty trace log", run)
    header = re.fullmatch(r"# memtrack trace log: pid (\d+), (.*)", lines[0])
    ctx.require(header, f"header line: {lines[0]!r}", run)
    pid = header.group(1)
    ctx.expect_eq(header.group(2), ctx.program("fds"), "program in the header", run)
    expected = [
        rf"malloc\(16\) = (?P<a>{ADDRESS})",
        rf"calloc\(4, 8\) = (?P<b>{ADDRESS})",
        rf"realloc\((?P=a), 64\) = (?P<c>{ADDRESS})",
        rf"realloc\(0x0, 8\) = (?P<d>{ADDRESS})",
        rf"posix_memalign\(64, 100\) = (?P<e>{ADDRESS})",
        rf"aligned_alloc\(32, 64\) = (?P<f>{ADDRESS})",
        rf'fopen\("trace.txt", "w"\) = (?P<file>{ADDRESS}) \(fd 3\)',
        r'fopen\("no/such/dir/x", "r"\) = 0x0 \(errno 2\)',
        r"fclose\((?P=file)\) = 0 \(fd 3\)",
        r"free\((?P=c)\)",
        r"free\((?P=b)\)",
        r"free\((?P=d)\)",
        r"free\((?P=e)\)",
        r"free\((?P=f)\)",
        r"free\(0x0\)",
    ]
    body = "\n".join(lines[1:])
    pattern = "\n".join(rf"{pid} {line}" for line in expected)
    match = re.fullmatch(pattern, body)
    ctx.expect(match, "the event lines (tid = pid, as in the pattern):\n" + body + "\n"
               "--- expected ---\n" + pattern, run)
    if match:
        live = {match.group(k) for k in "bcdef"}  # d may reuse a's address: a was freed
        ctx.expect_eq(len(live), 5, "the freed blocks are distinct", run)


@cli_test
def test_trace_log_fork(ctx):
    """fork: the parent's buffered lines are written before it, so the child does not write
    them again. One file (no %p): a header for each process, the child's malloc under its own
    pid; with %p: one file per process."""
    log = ctx.path("one.log")
    run = ctx.memtrack("run", f"--trace-log={log}", ctx.program("fds"), "fork")
    ctx.require_eq(run.exit, 0, "exit status", run)
    lines = trace_lines(ctx, log, run)
    headers = [re.fullmatch(r"# memtrack trace log: pid (\d+), (.*)", l) for l in lines]
    pids = [h.group(1) for h in headers if h]
    ctx.require_eq(len(pids), 2, f"header lines in {lines}", run)
    parent, child = pids
    events = [l for l in lines if not l.startswith("#")]
    ctx.expect_eq(sorted(re.sub(r"0x[0-9a-f]+", "P", l) for l in events),
                  sorted([f"{child} malloc(24) = P", f"{parent} malloc(32) = P",
                          f"{parent} free(P)"]), "event lines of both processes", run)
    ctx.expect(f"# memtrack trace log: pid {child}, forked from pid {parent}" in lines,
               "the child's header says whose fork it is", run)

    per_pid = ctx.path("each.%p.log")
    run = ctx.memtrack("run", f"--trace-log={per_pid}", ctx.program("fds"), "fork")
    ctx.require_eq(run.exit, 0, "exit status (%p)", run)
    names = sorted(n for n in os.listdir(ctx.tmp) if re.fullmatch(r"each\.\d+\.log", n))
    ctx.require_eq(len(names), 2, f"per-process logs in {os.listdir(ctx.tmp)}", run)
    for name in names:
        pid = name.split(".")[1]
        lines = trace_lines(ctx, ctx.path(name), run)
        ctx.expect(lines and lines[0].startswith(f"# memtrack trace log: pid {pid}, "),
                   f"{name}: header", run)
        ctx.expect(all(l.startswith(f"{pid} ") for l in lines[1:]),
                   f"{name}: only its own pid's lines: {lines}", run)
