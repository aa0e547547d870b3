"""Live mode (memtrack run --expire, docs/cli.md "Live reports") and memtrack snapshot, on
cli_daemon (programs/daemon.c): leak_one() leaks a block every 50 ms (line @leak),
cache_one() holds 20 blocks for 1.5 s, frees them and starts over (@cache), and lose_one()
loses one 48-byte block at start (@lost)."""

import json
import os
import signal
import shutil
import subprocess
import time

from cli_harness import Failure, cli_test

SOURCE = "daemon.c"


def frame0(ctx, site):
    top = site["stack"][0] if site["stack"] else {}
    return (top.get("function"), top.get("file"), top.get("line"))


def site_at(ctx, marker, function):
    return (function, ctx.source(SOURCE), ctx.marker_line(SOURCE, marker))


@cli_test
def test_live_reports(ctx):
    """Reports every second with blocks older than 1 s: the leaking site is named within three
    reports and marked growing; the cache is never growing, and its blocks freed after being
    reported are counted; text goes to the log, followed by the exit report."""
    live_path = ctx.path("live.jsonl")
    log_path = ctx.path("log.txt")
    run = ctx.memtrack("run", "--expire=1s", f"--live-json={live_path}",
                       f"--log-file={log_path}", ctx.program("daemon"), "6")
    ctx.require_eq(run.exit, 0, "exit status", run)
    with open(live_path, encoding="utf-8") as f:
        reports = [json.loads(line) for line in f]
    ctx.require(len(reports) >= 4, f"at least 4 live reports in 6 s, got {len(reports)}", run)
    ctx.expect_eq([r["sequence"] for r in reports], list(range(1, len(reports) + 1)),
                  "report sequence numbers", run)
    ctx.expect(all(r["type"] == "live" and r["expire_ms"] == 1000 and r["interval_ms"] == 1000
                   for r in reports), "type, expire_ms and interval_ms of every report", run)
    leak = site_at(ctx, "@leak", "leak_one")
    cache = site_at(ctx, "@cache", "cache_one")
    named = [r["sequence"] for r in reports if any(frame0(ctx, s) == leak for s in r["sites"])]
    ctx.expect(named and named[0] <= 3,
               f"the leaking site {leak} is named within three reports (named in {named})", run)
    leak_sites = [s for r in reports for s in r["sites"] if frame0(ctx, s) == leak]
    ctx.expect(any(s["growing"] for s in leak_sites), "the leaking site is marked growing", run)
    ctx.expect(all(s["bytes"] == 100 * s["blocks"] for s in leak_sites),
               "the leaking site's blocks are 100 bytes each", run)
    cache_sites = [s for r in reports for s in r["sites"] if frame0(ctx, s) == cache]
    ctx.expect(not any(s["growing"] for s in cache_sites),
               f"the cache is never marked growing: {cache_sites}", run)
    ctx.expect(sum(r["freed_since_last"] for r in reports) >= 20,
               "the cache's blocks, freed after a report counted them, are counted", run)
    with open(log_path, encoding="utf-8") as f:
        log = f.read()
    ctx.expect("memtrack live report #1 for " in log, "live report #1 in the log", run)
    ctx.expect("GROWING" in log, "a site marked GROWING in the text", run)
    ctx.expect(log.rfind("exited with status 0") > log.rfind("memtrack live report #"),
               "the exit report follows the live reports in the log", run)


@cli_test
def test_live_reports_sampled(ctx):
    """The same daemon in the sampled mode at a 256-byte interval (a 100-byte block is sampled
    with p = 0.32; the seed is fixed): the leaking site is an estimated site that grows and is
    marked growing, the old blocks without a stack are a site of their own, the totals of each
    report are the sum of its sites' counts, and the text says which figures are estimates."""
    live_path = ctx.path("live.jsonl")
    log_path = ctx.path("log.txt")
    run = ctx.memtrack("run", "--expire=1s", "--sample=256", "--sample-seed=3",
                       f"--live-json={live_path}", f"--log-file={log_path}",
                       ctx.program("daemon"), "6")
    ctx.require_eq(run.exit, 0, "exit status", run)
    with open(live_path, encoding="utf-8") as f:
        reports = [json.loads(line) for line in f]
    ctx.require(len(reports) >= 4, f"at least 4 live reports in 6 s, got {len(reports)}", run)
    ctx.expect(all(r.get("sample_interval_bytes") == 256 for r in reports),
               "every report gives the sampling interval", run)
    ctx.expect(all(r["old_bytes"] == sum(s["bytes"] for s in r["sites"]) for r in reports),
                "each report's old bytes are its sites' (sampled and not sampled) exactly", run)
    leak = site_at(ctx, "@leak", "leak_one")
    leak_sites = [s for r in reports for s in r["sites"] if frame0(ctx, s) == leak]
    ctx.require(leak_sites, "the leaking site is named", run)
    ctx.expect(all(s.get("sampling") == "estimated" and s["estimated_blocks"] >= s["blocks"]
                   and s["estimated_bytes"] >= s["bytes"] for s in leak_sites),
               f"the leaking site is estimated, at least its sampled blocks: {leak_sites}", run)
    ctx.expect(any(s["growing"] for s in leak_sites), "the leaking site is marked growing", run)
    estimates = [s["estimated_blocks"] for s in leak_sites]
    ctx.expect(estimates[-1] > estimates[0], f"its estimate grows: {estimates}", run)
    unsampled = [s for r in reports for s in r["sites"] if s.get("sampling") == "not_sampled"]
    ctx.expect(unsampled and all(s["stack"] == [] and s["blocks"] > 0 for s in unsampled),
               "the old blocks without a stack are a site of their own, with no stack", run)
    with open(log_path, encoding="utf-8") as f:
        log = f.read()
    ctx.expect("SAMPLED: about one allocation per 256 bytes has a stack" in log,
               "the text says the sites are estimates", run)
    ctx.expect(" were not sampled (" in log, "the text's line of blocks not sampled", run)
    ctx.expect("GROWING" in log, "a site marked GROWING in the text", run)


@cli_test
def test_live_bad_duration(ctx):
    run = ctx.memtrack("run", "--expire=soon", ctx.program("daemon"), "0")
    ctx.expect_error(run, 125, "--expire expects a duration from 10ms to 24 days such as 500ms, "
                     "30s, 5m or 1h, not 'soon'")


def start_daemon(ctx, *options, seconds="30"):
    """memtrack run OPTIONS cli_daemon SECONDS in the background: (Popen, the daemon's pid)."""
    process = subprocess.Popen(
        [ctx.paths.memtrack, "run", *options, ctx.program("daemon"), seconds],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=ctx.env(), cwd=ctx.tmp, text=True)
    line = process.stdout.readline()
    if not line.startswith("ready "):
        process.kill()
        raise Failure(f"cli_daemon did not start: {line!r} {process.stderr.read()}")
    return process, int(line.split()[1])


def stop_daemon(ctx, process):
    process.send_signal(signal.SIGTERM)  # memtrack forwards it; the daemon ends its loop
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise Failure("memtrack run did not end after SIGTERM")
    ctx.expect_eq(process.returncode, 0, f"memtrack run's exit status ({stderr})")
    return stderr


@cli_test
def test_snapshot(ctx):
    """A full report of the running daemon, leak classes included; it keeps running."""
    process, pid = start_daemon(ctx)
    try:
        json_path = ctx.path("snapshot.json")
        run = ctx.memtrack("snapshot", str(pid), f"--json={json_path}")
        ctx.require_eq(run.exit, 0, "memtrack snapshot's exit status", run)
        processes = ctx.read_json(json_path, run)["processes"]
        ctx.require_eq(len(processes), 1, "number of processes", run)
        p = processes[0]
        ctx.expect_eq((p["pid"], p["exit"]), (pid, {"running": True}), "pid and exit", run)
        lost = [g for g in p["leaks"] if g["kind"] == "definite"]
        ctx.expect_eq([(g["bytes"], g["blocks"], frame0(ctx, g)) for g in lost],
                      [(48, 1, site_at(ctx, "@lost", "lose_one"))], "definitely lost groups",
                      run)
        ctx.expect(f"(pid {pid}, parent " in run.stdout and ") is running" in run.stdout,
                   "the text report (on stdout) says the process is running", run)
        ctx.expect("definitely lost: 48 bytes in 1 block" in run.stdout,
                   "the text report's LEAK SUMMARY", run)
        ctx.expect(not [f for f in os.listdir(ctx.tmpdir) if f.startswith("snapshot.")],
                   "the snapshot file was removed", run)
        # JSON on stdout: stdout is the JSON alone, the text goes to stderr.
        run = ctx.memtrack("snapshot", str(pid), "--json=-")
        ctx.require_eq(run.exit, 0, "memtrack snapshot --json=-'s exit status", run)
        try:
            on_stdout = json.loads(run.stdout)["processes"][0]["pid"]
        except (ValueError, KeyError, IndexError):
            on_stdout = None
        ctx.expect_eq(on_stdout, pid, "--json=-: stdout is the JSON report alone", run)
        ctx.expect("definitely lost: 48 bytes in 1 block" in run.stderr,
                   "--json=-: the text report on stderr", run)
    finally:
        stderr = stop_daemon(ctx, process)
    ctx.expect("definitely lost: 48 bytes in 1 block" in stderr,
               "the daemon ran on and its exit report has the leak too")


@cli_test
def test_snapshot_errors(ctx):
    """Not under memtrack, no such process, snapshots turned off."""
    run = ctx.memtrack("snapshot", str(os.getpid()))
    ctx.expect_error(run, 125, f"process {os.getpid()} does not run under memtrack (start it "
                     "with 'memtrack run')", "a process not under memtrack")
    with open("/proc/sys/kernel/pid_max", encoding="utf-8") as f:
        missing = int(f.read()) + 1  # above every pid
    run = ctx.memtrack("snapshot", str(missing))
    ctx.expect_error(run, 125, f"no process {missing}", "no such process")
    process, pid = start_daemon(ctx, "--snapshots=no")
    try:
        run = ctx.memtrack("snapshot", str(pid))
        ctx.expect_error(run, 125, f"process {pid} does not take snapshot requests (it was "
                         "started with --snapshots=no)", "--snapshots=no")
    finally:
        stop_daemon(ctx, process)


@cli_test
def test_snapshot_rewritten_environment(ctx):
    """A program that wrote its process title over its environment (as redis does): memtrack
    snapshot finds its settings in the file the runtime maps, not in /proc/PID/environ, and
    reports its leak; once its result directory is gone, the refusal says so."""
    ready = ctx.path("ready")
    argv = [ctx.paths.memtrack, "run", "--keep-results=" + ctx.path("results"),
            ctx.program("rewrite_environ"), ready]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True)
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(ready) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        ctx.require(os.path.exists(ready), "cli_rewrite_environ started")
        pid = next(int(name.split(".")[1]) for name in os.listdir(ctx.path("results"))
                   if name.endswith(".started"))
        with open(f"/proc/{pid}/environ", "rb") as f:
            ctx.expect(b"MEMTRACK_OPTIONS" not in f.read(), "the environment was overwritten")
        run = ctx.memtrack("snapshot", str(pid))
        ctx.require_eq(run.exit, 0, "memtrack snapshot's exit status", run)
        ctx.expect("definitely lost: 48 bytes in 1 block" in run.stdout, "the snapshot's leak", run)
        shutil.rmtree(ctx.path("results"))
        run = ctx.memtrack("snapshot", str(pid))
        ctx.expect_error(run, 125, f"process {pid} runs under memtrack, but its result "
                         f"directory {ctx.path('results')} was removed (the memtrack run that "
                         "started it has ended, or its files were deleted)",
                         "the result directory removed")
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
