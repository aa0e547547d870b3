"""memtrack run --show-retainers: what keeps still-reachable memory alive, on a program whose
heap graph is known (programs/retainers.c): the roots named as a person would, what each alone
keeps (the dominator tree's retained sizes), and each site's chain of holders, exactly."""

import json
import pathlib
import re

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
