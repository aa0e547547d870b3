"""memtrack ui over HTTP (docs/ui.md "Security"), with urllib and no browser: the token is
required on every request, a foreign Host or Origin is refused, the default listens on the
loopback addresses only and --listen elsewhere warns, only the snapshot request is a POST and
only for the user's own processes, no file but the named ones is served, and the process table
and a snapshot of cli_daemon carry the kernel's and the runtime's numbers."""

import json
import os
import select
import signal
import subprocess
import time
import urllib.error
import urllib.request

from cli_harness import Failure, cli_test
from test_live import start_daemon, stop_daemon

# No proxy, even if the environment names one: the server is on this machine.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Ui:
    """A running `memtrack ui ARGS`: its URL, port, token, and requests to it."""

    def __init__(self, ctx, *args):
        self.process = subprocess.Popen(
            [ctx.paths.memtrack, "ui", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline() if ready else ""
        if "serving at " not in line:
            self.stop()
            raise Failure(f"memtrack ui did not start: {line!r} {self.stderr}")
        self.url = line.split("serving at ")[1].strip()
        self.base, query = self.url.split("/?token=")
        self.token = query
        self.port = int(self.base.rsplit(":", 1)[1])
        self.stderr = ""

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            _, self.stderr = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.stderr = self.process.communicate()

    def request(self, path, token=True, method="GET", headers=None, base=None):
        """(status, headers, body) of a request; token=True appends ?token= / &token=."""
        url = (base or self.base) + path
        if token is True:
            token = self.token
        if token:
            url += ("&" if "?" in path else "?") + "token=" + token
        request = urllib.request.Request(url, method=method, headers=headers or {},
                                         data=b"" if method == "POST" else None)
        try:
            with OPENER.open(request, timeout=60) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()


def start_ui(ctx, *args):
    return Ui(ctx, *args)


@cli_test
def test_ui_token_required(ctx):
    """Without the token, with a wrong one or one a character short: 403, for the page and the
    API alike. With it: 200 and an HttpOnly SameSite=Strict cookie, which alone then suffices."""
    ui = start_ui(ctx)
    try:
        ctx.expect_eq(len(ui.token), 64, "the token's length (32 random bytes in hex)")
        for path in ("/", "/api/processes", "/api/history?pid=1", "/nonexistent"):
            status, _, body = ui.request(path, token=None)
            ctx.expect_eq(status, 403, f"GET {path} without the token")
            ctx.expect(b"no valid token" in body, f"the refusal says why ({body!r})")
        ctx.expect_eq(ui.request("/", token="0" * 64)[0], 403, "a wrong token")
        ctx.expect_eq(ui.request("/", token=ui.token[:-1])[0], 403, "the token one digit short")
        status, headers, body = ui.request("/")
        ctx.expect_eq(status, 200, "the page with the token")
        ctx.expect(b"memtrack ui" in body and b"<script>" in body, "the page is the ui's")
        cookie = headers.get("Set-Cookie", "")
        ctx.expect_eq(cookie, f"memtrack_token_{ui.port}={ui.token}; HttpOnly; SameSite=Strict; "
                      "Path=/", "the cookie")
        status, _, _ = ui.request("/api/processes", token=None,
                                  headers={"Cookie": cookie.split(";")[0]})
        ctx.expect_eq(status, 200, "the API with the cookie and no token in the URL")
        status, _, _ = ui.request("/api/processes", token=None,
                                  headers={"Cookie": f"memtrack_token_{ui.port}=" + "1" * 64})
        ctx.expect_eq(status, 403, "the API with a wrong cookie")
        ctx.expect_eq(headers.get("Referrer-Policy"), "no-referrer",
                      "the token does not leak through Referer")
    finally:
        ui.stop()


@cli_test
def test_ui_host_and_origin(ctx):
    """DNS rebinding (a foreign Host) and cross-site requests (a foreign Origin) get 403, even
    with the token; the server's own names and origin are served."""
    ui = start_ui(ctx)
    try:
        for host in ("evil.example:%d" % ui.port, "evil.example", "127.0.0.1:%d" % (ui.port + 1),
                     "127.0.0.1.nip.io:%d" % ui.port):
            status, _, body = ui.request("/api/processes", headers={"Host": host})
            ctx.expect_eq(status, 403, f"Host: {host}")
            ctx.expect(b"Host header" in body, f"the refusal names the Host header ({body!r})")
        for host in ("localhost:%d" % ui.port, "127.0.0.1:%d" % ui.port):
            ctx.expect_eq(ui.request("/api/processes", headers={"Host": host})[0], 200,
                          f"Host: {host}")
        for origin in ("http://evil.example", "null", f"https://127.0.0.1:{ui.port}",
                       f"http://localhost:{ui.port + 1}"):
            status, _, _ = ui.request("/api/processes", headers={"Origin": origin})
            ctx.expect_eq(status, 403, f"Origin: {origin}")
            status, _, _ = ui.request("/api/snapshot?pid=1", method="POST",
                                      headers={"Origin": origin})
            ctx.expect_eq(status, 403, f"POST with Origin: {origin}")
        ctx.expect_eq(ui.request("/api/processes", headers={"Sec-Fetch-Site": "cross-site"})[0],
                      403, "Sec-Fetch-Site: cross-site")
        ctx.expect_eq(ui.request("/api/processes",
                                 headers={"Origin": f"http://127.0.0.1:{ui.port}"})[0], 200,
                      "the server's own origin")
    finally:
        ui.stop()


def listening_addresses(port):
    """The local addresses of the TCP sockets listening on `port` (/proc/net/tcp, tcp6)."""
    found = []
    for name, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(name):
            continue
        with open(name, encoding="ascii") as f:
            next(f)
            for line in f:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if int(hex_port, 16) == port and fields[3] == "0A":  # TCP_LISTEN
                    found.append(address)
    return sorted(found)


@cli_test
def test_ui_listen(ctx):
    """By default only 127.0.0.1 and ::1 listen (checked in /proc/net); --listen 0.0.0.0 warns
    loudly on stderr, listens on every address and still wants the token and a known Host.
    A port in use and a missing FILE are one-line errors."""
    ui = start_ui(ctx)
    try:
        addresses = listening_addresses(ui.port)
        loopback = {"0100007F", "00000000000000000000000001000000"}
        ctx.expect(addresses and set(addresses) <= loopback,
                   f"listening on loopback addresses only ({addresses})")
        run = ctx.memtrack("ui", "--port", str(ui.port))
        ctx.expect_error(run, 125, f"cannot listen on 127.0.0.1:{ui.port} (is the port in use? "
                         "choose another with --port)", "a port in use")
    finally:
        ui.stop()
    missing = ctx.path("missing.json")
    ctx.expect_error(ctx.memtrack("ui", missing), 125,
                     f"cannot read {missing}: no such file", "a missing FILE")
    ctx.expect_eq(ui.stderr, "", "no warning for the default")
    ui = start_ui(ctx, "--listen", "0.0.0.0")
    try:
        ctx.expect_eq(listening_addresses(ui.port), ["00000000"], "listening on 0.0.0.0")
        ctx.expect_eq(ui.request("/", token=None)[0], 403, "still no page without the token")
        ctx.expect_eq(ui.request("/api/processes")[0], 200, "served with the token")
    finally:
        ui.stop()
    ctx.expect(ui.stderr.startswith("memtrack: warning: --listen 0.0.0.0 makes memtrack ui "
                                    "reachable from other machines: WHOEVER REACHES")
               and ui.stderr.count("\n") == 1, f"the warning, one line ({ui.stderr!r})")


@cli_test
def test_ui_read_only_and_files(ctx):
    """Nothing but the page and the API: no path reaches the file system (not even a named
    file's own path), files are chosen by index, GET cannot take a snapshot, POST goes nowhere
    else, and a snapshot of another user's process is refused."""
    report = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={report}", ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "memtrack run --json", run)
    ui = start_ui(ctx, report)
    try:
        for path in ("/etc/passwd", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", report,
                     "/api/", "/web/src/ui.js", "/api/file?index=1", "/api/file?index=-1",
                     "/api/file?index=" + report):
            status, _, _ = ui.request(path)
            ctx.expect_eq(status, 404, f"GET {path}")
        status, _, body = ui.request("/api/files")
        ctx.expect_eq((status, json.loads(body)), (200, {"files": [report]}), "the named files")
        status, _, body = ui.request("/api/file?index=0")
        ctx.require_eq(status, 200, "the named file by index")
        model = json.loads(body)
        leaks = model["report"]["processes"][0]["leaks"]
        ctx.expect_eq([(g["kind"], g["bytes"]) for g in leaks if g["kind"] == "definite"],
                      [("definite", 100)], "the named report's model (the JSON report's leak)")
        ctx.expect_eq(model["report"]["processes"][0]["summary"]["definite_bytes"], 100,
                      "its summary as written")
        ctx.expect_eq(ui.request("/api/snapshot?pid=1")[0], 404, "GET of the snapshot request")
        for path in ("/", "/api/processes", "/api/file?index=0"):
            ctx.expect_eq(ui.request(path, method="POST")[0], 404, f"POST {path}")
        ctx.expect_eq(ui.request("/api/snapshot?pid=abc", method="POST")[0], 400, "a bad pid")
        other = other_users_process()
        try:
            status, _, body = ui.request(f"/api/snapshot?pid={other.pid}", method="POST")
            ctx.expect_eq((status, json.loads(body)),
                          (403, {"error": f"process {other.pid} belongs to another user"}),
                          "a snapshot of another user's process")
            status, _, body = ui.request(f"/api/profile?pid={other.pid}")
            ctx.expect_eq((status, json.loads(body)),
                          (403, {"error": f"process {other.pid} belongs to another user"}),
                          "the heap profile of another user's process")
        finally:
            other.kill()
            other.wait()
        status, _, body = ui.request(f"/api/snapshot?pid={os.getpid()}", method="POST")
        ctx.expect_eq((status, json.loads(body)),
                      (409, {"error": f"process {os.getpid()} does not run under memtrack "
                                      "(start it with 'memtrack run')"}),
                      "a snapshot of a process not under memtrack")
        status, _, body = ui.request(f"/api/profile?pid={os.getpid()}")
        ctx.expect_eq((status, json.loads(body)),
                      (409, {"error": f"process {os.getpid()} does not run under memtrack "
                                      "(start it with 'memtrack run')"}),
                      "the heap profile of a process not under memtrack")
        ctx.expect_eq(ui.request("/api/profile?pid=5000000")[0], 400, "a pid above pid_max")
        status, _, body = ui.request("/api/profile?pid=4000000")
        ctx.expect_eq((status, json.loads(body)), (404, {"error": "no process 4000000"}),
                      "the heap profile of no process")
    finally:
        ui.stop()


@cli_test
def test_ui_bad_files(ctx):
    """A corrupt or foreign file named on the command line: one line naming it, exit 125,
    before any server starts (no URL printed)."""
    report = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={report}", "--profile", ctx.path("p.prof"),
                       ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "memtrack run --json --profile", run)
    with open(report, "rb") as f:
        json_bytes = f.read()
    with open(ctx.path("p.prof"), "rb") as f:
        profile_bytes = f.read()
    cases = {
        "cut.json": (json_bytes[: len(json_bytes) // 2], "not a memtrack JSON report"),
        "junk.mtr": (b"MTRESULT" + bytes(range(200)), "not a memtrack result file"),
        "flipped.prof": (profile_bytes[:40] + bytes([profile_bytes[40] ^ 0x10]) +
                         profile_bytes[41:], "corrupt heap profile"),
    }
    for name, (data, message) in cases.items():
        path = ctx.path(name)
        with open(path, "wb") as f:
            f.write(data)
        run = ctx.memtrack("ui", path, timeout=60)
        ctx.expect(run.exit == 125 and run.stdout == "" and
                   run.stderr.startswith(f"memtrack: error: {path}") and message in run.stderr
                   and run.stderr.count("\n") == 1,
                   f"memtrack ui {name}: one line naming the file, exit 125", run)


@cli_test
def test_ui_profile_file(ctx):
    """A heap profile named on the command line: its page model, analysed again for a window
    given as from_us/to_us (heap_pattern: from the peak's step on, grow_cache's second five
    blocks); a bad or empty window is refused with its reason."""
    profile = ctx.path("hp.prof")
    run = ctx.memtrack("run", f"--profile={profile}", ctx.program("heap_pattern"))
    ctx.require_eq(run.exit, 0, "memtrack run --profile", run)
    ui = start_ui(ctx, profile)
    try:
        status, _, body = ui.request("/api/file?index=0")
        ctx.require_eq(status, 200, "the profile by index")
        model = json.loads(body)
        ctx.expect_eq((model["profile"]["peak"]["bytes"], "window" in model["profile"]),
                      (1_053_608, False), "the profile's model, without a window")
        step = model["chart"]["bucket_us"]
        start = model["profile"]["peak"]["time_us"] // step * step
        status, _, body = ui.request(f"/api/file?index=0&from_us={start}")
        ctx.require_eq(status, 200, "the profile with a window")
        windowed = json.loads(body)["profile"]
        ctx.expect_eq((windowed["window"]["bytes"], windowed["window"]["blocks"]), (5000, 5),
                      "the window from the peak's step to the end")
        for query, answer in (("from_us=x", (400, {"error": "from_us expects microseconds"})),
                              ("to_us=-1", (400, {"error": "to_us expects microseconds"})),
                              ("from_us=5&to_us=5",
                               (422, {"error": "the window's start must be before its end"}))):
            status, _, body = ui.request(f"/api/file?index=0&{query}")
            ctx.expect_eq((status, json.loads(body)), answer, f"/api/file?index=0&{query}")
    finally:
        ui.stop()


@cli_test
def test_ui_running_profile(ctx):
    """The heap profile of a program still running under memtrack run --profile (heap_pattern
    --hold, waiting after its pattern with its 32-byte block not yet freed): marked in the
    table, analysed as it stands (every event so far, the peak, 10,032 bytes live in 11
    blocks, "running"), and for a window from the peak's step on; the run's own profile is
    whole, and once the program has ended the ui closes the files it held for it."""
    profile = ctx.path("running.prof")
    process = subprocess.Popen(
        [ctx.paths.memtrack, "run", f"--profile={profile}", ctx.program("heap_pattern"), "--hold"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctx.env(),
        cwd=ctx.tmp, text=True)
    line = process.stdout.readline()
    if not line.startswith("ready "):
        process.kill()
        raise Failure(f"heap_pattern --hold did not start: {line!r} {process.stderr.read()}")
    pid = int(line.split()[1])
    ui = start_ui(ctx)
    try:
        mine = [p for p in json.loads(ui.request("/api/processes")[2])["processes"]
                if p["pid"] == pid]
        ctx.expect_eq([(p["memtrack"], p["profile"]) for p in mine], [(True, True)],
                      "marked in the table as recording a heap profile")
        model = {}
        for _ in range(60):  # the runtime writes an idle thread's batch within 2 intervals
            status, _, body = ui.request(f"/api/profile?pid={pid}")
            ctx.require_eq(status, 200, f"the running profile ({body[:300]!r})")
            model = json.loads(body)
            if model["profile"]["summary"]["allocations"] >= 1016:
                break
            time.sleep(0.5)
        p = model["profile"]
        ctx.expect_eq((p["running"], p["complete"], p["pid"]), (True, False, pid),
                      "running, not complete, its pid")
        s = p["summary"]
        ctx.expect_eq((s["allocations"], s["frees"], s["reallocs"], s["allocated_bytes"],
                       s["temporary"], s["leaked_bytes"], s["leaked_blocks"], s["unknown_frees"]),
                      (1016, 1005, 1, 1_158_624, 1000, 10_032, 11, 0),
                      "every event so far; live now: the 10 grow_cache blocks and the 32 bytes")
        ctx.expect_eq((p["peak"]["bytes"], p["peak"]["blocks"]), (1_053_608, 10), "the peak")
        step = model["chart"]["bucket_us"]
        start = p["peak"]["time_us"] // step * step
        status, _, body = ui.request(f"/api/profile?pid={pid}&from_us={start}")
        ctx.require_eq(status, 200, "the running profile with a window")
        window = json.loads(body)["profile"]["window"]
        ctx.expect_eq((window["bytes"], window["blocks"]), (5000, 5),
                      "the window from the peak's step on")
        for query, answer in (("from_us=x", (400, {"error": "from_us expects microseconds"})),
                              ("from_us=5&to_us=5",
                               (422, {"error": "the window's start must be before its end"}))):
            status, _, body = ui.request(f"/api/profile?pid={pid}&{query}")
            ctx.expect_eq((status, json.loads(body)), answer, f"/api/profile?pid=PID&{query}")
        ctx.expect(len(set(followed_files(ui.process.pid))) == 2,
                   f"the ui follows the raw file into a temporary one "
                   f"({followed_files(ui.process.pid)})")
        _, stderr = process.communicate(input="", timeout=60)
        ctx.expect_eq(process.returncode, 0, f"memtrack run's exit status ({stderr})")
        ctx.expect("(2,022 events," in stderr, f"the run's own profile is whole ({stderr})")
        for _ in range(100):  # the ui forgets an ended program at its next sample (1 s)
            if not followed_files(ui.process.pid):
                break
            time.sleep(0.1)
        ctx.expect_eq(followed_files(ui.process.pid), [],
                      "the ui closed both files once the program had ended")
    finally:
        ui.stop()
        if process.poll() is None:
            process.kill()
            process.wait()


def followed_files(pid):
    """The files the ui process `pid` holds for a running program's profile: its raw file
    (memtrack run's result directory) and the temporary packed one (no name: "(deleted)"),
    which the packer's writer has open a second time."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.endswith("(deleted)") or "/profile." in target:
            found.append(target)
    return sorted(found)


def other_users_process():
    """A process of another user: `sleep` as nobody when we are root, else pid 1 (root's)."""
    if os.geteuid() == 0:
        return subprocess.Popen(["sleep", "60"], user=65534, group=65534)
    return _Pid1()


class _Pid1:
    pid = 1

    def kill(self):
        pass

    def wait(self):
        pass


@cli_test
def test_ui_processes_and_snapshot(ctx):
    """The table's JSON: cli_daemon under memtrack run --expire=1s --keep-results (live files
    stay in a kept result directory only) is there, marked, with the
    RSS of /proc/PID/status (within 256 KiB: it grows by a page every few seconds), and its
    history grows each second; its live reports name the leaking site; a snapshot is its
    report model with the 48-byte leak at @lost, and the live reports so far."""
    process, pid = start_daemon(ctx, "--expire=1s", "--keep-results=" + ctx.path("kept"),
                                seconds="60")
    ui = start_ui(ctx)
    try:
        status, _, body = ui.request("/api/processes")
        ctx.require_eq(status, 200, "GET /api/processes")
        doc = json.loads(body)
        mine = [p for p in doc["processes"] if p["pid"] == pid]
        ctx.require_eq(len(mine), 1, "the daemon in the table")
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            vm_rss = int([line.split()[1] for line in f if line.startswith("VmRSS:")][0])
        ctx.expect(abs(mine[0]["rss_kb"] - vm_rss) <= 256,
                   f"its RSS {mine[0]['rss_kb']} KiB is VmRSS {vm_rss} KiB within 256 KiB")
        ctx.expect_eq(mine[0]["memtrack"], True, "marked as running under memtrack")
        ctx.expect_eq(mine[0]["profile"], False, "not marked as recording a heap profile")
        status, _, body = ui.request(f"/api/profile?pid={pid}")
        ctx.expect_eq((status, json.loads(body)),
                      (409, {"error": f"process {pid} records no heap profile (start it with "
                                      "'memtrack run --profile=FILE')"}),
                      "no heap profile without --profile")
        ctx.expect_eq(mine[0]["threads"], [], "no threads unless asked for")
        status, _, body = ui.request(f"/api/processes?threads={pid}")
        threads = [p for p in json.loads(body)["processes"] if p["pid"] == pid][0]["threads"]
        ctx.expect_eq(threads[0]["tid"], pid, "its threads when asked for")
        history = {}
        for _ in range(60):  # up to 30 s on a loaded machine; normally 2 s
            history = json.loads(ui.request(f"/api/history?pid={pid}")[2])
            live = json.loads(ui.request(f"/api/live?pid={pid}")[2])["live"]
            if len(history["rss_kb"]) >= 3 and live:
                break
            time.sleep(0.5)
        ctx.expect(len(history["rss_kb"]) >= 3 and len(history["seconds"]) == len(history["rss_kb"]),
                   f"its history has a point per second ({history})")
        status, _, body = ui.request("/api/processes")
        recent = [p for p in json.loads(body)["processes"] if p["pid"] == pid][0]["rss_recent_kb"]
        ctx.expect(2 <= len(recent) <= 60, f"its sparkline's points ({recent})")
        ctx.expect(live and all(r["pid"] == pid for r in live), f"its live reports ({live!r:.200})")
        leak_line = ctx.marker_line("daemon.c", "@leak")
        ctx.expect(any(s["stack"][0]["line"] == leak_line for r in live for s in r["sites"]),
                   "a live report names the leaking site (@leak)")
        status, _, body = ui.request(f"/api/snapshot?pid={pid}", method="POST",
                                     headers={"Origin": ui.base})
        ctx.require_eq(status, 200, f"the snapshot request ({body[:300]!r})")
        model = json.loads(body)
        ctx.expect(len(model["live"]) >= len(live), "the snapshot carries the live reports")
        p = model["report"]["processes"][0]
        lost = [(g["bytes"], g["blocks"], g["stack"][0]["function"], g["stack"][0]["line"])
                for g in p["leaks"] if g["kind"] == "definite"]
        ctx.expect_eq(lost, [(48, 1, "lose_one", ctx.marker_line("daemon.c", "@lost"))],
                      "the snapshot's definite leak")
        ctx.expect(not [f for f in os.listdir(ctx.tmpdir) if f.startswith("snapshot.")],
                   "the snapshot file was removed")
    finally:
        ui.stop()
        stop_daemon(ctx, process)
