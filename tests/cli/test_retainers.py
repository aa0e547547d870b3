"""memtrack run --show-retainers: what keeps still-reachable memory alive, on a program whose
heap graph is known (programs/retainers.c): the roots named as a person would, what each alone
keeps (the dominator tree's retained sizes), and each site's chain of holders, exactly."""

import json
import os
import pathlib
import re
import signal
import subprocess

from cli_harness import cli_test

SOURCE = pathlib.Path(__file__).parent / "programs" / "retainers.c"


def line_of(text):
    """The line of programs/retainers.c that holds `text` (the sites' file:line)."""
    for number, line in enumerate(SOURCE.read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} is not in {SOURCE}")


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
    ctx.expect_eq(roots.get("global g_table (cli_retainers)"), ("data", 64 + 32 * 48, 33),
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
    for name in ("global g_first (cli_retainers)", "global g_second (cli_retainers)"):
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
                  "global g_table (cli_retainers) -> 64 bytes in 1 block allocated at "
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
    ctx.expect("1,600 bytes in 33 blocks: global g_table (cli_retainers)" in run.stderr,
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
        ctx.expect(re.fullmatch(r"global g_leaked \(cli_daemon\) -> 32,768 bytes in 1 block "
                                r"allocated at main \(daemon.c:\d+\)", site.get("held_by", ""))
                   is not None, f"the growing site's holders: {site.get('held_by')}", run)
    cache = [s.get("held_by", "") for r in reports for s in r["sites"]
             if s["blocks"] == 20 and s["bytes"] == 1280]
    ctx.expect(cache and all(re.fullmatch(r"main thread stack, frame #\d+ main \(daemon.c:\d+\)",
                                          held) for held in cache),
               f"the cache's holder: {cache}", run)
    with open(ctx.path("log.txt"), encoding="utf-8") as f:
        ctx.expect("   held by global g_leaked (cli_daemon) -> " in f.read(),
                   "the text live report says it too", run)


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
        ctx.require(len(ready) == 5 and ready[0] == "ready", f"the program started: {ready}")
        pid, node, shared = ready[1], ready[2], ready[3]
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
                   block[5] == "    global g_table (cli_retainers)",
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
            ctx.expect(re.search(rf"    global {name} \(cli_retainers\) \(at 0x[0-9a-f]+\)\n",
                                 run.stdout) is not None, f"{name} points at it", run)

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
                       ("root", None, "global g_table (cli_retainers)")], "the chain as JSON", run)
        ctx.expect_eq([(link["kind"], link["size"], link["offset"]) for link in block["referrers"]],
                      [("block", 48, 0)], "the referrer as JSON", run)
    finally:
        if pid is not None:
            os.kill(int(pid), signal.SIGTERM)  # memtrack run passes it on; the program ends
        process.kill()
        process.communicate(timeout=60)
