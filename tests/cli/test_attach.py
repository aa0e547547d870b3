"""memtrack attach and memtrack detach (docs/attach.md): a service started without memtrack is
attached, reported and detached, attached again; a thread storming malloc survives twenty
attach/detach cycles; redis-server under load is attached and detached without a failed
request; the refusals say what to do."""

import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

from cli_harness import Failure, cli_test
from test_ui import start_ui

SOURCE = "attach_service.c"


def frame0(group):
    top = group["stack"][0] if group["stack"] else {}
    return (top.get("function"), top.get("file"), top.get("line"))


def wait_for(ctx, path, process=None, seconds=60):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if process is not None and process.poll() is not None:
            raise Failure(f"the process ended before {path} appeared")
        if time.monotonic() > deadline:
            raise Failure(f"{path} did not appear within {seconds} s")
        time.sleep(0.02)


def start_service(ctx, *args, program="attach_service"):
    """Starts cli_attach_service plainly (no memtrack); returns (process, its directory)."""
    work = ctx.mkdir("service_" + program)
    process = subprocess.Popen([ctx.program(program), work, *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True)
    wait_for(ctx, os.path.join(work, "ready"), process)
    return process, work


def start_attach(ctx, pid, *args):
    """Starts memtrack attach PID ARGS in the background; returns it once it has attached."""
    process = subprocess.Popen([ctx.paths.memtrack, "attach", str(pid), *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True)
    deadline = time.monotonic() + 60
    while True:
        with open(f"/proc/{pid}/maps", encoding="utf-8") as f:
            if "libmemtrack_attach.so" in f.read() and settings_published(ctx, pid):
                return process
        if process.poll() is not None:
            out, err = process.communicate()
            raise Failure(f"memtrack attach ended early ({process.returncode}): {err}{out}")
        if time.monotonic() > deadline:
            process.kill()
            raise Failure("memtrack attach did not attach within 60 s")
        time.sleep(0.02)


def settings_published(ctx, pid):
    with open(f"/proc/{pid}/maps", encoding="utf-8") as f:
        return f"memtrack.{pid}.settings" in f.read()


def finish(process, seconds=60):
    out, err = process.communicate(timeout=seconds)
    return process.returncode, out, err


def run_round(ctx, work, number, process):
    """Runs round `number` of cli_attach_service; returns what it wrote (glibc's
    __libc_single_threaded, its own copy and the executable's)."""
    open(os.path.join(work, f"go.{number}"), "w").close()
    done = os.path.join(work, f"done.{number}")
    wait_for(ctx, done, process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(done, encoding="utf-8") as f:
            text = f.read()
        if text.endswith("\n"):
            return text.strip()
        time.sleep(0.02)
    raise Failure(f"{done} was not written whole")


def stop_service(process):
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.communicate()


@cli_test
def test_attach_service(ctx):
    """A service started plainly, attached, reported (a snapshot too), detached and attached
    again: each report
    has exactly the leak made while attached (3 blocks of 100 bytes at @leak), the nodes added
    after the attach to a list built before it are still reachable (no false definite leak),
    frees of blocks from before the attach are no errors, and the service runs on after each
    detach, with nothing of memtrack's left patched or published, and glibc told again that it
    is single-threaded (as it was before the attach). A second attach is refused; when memtrack
    attach is killed, the runtime detaches on its own."""
    service, work = start_service(ctx)
    try:
        pid = service.pid
        leak_site = ("leak_after_attach", ctx.source(SOURCE), ctx.marker_line(SOURCE, "@leak"))
        ctx.expect_eq(run_round(ctx, work, 1, service), "single_threaded 1 1",
                      "glibc knows the service as single-threaded before any attach")
        rounds = 1
        for attach_round in (1, 2):
            json_path = ctx.path(f"attach{attach_round}.json")
            attach = start_attach(ctx, pid, f"--json={json_path}", "--error-exitcode=7")
            rounds += 1
            ctx.expect_eq(run_round(ctx, work, rounds, service), "single_threaded 0 0",
                          "memtrack's thread makes the service multi-threaded while attached")
            again = ctx.memtrack("attach", str(pid))
            ctx.expect_error(again, 125, f"process {pid} is already attached by another memtrack "
                             "attach", "a second attach")
            snapshot = ctx.memtrack("snapshot", str(pid))
            ctx.expect_eq(snapshot.exit, 0, "memtrack snapshot of the attached process", snapshot)
            ctx.expect("definitely lost: 300 bytes in 3 blocks" in snapshot.stdout,
                       f"attach {attach_round}: the snapshot has the leak", snapshot)
            detach = ctx.memtrack("detach", str(pid))
            ctx.require_eq(detach.exit, 0, "memtrack detach's exit status", detach)
            status, out, err = finish(attach)
            ctx.expect_eq(status, 7, f"attach {attach_round}: --error-exitcode for the leak")
            ctx.expect(f"memtrack: attached to process {pid}" in err,
                       f"attach {attach_round}: the attach is announced on stderr ({err!r})")
            ctx.expect("definitely lost: 300 bytes in 3 blocks" in out + err,
                       f"attach {attach_round}: the text report's leak summary ({out!r})")
            p = ctx.read_json(json_path)["processes"][0]
            ctx.expect_eq(p["pid"], pid, f"attach {attach_round}: the report's pid")
            ctx.expect(p["occasion"].startswith("detached after ") and
                       p["occasion"].endswith(" s attached"),
                       f"attach {attach_round}: the occasion ({p['occasion']!r})")
            ctx.expect("ATTACHED " in out and " in use before are not tracked; 5 blocks of them"
                       in out, f"attach {attach_round}: what the attach cannot see ({out!r})")
            definite = [(g["bytes"], g["blocks"], frame0(g)) for g in p["leaks"]
                        if g["kind"] == "definite"]
            ctx.expect_eq(definite, [(300, 3, leak_site)],
                          f"attach {attach_round}: the definitely lost groups")
            summary = p["summary"]
            ctx.expect_eq((summary["indirect_bytes"], summary["possible_bytes"]), (0, 0),
                          f"attach {attach_round}: no indirect or possible leak")
            # The five 64-byte nodes from before the attach freed in the round, each with
            # glibc's usable size (72 bytes); and the 1,000-node list was in use at the attach.
            ctx.expect_eq((summary["preexisting_frees"], summary["preexisting_freed_bytes"]),
                          (5, 5 * 72), f"attach {attach_round}: the older blocks freed")
            ctx.expect(summary["preexisting_bytes"] >= 1000 * 64 and summary["attached_ms"] > 0,
                       f"attach {attach_round}: bytes in use at the attach, time attached "
                       f"({summary['preexisting_bytes']}, {summary['attached_ms']})")
            # The ten 64-byte nodes this attach saw added: still reachable.
            ctx.expect_eq((summary["reachable_bytes"], summary["reachable_blocks"]), (640, 10),
                          f"attach {attach_round}: the nodes grown after the attach")
            ctx.expect_eq(p["errors"], [], f"attach {attach_round}: no misuse errors")
            ctx.expect(service.poll() is None, f"attach {attach_round}: the service runs on")
            ctx.expect(not settings_published(ctx, pid),
                       f"attach {attach_round}: the settings file is unpublished")
            with open(f"/proc/{pid}/task/{pid}/status", encoding="utf-8") as f:
                ctx.expect("TracerPid:\t0" in f.read(), "no tracer is left")
            threads = os.listdir(f"/proc/{pid}/task")
            ctx.expect_eq(len(threads), 1, f"attach {attach_round}: memtrack's thread is gone")
            rounds += 1
            ctx.expect_eq(run_round(ctx, work, rounds, service), "single_threaded 1 1",
                          f"attach {attach_round}: glibc knows the service as single-threaded "
                          "again after the detach (its malloc's lock-free path)")
        # memtrack attach killed: the runtime notices and detaches on its own, without a report.
        attach = start_attach(ctx, pid)
        attach.kill()
        attach.communicate()
        deadline = time.monotonic() + 10
        while settings_published(ctx, pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        ctx.expect(not settings_published(ctx, pid), "detached on its own after the CLI died")
        while len(os.listdir(f"/proc/{pid}/task")) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        ctx.expect_eq(len(os.listdir(f"/proc/{pid}/task")), 1, "memtrack's thread is gone")
        # After the detach the service's own allocator serves its blocks and frees them.
        run_round(ctx, work, rounds + 1, service)
        ctx.expect(service.poll() is None, "the service runs a round after the last detach")
    finally:
        stop_service(service)


def read_lines_json(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


@cli_test
def test_attach_live_profile_pprof(ctx):
    """What memtrack run offers a running program, attached: live reports (--expire, to the
    terminal and --live-json) name the leak made while attached with its exact bytes; the pprof
    endpoint's /metrics has the leak; memtrack ui marks the process as tracked and as recording a
    heap profile while attached, and no longer after the detach; the heap profile (--profile)
    covers the attach: the leak site's 300 bytes are not freed at its end."""
    service, work = start_service(ctx)
    live_path = ctx.path("live.jsonl")
    profile_path = ctx.path("attached.prof")
    port = free_port()
    ui = start_ui(ctx)
    try:
        pid = service.pid
        leak_site = ("leak_after_attach", ctx.source(SOURCE), ctx.marker_line(SOURCE, "@leak"))
        attach = start_attach(ctx, pid, "--expire=300ms", f"--live-json={live_path}",
                              f"--profile={profile_path}", f"--pprof-http={port}",
                              f"--json={ctx.path('final.json')}")
        run_round(ctx, work, 1, service)
        deadline = time.monotonic() + 60
        named = []
        while not named and time.monotonic() < deadline:
            named = [s for r in read_lines_json(live_path) for s in r["sites"]
                     if frame0(s) == leak_site]
            time.sleep(0.1)
        ctx.expect(named and named[-1]["bytes"] == 300 and named[-1]["blocks"] == 3,
                   f"a live report names the leak site with 300 bytes in 3 blocks ({named})")
        metrics = urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            f"http://127.0.0.1:{port}/metrics", timeout=60).read().decode()
        ctx.expect(f'memtrack_leaked_bytes{{pid="{pid}",kind="definite"}} 300' in metrics,
                   f"/metrics has the leak:\n{metrics}")

        def marks():
            rows = [p for p in json.loads(ui.request("/api/processes")[2])["processes"]
                    if p["pid"] == pid]
            return [(p["memtrack"], p["profile"]) for p in rows]
        deadline = time.monotonic() + 30  # the ui reads an untracked process's map every 5 s
        while marks() != [(True, True)] and time.monotonic() < deadline:
            time.sleep(0.5)
        ctx.expect_eq(marks(), [(True, True)], "memtrack ui marks the attached process")
        detach = ctx.memtrack("detach", str(pid))
        ctx.require_eq(detach.exit, 0, "memtrack detach's exit status", detach)
        status, out, err = finish(attach)
        ctx.expect_eq(status, 0, f"memtrack attach's exit status ({err!r})")
        ctx.expect("memtrack live report #1 for " in err, f"live reports on stderr ({err!r})")
        ctx.expect(f"memtrack: heap profile of pid {pid}: {profile_path}" in err,
                   f"the profile is announced ({err!r})")
        deadline = time.monotonic() + 30
        while marks() != [(False, False)] and time.monotonic() < deadline:
            time.sleep(0.5)
        ctx.expect_eq(marks(), [(False, False)], "memtrack ui unmarks it after the detach")
        report = ctx.memtrack("report", profile_path, f"--json={ctx.path('profile.json')}")
        ctx.require_eq(report.exit, 0, "memtrack report PROFILE", report)
        sites = ctx.read_json(ctx.path("profile.json"), report)["sites"]
        leaked = [(s["leaked_bytes"], s["leaked_blocks"]) for s in sites
                  if s["stack"] and (s["stack"][0]["function"], s["stack"][0]["file"],
                                     s["stack"][0]["line"]) == leak_site]
        ctx.expect_eq(leaked, [(300, 3)], "the profile: the leak site's blocks not freed")
        ctx.expect(service.poll() is None, "the service runs on")
    finally:
        ui.stop()
        stop_service(service)


@cli_test
def test_attach_sampled(ctx):
    """memtrack attach --sample: the leak totals stay exact (300 bytes in 3 blocks definitely
    lost), the report says it is sampled."""
    service, work = start_service(ctx)
    try:
        attach = start_attach(ctx, service.pid, "--sample=4KiB", "--sample-seed=7",
                              f"--json={ctx.path('sampled.json')}")
        run_round(ctx, work, 1, service)
        ctx.require_eq(ctx.memtrack("detach", str(service.pid)).exit, 0, "memtrack detach")
        status, out, err = finish(attach)
        ctx.expect_eq(status, 0, f"memtrack attach's exit status ({err!r})")
        ctx.expect("SAMPLED: " in out, f"the report says it is sampled ({out!r})")
        summary = ctx.read_json(ctx.path("sampled.json"))["processes"][0]["summary"]
        ctx.expect_eq((summary["definite_bytes"], summary["definite_blocks"]), (300, 3),
                      "the exact definitely lost totals")
    finally:
        stop_service(service)


@cli_test
def test_attach_jemalloc(ctx):
    """A service linked with jemalloc, attached: its blocks from mallocx (3 of 100 bytes,
    dropped) are recorded at their line, the dallocx of blocks from before the attach are no
    errors, and the service runs on after the detach. Their verdict is "still reachable":
    jemalloc's own memory, which an attached scan reads as roots (the blocks from before the
    attach live there too), keeps copies of their addresses (docs/attach.md)."""
    service, work = start_service(ctx, program="jemalloc_attach_service")
    try:
        json_path = ctx.path("jemalloc.json")
        attach = start_attach(ctx, service.pid, f"--json={json_path}", "--show-leak-kinds=all")
        run_round(ctx, work, 1, service)
        ctx.require_eq(ctx.memtrack("detach", str(service.pid)).exit, 0, "memtrack detach")
        status, out, err = finish(attach)
        ctx.expect_eq(status, 0, f"memtrack attach's exit status ({err!r})")
        process = ctx.read_json(json_path)["processes"][0]
        site = ("leak_after_attach", ctx.source(SOURCE), ctx.marker_line(SOURCE, "@mallocx-leak"))
        groups = [(g["bytes"], g["blocks"], frame0(g)) for g in process["leaks"]]
        ctx.expect((300, 3, site) in groups, f"the mallocx blocks at their line ({groups})")
        ctx.expect_eq(process["errors"], [], "dallocx of blocks from before the attach")
        run_round(ctx, work, 2, service)  # detached: jemalloc's own functions again
        ctx.expect(service.poll() is None, "the service runs on after the detach")
    finally:
        stop_service(service)


@cli_test
def test_attach_program_exit(ctx):
    """A program that ends while attached: its exit report is the final report."""
    service, work = start_service(ctx)
    try:
        attach = start_attach(ctx, service.pid)
        run_round(ctx, work, 1, service)
        open(os.path.join(work, "exit"), "w").close()
        status, out, err = finish(attach)
        ctx.expect_eq(service.wait(timeout=60), 0, "the program's own exit status")
        ctx.expect_eq(status, 0, f"memtrack attach's exit status ({err!r})")
        ctx.expect("definitely lost: 300 bytes in 3 blocks" in out + err,
                   f"the exit report has the leak ({out!r} {err!r})")
    finally:
        stop_service(service)


@cli_test
def test_attach_storm(ctx):
    """Four threads allocating and freeing without pause: a hundred attach/detach cycles in a
    row, each reporting no leak, and the program runs on."""
    service, _ = start_service(ctx, "storm")
    try:
        for cycle in range(100):
            run = ctx.memtrack("attach", str(service.pid), "--duration=0.1")
            ctx.require_eq(run.exit, 0, f"cycle {cycle}: memtrack attach's exit status", run)
            # On a loaded machine the storm thread may not stop for the leak scan within its
            # second (it is inside memtrack nearly all the time); the report then says its
            # stack was read while it ran, and its verdict on that thread's blocks is not
            # exact. Otherwise it must find no leak.
            if "did not stop for the leak scan" not in run.stderr:
                ctx.require("no leaks" in run.stdout + run.stderr,
                            f"cycle {cycle}: the report says no leaks", run)
            ctx.require(service.poll() is None, f"cycle {cycle}: the program runs on")
        time.sleep(0.2)
        ctx.expect(service.poll() is None, "the program runs on after the last detach")
    finally:
        stop_service(service)


@cli_test
def test_attach_refusals(ctx):
    """No such process, a stopped one, a traced one, one already under memtrack run, a static
    program, a process not attached (memtrack detach): each refused with one line saying what
    to do."""
    with open("/proc/sys/kernel/pid_max", encoding="utf-8") as f:
        missing = int(f.read()) + 1
    run = ctx.memtrack("attach", str(missing))
    ctx.expect_error(run, 125, f"no process {missing}", "no such process")
    run = ctx.memtrack("detach", str(missing))
    ctx.expect_error(run, 125, f"no process {missing}", "detach: no such process")

    service, _ = start_service(ctx)
    try:
        os.kill(service.pid, signal.SIGSTOP)
        run = ctx.memtrack("attach", str(service.pid))
        ctx.expect_error(run, 125, f"process {service.pid} is stopped: continue it first "
                         f"(kill -CONT {service.pid})", "a stopped process")
        os.kill(service.pid, signal.SIGCONT)
        run = ctx.memtrack("detach", str(service.pid))
        ctx.expect_error(run, 125, f"process {service.pid} is not attached by memtrack attach",
                         "detach of a process never attached")
        # Traced by this test (PTRACE_SEIZE: it keeps running); the kill below ends it.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        ctx.require_eq(libc.ptrace(0x4206, service.pid, None, None), 0,
                       f"PTRACE_SEIZE of the service (errno {ctypes.get_errno()})")
        run = ctx.memtrack("attach", str(service.pid))
        with open("/proc/self/comm", encoding="utf-8") as f:
            comm = f.read().strip()
        ctx.expect_error(run, 125, f"process {service.pid} is already traced by process "
                         f"{os.getpid()} ({comm}): detach that first", "a traced process")
    finally:
        stop_service(service)

    static, _ = start_service(ctx, program="static_attach_service")
    try:
        run = ctx.memtrack("attach", str(static.pid))
        ctx.expect_error(run, 125, f"process {static.pid} is statically linked (no glibc to "
                         "load into): memtrack attach needs a dynamically linked glibc program "
                         "(link a static one with 'memtrack link-flags' and run it under "
                         "memtrack run)", "a static program")
    finally:
        stop_service(static)

    under_run = subprocess.Popen([ctx.paths.memtrack, "run", "--", ctx.program("attach_service"),
                                  ctx.mkdir("run_service")], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=ctx.env(), cwd=ctx.tmp)
    try:
        wait_for(ctx, os.path.join(ctx.path("run_service"), "ready"), under_run)
        pid = next(int(t) for t in os.listdir("/proc") if t.isdigit() and
                   open(f"/proc/{t}/cmdline", "rb").read().split(b"\0")[0].endswith(
                       b"cli_attach_service") and
                   str(under_run.pid) == open(f"/proc/{t}/stat").read().split()[3])
        run = ctx.memtrack("attach", str(pid))
        ctx.expect_error(run, 125, f"process {pid} already runs under memtrack (memtrack run or "
                         f"the link-time runtime): use 'memtrack snapshot {pid}'",
                         "a program under memtrack run")
    finally:
        under_run.send_signal(signal.SIGTERM)
        under_run.communicate(timeout=60)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@cli_test
def test_attach_redis(ctx):
    """redis-server (Debian's, on jemalloc) under redis-benchmark load: attached for a second and
    detached while the benchmark runs, without a failed request; it keeps its threads and
    answers after the detach."""
    port = str(free_port())
    redis = subprocess.Popen(["redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--daemonize", "no"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=ctx.tmp)
    try:
        deadline = time.monotonic() + 60
        while ctx.run(["redis-cli", "-p", port, "ping"]).stdout.strip() != "PONG":
            ctx.require(redis.poll() is None and time.monotonic() < deadline,
                        "redis-server started")
            time.sleep(0.05)
        threads = len(os.listdir(f"/proc/{redis.pid}/task"))
        bench = subprocess.Popen(["redis-benchmark", "-p", port, "-n", "200000", "-c", "4", "-q",
                                  "-t", "set,get"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(0.3)
        run = ctx.memtrack("attach", str(redis.pid), "--duration=1")
        out, _ = bench.communicate(timeout=300)
        ctx.expect_eq(run.exit, 0, "memtrack attach's exit status", run)
        ctx.expect(f"(pid {redis.pid}," in run.stdout + run.stderr, "the report of redis", run)
        ctx.expect_eq(bench.returncode, 0, f"redis-benchmark's exit status ({out[-500:]!r})")
        ctx.expect("rror" not in out and out.count("requests per second") == 2,
                   f"no failed request ({out[-500:]!r})")
        ctx.expect(redis.poll() is None, "redis-server runs on")
        ctx.expect_eq(ctx.run(["redis-cli", "-p", port, "ping"]).stdout.strip(), "PONG",
                      "redis answers after the detach")
        ctx.expect_eq(len(os.listdir(f"/proc/{redis.pid}/task")), threads,
                      "redis has its threads and no other")
    finally:
        redis.kill()
        redis.communicate()
