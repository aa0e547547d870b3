"""memtrack run --pprof-http: the running program's heap for go tool pprof and Prometheus
(docs/sampling.md, "A pprof endpoint for fleets")."""

import os
import re
import shutil
import socket
import subprocess
import urllib.request

from cli_harness import Failure, cli_test
from test_live import stop_daemon


def expect_in(ctx, needle, text, what):
    ctx.expect(needle in text, f"{what}: {needle!r} not in:\n{text}")


def start_server(ctx, *options):
    """memtrack run OPTIONS --pprof-http=127.0.0.1:0 cli_heap_server: (Popen, base URL)."""
    process = subprocess.Popen(
        [ctx.paths.memtrack, "run", "--pprof-http=127.0.0.1:0", *options, "--",
         ctx.program("heap_server")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=ctx.env(), cwd=ctx.tmp, text=True)
    announced = process.stderr.readline()
    m = re.match(r"memtrack: serving the program's heap at (http://127\.0\.0\.1:\d+)"
                 r"/debug/pprof/heap and \1/metrics$", announced.rstrip("\n"))
    line = process.stdout.readline()
    if m is None or not line.startswith("ready "):
        process.kill()
        raise Failure(f"no endpoint announced: {announced!r} {line!r}")
    return process, m.group(1)


def go_pprof_top(ctx, url, *options):
    go = shutil.which("go")
    if go is None:
        raise Failure("go (Debian package golang-go) is not installed")
    env = dict(ctx.env(), HOME=ctx.tmp, PPROF_TMPDIR=ctx.tmp, GOFLAGS="-mod=mod",
               GOCACHE=os.path.join(ctx.tmp, "gocache"))
    run = subprocess.run([go, "tool", "pprof", "-top", "-unit=B", *options, url],
                         capture_output=True, text=True, env=env, timeout=120)
    if run.returncode != 0:
        raise Failure(f"go tool pprof failed: {run.stderr}")
    return run.stdout


@cli_test
def test_pprof_http_go_tool(ctx):
    """go tool pprof reads the endpoint of the running program: its top site and in-use bytes
    are the truth (1,000,000 bytes held by cache_fill, 50,000 lost by leak_some); /metrics
    gives the same in Prometheus' format; the program runs on and ends as without it."""
    process, url = start_server(ctx)
    try:
        top = go_pprof_top(ctx, url + "/debug/pprof/heap")
        expect_in(ctx, "Type: inuse_space", top, "the default sample type")
        expect_in(ctx, "Showing nodes accounting for 1050000B, 100% of 1050000B total", top,
                      "the in-use bytes")
        rows = [line.split() for line in top.splitlines() if re.match(r"\s+\d+B ", line)]
        ctx.expect_eq(rows[0][0], "1000000B", f"the top site's bytes:\n{top}")
        ctx.expect_eq(rows[0][-1], "cache_fill", f"the top site:\n{top}")
        ctx.expect_eq((rows[1][0], rows[1][-1]), ("50000B", "leak_some"), f"the second:\n{top}")
        allocated = go_pprof_top(ctx, url + "/debug/pprof/heap", "-sample_index=alloc_space")
        rows = {line.split()[-1]: line.split()[0] for line in allocated.splitlines()
                if re.match(r"\s+\d+B ", line)}
        ctx.expect_eq((rows.get("cache_fill"), rows.get("churn"), rows.get("leak_some")),
                      ("1000000B", "500000B", "50000B"), f"alloc_space by site:\n{allocated}")
        counted = go_pprof_top(ctx, url + "/debug/pprof/heap", "-sample_index=alloc_objects")
        rows = {line.split()[-1]: line.split()[0] for line in counted.splitlines()
                if re.match(r"\s+\d+B ", line)}  # -unit=B says counts in B too
        ctx.expect_eq((rows.get("cache_fill"), rows.get("churn"), rows.get("leak_some")),
                      ("100B", "1000B", "50B"), f"alloc_objects by site:\n{counted}")
        leaked = go_pprof_top(ctx, url + "/debug/pprof/heap", "-tagfocus=kind=definite")
        expect_in(ctx, "Showing nodes accounting for 50000B", leaked, "the leaked bytes by tag")
        with urllib.request.urlopen(url + "/metrics", timeout=60) as response:
            metrics = response.read().decode()
        pid = int(re.search(r'memtrack_heap_live_bytes\{pid="(\d+)"\}', metrics).group(1))
        for name, value in (("memtrack_leaked_bytes", f'{{pid="{pid}",kind="definite"}} 50000'),
                            ("memtrack_reachable_bytes", f'{{pid="{pid}"}} 1000000'),
                            ("memtrack_allocations_total", f'{{pid="{pid}"}}')):
            expect_in(ctx, name + value, metrics, f"/metrics:\n{metrics}")
        expect_in(ctx, "# TYPE memtrack_allocations_total counter", metrics, "the counter type")
    finally:
        stderr = stop_daemon(ctx, process)
    expect_in(ctx, "50,000 bytes in 50 blocks are definitely lost", stderr, "the exit report")


@cli_test
def test_pprof_http_sampled(ctx):
    """In the sampled mode the endpoint's values are estimates: in use and allocated since the
    start, each sampled block standing for 1 / p(size) blocks (docs/sampling.md)."""
    process, url = start_server(ctx, "--sample=4096", "--sample-seed=11")
    try:
        for index, truth in (("inuse_space", {"cache_fill": 1_000_000}),
                             ("alloc_space", {"cache_fill": 1_000_000, "churn": 500_000})):
            top = go_pprof_top(ctx, url + "/debug/pprof/heap", f"-sample_index={index}")
            rows = {line.split()[-1]: int(line.split()[0][:-1]) for line in top.splitlines()
                    if re.match(r"\s+\d+B ", line)}
            for site, bytes_ in truth.items():
                # ~91 samples for cache_fill (p(10,000 B) = 0.91), ~115 for churn: a
                # relative error of ~3% and ~9%.
                ctx.expect(0.6 * bytes_ <= rows.get(site, 0) <= 1.4 * bytes_,
                           f"{index} of {site}: {rows.get(site)} estimates {bytes_}:\n{top}")
    finally:
        stop_daemon(ctx, process)


@cli_test
def test_pprof_http_errors(ctx):
    """A bad address or a port in use: one line, and the program never runs."""
    marker = os.path.join(ctx.tmp, "ran")
    for value, message in (("abc", "--pprof-http expects PORT or HOST:PORT"),
                           ("127.0.0.1:99999", "--pprof-http expects PORT or HOST:PORT")):
        run = ctx.memtrack("run", f"--pprof-http={value}", "--", "/bin/touch", marker)
        ctx.expect_eq(run.exit, 125, f"exit status for {value}")
        expect_in(ctx, message, run.stderr, f"message for {value}")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        run = ctx.memtrack("run", f"--pprof-http=127.0.0.1:{port}", "--", "/bin/touch", marker)
    finally:
        taken.close()
    ctx.expect_eq(run.exit, 125, "exit status with the port in use")
    expect_in(ctx, f"--pprof-http: cannot listen on 127.0.0.1:{port} (is the port in use", run.stderr,
                  "message with the port in use")
    ctx.expect_eq(os.path.exists(marker), False, "the program ran")
