"""The exit leak scan at the edges: mappings that vanish or fault while it reads them, a
thread it cannot stop, a timer whose handler allocates, gdb (whose threads block signals
and whose mappings change as it exits). The scan must never fault, never wait for a thread
that cannot answer, and see a heap no signal handler changes under it."""

import shutil

from cli_harness import cli_test, leak_groups


def reachable_bytes(process):
    return process["summary"]["reachable_bytes"]


def run_json(ctx, *argv, name="report.json"):
    json_path = ctx.path(name)
    run = ctx.memtrack("run", f"--json={json_path}", "--show-leak-kinds=all", *argv)
    return run, json_path


@cli_test
def test_scan_mapping_race(ctx):
    """Unmapped, PROT_NONE and truncated-file pages during the scan, ten runs in a row."""
    for attempt in range(10):
        run, json_path = run_json(ctx, ctx.program("mapping_race"), name=f"r{attempt}.json")
        ctx.require_eq(run.exit, 0, f"exit status of run {attempt}", run)
        process = ctx.read_json(json_path, run)["processes"][0]
        ctx.expect_eq([g for g in leak_groups(process) if g[2] == "leak_site"],
                      [(512, 1, "leak_site")], "the lost block", run)
        guarded = [(g["bytes"], g["blocks"], g["kind"]) for g in process["leaks"]
                   if g["stack"] and g["stack"][0]["function"] == "guard_pages"]
        ctx.expect_eq(guarded, [(768, 32, "reachable")],
                      "the blocks only pages between guard pages point to", run)
        ctx.expect("did not stop" not in run.stderr,
                   "a thread that blocks every signal is not waited for", run)


@cli_test
def test_scan_timer_handler_deferred(ctx):
    """A SIGALRM handler that frees and allocates every 100 µs never runs during the scan."""
    for attempt in range(5):
        run, json_path = run_json(ctx, ctx.program("timer_alloc"), name=f"r{attempt}.json")
        ctx.require_eq(run.exit, 0, f"exit status of run {attempt}", run)
        process = ctx.read_json(json_path, run)["processes"][0]
        lost = [(g["bytes"], g["blocks"], g["kind"]) for g in process["leaks"]
                if g["kind"] != "reachable" and g["stack"] and
                g["stack"][0]["function"] in ("lost_site", "on_alarm", "main")]
        ctx.expect_eq(lost, [(100, 1, "definite")], f"lost blocks of run {attempt}", run)


@cli_test
def test_scan_gdb(ctx):
    """gdb running a small program, twenty times: gdb exits normally every time."""
    gdb = shutil.which("gdb")
    ctx.require(gdb is not None, "gdb is installed (scripts/install-deps.sh installs it)")
    for attempt in range(20):
        run = ctx.memtrack("run", "--snapshots=no", "--", gdb, "-q", "-nx", "--batch",
                           "-ex", "run", ctx.program("no_leak"))
        ctx.require_eq(run.exit, 0, f"exit status of gdb run {attempt}", run)


@cli_test
def test_scan_short_process_not_stalled(ctx):
    """memtrack's own thread (snapshots are on by default) is never waited for: the scan
    warns when it had to wait out a thread, and /bin/true must not make it."""
    for _ in range(5):
        run = ctx.memtrack("run", "--", "/bin/true")
        ctx.require_eq(run.exit, 0, "exit status", run)
        ctx.expect("did not stop" not in run.stderr, "no thread waited out", run)


@cli_test
def test_scan_exiting_threads_not_waited(ctx):
    """Threads that exit as the report starts, and one that blocks every signal: none is
    waited for (the scan warns when it waits a thread out), ten runs in a row."""
    for attempt in range(10):
        run = ctx.memtrack("run", ctx.program("exiting_threads"))
        ctx.require_eq(run.exit, 0, f"exit status of run {attempt}", run)
        ctx.expect("did not stop" not in run.stderr, f"no thread waited out in run {attempt}",
                   run)
        ctx.expect("21 bytes in 1 block is definitely lost" in run.stderr,
                   f"the leak in run {attempt}", run)
