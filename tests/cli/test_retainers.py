"""memtrack run --show-retainers: what keeps still-reachable memory alive, on a program whose
heap graph is known (programs/retainers.c): the roots named as a person would, what each alone
keeps (the dominator tree's retained sizes), and each site's chain of holders, exactly."""

import json
import os
import pathlib
import re
import signal
import subprocess
import time

from cli_harness import cli_test

SOURCE = pathlib.Path(__file__).parent / "programs" / "retainers.c"
DAEMON = pathlib.Path(__file__).parent / "programs" / "daemon.c"


def line_of(text, source=SOURCE):
    """The line of programs/retainers.c (or `source`) that holds `text` (sites' and variables'
    file:line)."""
    for number, line in enumerate(source.read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} is not in {source}")


def global_name(name, source=SOURCE):
    """A global as the report names it: by the file:line of its definition (from DWARF)."""
    return f"global {name} ({source.name}:{line_of(f'{name};', source)})"


def run_retainers(ctx):
    json_path = ctx.path("retainers.json")
    run = ctx.memtrack("run", "--show-retainers", f"--json={json_path}", "--",
                       ctx.program("retainers"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.require("retention" in process, "the JSON report has a retention object", run)
    return run, process


@cli_test
def test_retainers_known_graph(ctx):
    """A global table of lists, a thread's cache and TLS ring, a block two globals share."""
    run, process = run_retainers(ctx)
    retention = process["retention"]
    ctx.expect(not retention["approximate"], "the dominator tree settled", run)
    roots = {r["name"]: (r["kind"], r["retained_bytes"], r["retained_blocks"])
             for r in retention["roots"]}
    # g_table: its 64-byte array and 8 lists of 4 nodes of 48 bytes.
    ctx.expect_eq(roots.get(global_name("g_table")), ("data", 64 + 32 * 48, 33),
                  "what g_table alone keeps", run)
    # The thread's cache (24 bytes holding two of 100), a local of its function's frame.
    frames = [(kind, b, n) for name, (kind, b, n) in roots.items()
              if re.fullmatch(r"thread \d+ stack, frame #\d+ cache_thread \(retainers.c:\d+\)",
                              name)]
    ctx.expect_eq(frames, [("stack", 24 + 200, 3)],
                  "what the waiting thread's frame alone keeps", run)
    # Its thread-local ring of 5 nodes.
    tls = [(kind, b, n) for name, (kind, b, n) in roots.items()
           if re.fullmatch(r"thread \d+ TLS", name)]
    ctx.expect_eq(tls, [("tls", 5 * 48, 5)], "what the thread's TLS alone keeps", run)
    ctx.expect_eq(roots.get("main thread TLS"), ("tls", 56, 1),
                  "what the main thread's TLS alone keeps", run)
    # g_first and g_second point at the same block: neither keeps it alone.
    for name in (global_name("g_first"), global_name("g_second")):
        ctx.expect_eq(roots.get(name), ("data", 0, 0), f"what {name} alone keeps", run)
    ctx.expect_eq((retention["shared_bytes"], retention["shared_blocks"]), (16 + 32, 2),
                  "the shared block and its child belong to no single root", run)

    # By function: the line -O2 gives a call's return address may be the next statement's.
    groups = {(g["site"].split(" (")[0], g["bytes"], g["blocks"]): g
              for g in retention["groups"]}
    table = line_of("calloc(8, sizeof(struct node*))")
    shared = line_of("malloc(2 * sizeof(void*))")
    cache = line_of("malloc(3 * sizeof(void*))")
    nodes = groups.get(("new_node", 32 * 48, 32))
    ctx.require(nodes is not None, "the table's nodes form one group", run)
    ctx.expect_eq(nodes["held_by"],
                  f"{global_name('g_table')} -> 64 bytes in 1 block allocated at "
                  f"build_table (retainers.c:{table})", "the table's nodes' chain of holders", run)
    ctx.expect_eq(nodes["holder_kind"], "site", "the nodes are held by a site", run)
    # The groups form the dominator tree by site: the nodes lie under the table's group,
    # which lies under g_table.
    parent = retention["groups"][nodes.get("parent", -1)] if "parent" in nodes else {}
    ctx.expect_eq((parent.get("site", "").split(" (")[0], parent.get("bytes"),
                   parent.get("holder_kind"), parent.get("parent")),
                  ("build_table", 64, "root", None), "the nodes' parent group", run)
    ctx.expect(all("parent" not in g or g["parent"] < len(retention["groups"]) and
                   g["holder_kind"] == "site" for g in retention["groups"]),
               "only site-held groups have a parent, and it exists", run)
    child_group = groups.get(("build_shared", 32, 1))
    ctx.require(child_group is not None, "the shared block's child is a group", run)
    ctx.expect_eq(child_group["held_by"], "several roots, none alone -> 16 bytes in 1 block "
                  f"allocated at build_shared (retainers.c:{shared})", "the shared child's chain",
                  run)
    value_group = groups.get(("make_cache", 100, 1))
    ctx.require(value_group is not None, "a cached value is a group", run)
    ctx.expect(re.fullmatch(r"thread \d+ stack, frame #\d+ cache_thread \(retainers.c:\d+\) "
                            r"-> 24 bytes in 1 block allocated at make_cache \(retainers.c:"
                            + str(cache) + r"\)", value_group["held_by"]) is not None,
               f"the cached value's chain: {value_group['held_by']}", run)
    # The text report lists the same, under RETAINED MEMORY.
    ctx.expect("RETAINED MEMORY" in run.stderr, "the text report has the section", run)
    ctx.expect(f"1,600 bytes in 33 blocks: {global_name('g_table')}" in run.stderr,
               "the text report's top root", run)


@cli_test
def test_retainers_off_by_default(ctx):
    """Without --show-retainers no scan builds the graph and no report shows it."""
    json_path = ctx.path("plain.json")
    run = ctx.memtrack("run", f"--json={json_path}", "--", ctx.program("retainers"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect("retention" not in process, "no retention object", run)
    ctx.expect("RETAINED MEMORY" not in run.stderr, "no RETAINED MEMORY section", run)


@cli_test
def test_retainers_in_live_reports(ctx):
    """Live reports with --show-retainers say what holds each site: the growing one is kept by
    the global array that collects it, the cache by main's frame."""
    live_path = ctx.path("live.jsonl")
    run = ctx.memtrack("run", "--show-retainers", "--expire=1s", f"--live-json={live_path}",
                       f"--log-file={ctx.path('log.txt')}", ctx.program("daemon"), "5")
    ctx.require_eq(run.exit, 0, "exit status", run)
    with open(live_path, encoding="utf-8") as f:
        reports = [json.loads(line) for line in f]
    growing = [s for r in reports for s in r["sites"] if s["growing"]]
    ctx.require(growing, "a site is marked growing", run)
    for site in growing:
        ctx.expect(re.fullmatch(r"global g_leaked \(daemon.c:\d+\) -> 32,768 bytes in 1 block "
                                r"allocated at main \(daemon.c:\d+\)", site.get("held_by", ""))
                   is not None, f"the growing site's holders: {site.get('held_by')}", run)
    cache = [s.get("held_by", "") for r in reports for s in r["sites"]
             if s["blocks"] == 20 and s["bytes"] == 1280]
    ctx.expect(cache and all(re.fullmatch(r"main thread stack, frame #\d+ main \(daemon.c:\d+\)",
                                          held) for held in cache),
               f"the cache's holder: {cache}", run)
    with open(ctx.path("log.txt"), encoding="utf-8") as f:
        ctx.expect("   held by global g_leaked (daemon.c:" + str(line_of("g_leaked;", DAEMON)) + ") -> "
                   in f.read(),
                   "the text live report says it too", run)


def wait_until_sleeping(ctx, pid):
    """Waits until the program's main thread sleeps in its wait loop: before that, the frames
    that printed its addresses may still hold them, and the chains would start there."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/wchan", encoding="utf-8") as f:
            if "nanosleep" in f.read():
                return
        time.sleep(0.01)
    ctx.require(False, "the program's main thread went to sleep")


@cli_test
def test_retainers_of_one_block(ctx):
    """memtrack snapshot --retainers ADDR: a table node's chain up to g_table and the node that
    points at it; the block two globals share, pointed to from both; an address in no block."""
    process = subprocess.Popen(
        [ctx.paths.memtrack, "run", "--log-file=/dev/null", ctx.program("retainers"), "wait"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=ctx.env(), cwd=ctx.tmp, text=True)
    pid = None
    try:
        ready = process.stdout.readline().split()
        ctx.require(len(ready) == 6 and ready[0] == "ready", f"the program started: {ready}")
        pid = ready[1]
        node, shared, lost = (hex(int(word, 16) ^ 0x5a5a5a5a5a5a) for word in
                              (ready[2], ready[3], ready[5]))
        wait_until_sleeping(ctx, pid)
        run = ctx.memtrack("snapshot", pid, f"--retainers={node}")
        ctx.require_eq(run.exit, 0, "exit status", run)
        lines = [line.split("== ", 1)[1] for line in run.stdout.splitlines() if "== " in line]
        start = lines.index(next(x for x in lines if x.startswith("BLOCK ")))
        block = lines[start:start + 8]
        ctx.expect(re.fullmatch(rf"BLOCK {node}: 48 bytes allocated at new_node "
                                r"\(retainers.c:\d+\), still reachable", block[0]) is not None,
                   f"the block: {block}", run)
        ctx.expect_eq(block[1], "  keeps alive 144 bytes in 3 blocks (itself included)",
                      "what it keeps: itself and the two nodes after it", run)
        ctx.expect_eq(block[2], "  held by (nearest first):", "the chain's title", run)
        ctx.expect(re.fullmatch(r"    0x[0-9a-f]+ \(48 bytes\) allocated at new_node .*", block[3])
                   is not None and re.fullmatch(r"    0x[0-9a-f]+ \(64 bytes\) allocated at "
                                                r"build_table .*", block[4]) is not None and
                   block[5] == f"    {global_name('g_table')}",
                   f"the chain: the node before it, the table, g_table: {block[3:6]}", run)
        referrer = r"    offset 0 of 0x[0-9a-f]+ \(48 bytes\) allocated at new_node .*"
        ctx.expect(block[6] == "  pointed to from:" and
                   re.fullmatch(referrer, block[7]) is not None,
                   f"its referrer: {block[6:8]}", run)

        run = ctx.memtrack("snapshot", pid, f"--retainers={shared}")
        ctx.require_eq(run.exit, 0, "exit status", run)
        ctx.expect("    several roots, none alone\n" in run.stdout,
                   "the shared block's chain ends at several roots", run)
        for name in ("g_first", "g_second"):
            ctx.expect(re.search(rf"    {re.escape(global_name(name))} \(at 0x[0-9a-f]+\)\n",
                                 run.stdout) is not None, f"{name} points at it", run)

        # A lost block has no chain; the lost block that points at it is its referrer.
        run = ctx.memtrack("snapshot", pid, f"--retainers={lost}")
        ctx.require_eq(run.exit, 0, "exit status", run)
        lines = [line.split("== ", 1)[1] for line in run.stdout.splitlines() if "== " in line]
        start = lines.index(next(x for x in lines if x.startswith("BLOCK ")))
        ctx.expect(re.fullmatch(rf"BLOCK {lost}: 48 bytes allocated at new_node "
                                r"\(retainers.c:\d+\), indirectly lost", lines[start]) is not None
                   and lines[start + 1] == "  pointed to from:" and
                   re.fullmatch(r"    offset 0 of 0x[0-9a-f]+ \(48 bytes\) allocated at new_node .*",
                                lines[start + 2]) is not None,
                   f"the lost block and the lost block that points at it: {lines[start:start + 3]}",
                   run)

        run = ctx.memtrack("snapshot", pid, "--retainers=0x10")
        ctx.require_eq(run.exit, 0, "exit status", run)
        ctx.expect("BLOCK 0x10: no live block holds this address" in run.stdout,
                   "an address in no block", run)
        run = ctx.memtrack("snapshot", pid, "--retainers=here")
        ctx.expect_error(run, 125, "--retainers expects a nonzero address such as "
                         "0x55d0c2a4b2c0, not 'here'")

        # The same as JSON: the chain, the referrer and what it keeps.
        run = ctx.memtrack("snapshot", pid, f"--retainers={node}", "--json=-",
                           "--log-file=/dev/null")
        ctx.require_eq(run.exit, 0, "exit status", run)
        block = json.loads(run.stdout)["processes"][0]["block_retention"]
        ctx.expect_eq((block["found"], block["kind"], block["size"], block["retained_bytes"],
                       block["retained_blocks"]), (True, "reachable", 48, 144, 3),
                      "the block and what it keeps, as JSON", run)
        ctx.expect_eq([(link["kind"], link.get("size"), link.get("root")) for link in block["chain"]],
                      [("block", 48, None), ("block", 64, None),
                       ("root", None, global_name("g_table"))], "the chain as JSON", run)
        ctx.expect_eq([(link["kind"], link["size"], link["offset"]) for link in block["referrers"]],
                      [("block", 48, 0)], "the referrer as JSON", run)
    finally:
        if pid is not None:
            os.kill(int(pid), signal.SIGTERM)  # memtrack run passes it on; the program ends
        process.kill()
        process.communicate(timeout=60)


def gdb_lines(ctx, *args):
    """gdb in batch mode (no init files, no debuginfod); its stdout lines."""
    run = ctx.run(["gdb", "-batch", "-nx", "-iex", "set debuginfod enabled off", *args])
    return run, [line.strip() for line in run.stdout.splitlines() if line.strip()]


@cli_test
def test_retainers_agree_with_gdb(ctx):
    """The roots are the variables gdb sees: on retainers.c, g_table's definition is where gdb's
    `info variables` puts it; on the system's python3 (PYTHONMALLOC=malloc, so its objects are
    malloc blocks), the root that keeps the most is _PyRuntime, and gdb, attached to the same
    process, names the same symbol at its first and last byte."""
    _, lines = gdb_lines(ctx, "-ex", "info variables ^g_table$", ctx.program("retainers"))
    ctx.expect(f"{line_of('g_table;')}:\tstruct node **g_table;".replace("\t", " ") in
               [line.replace("\t", " ") for line in lines] and
               any(line.startswith("File ") and line.endswith("retainers.c:") for line in lines),
               f"gdb puts g_table at retainers.c:{line_of('g_table;')}: {lines}")

    python = "/usr/bin/python3"
    script = ("import time\nsessions = {i: str(i) * 3 for i in range(5000)}\n"
              "print('ready', flush=True)\ntime.sleep(60)\n")
    process = subprocess.Popen(
        [ctx.paths.memtrack, "run", "--show-retainers", "--log-file=/dev/null", python, "-c",
         script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=ctx.env(PYTHONMALLOC="malloc"), cwd=ctx.tmp, text=True)
    pid = ""
    try:
        ctx.require(process.stdout.readline().strip() == "ready", "python3 started")
        pids = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True)
        pid = pids.stdout.split()[0] if pids.stdout.split() else ""
        ctx.require(pid != "", "the program's pid")
        run = ctx.memtrack("snapshot", pid, "--json=-", "--log-file=/dev/null")
        ctx.require_eq(run.exit, 0, "exit status", run)
        roots = json.loads(run.stdout)["processes"][0]["retention"]["roots"]
        top = max(roots, key=lambda r: r["retained_bytes"])
        ctx.expect_eq((top["kind"], top["symbol"], top["name"].startswith("global _PyRuntime (")),
                      ("data", "_PyRuntime", True),
                      "the root that keeps the most: the interpreter's runtime state", run)
        ctx.expect(top["retained_blocks"] > 1000,
                   f"it keeps thousands of blocks: {top['retained_blocks']}", run)
        first = int(top["address"], 16)
        last = first + top["size"] - 1
        gdb_run, lines = gdb_lines(ctx, "-p", pid, "-ex", f"info symbol {first:#x}", "-ex",
                                   f"info symbol {last:#x}")
        ctx.expect(any(line.startswith("_PyRuntime in section ") for line in lines) and
                   any(line.startswith(f"_PyRuntime + {top['size'] - 1} in section ")
                       for line in lines),
                   f"gdb names _PyRuntime at its first and last byte: {lines}", gdb_run)
    finally:
        if pid:
            os.kill(int(pid), signal.SIGTERM)
        process.kill()
        process.communicate(timeout=60)
