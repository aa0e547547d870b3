"""memtrack run --show-retainers: what keeps still-reachable memory alive, on a program whose
heap graph is known (programs/retainers.c): the roots named as a person would, what each alone
keeps (the dominator tree's retained sizes), and each site's chain of holders, exactly."""

import re

from cli_harness import cli_test


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
    """A global table of lists, a cache and a ring only a thread keeps, a block two globals share."""
    run, process = run_retainers(ctx)
    retention = process["retention"]
    ctx.expect(not retention["approximate"], "the dominator tree settled", run)
    roots = {r["name"]: (r["kind"], r["retained_bytes"], r["retained_blocks"])
             for r in retention["roots"]}
    # g_table: its 64-byte array and 8 lists of 4 nodes of 48 bytes.
    ctx.expect_eq(roots.get("global g_table (cli_retainers)"), ("data", 64 + 32 * 48, 33),
                  "what g_table alone keeps", run)
    threads = [(kind, b, n) for name, (kind, b, n) in roots.items()
               if re.fullmatch(r"thread \d+ stack", name)]
    # The thread's cache (24 bytes holding two of 100) and its thread-local ring of 5 nodes.
    ctx.expect_eq(threads, [("stack", 24 + 200 + 5 * 48, 8)],
                  "what the waiting thread's stack and TLS alone keep", run)
    # g_first and g_second point at the same block: neither keeps it alone.
    for name in ("global g_first (cli_retainers)", "global g_second (cli_retainers)"):
        ctx.expect_eq(roots.get(name), ("data", 0, 0), f"what {name} alone keeps", run)
    ctx.expect_eq((retention["shared_bytes"], retention["shared_blocks"]), (16 + 32, 2),
                  "the shared block and its child belong to no single root", run)

    groups = {(g["site"], g["bytes"], g["blocks"]): g for g in retention["groups"]}
    nodes = groups.get(("new_node (retainers.c:26)", 32 * 48, 32))
    ctx.require(nodes is not None, "the table's nodes form one group", run)
    ctx.expect_eq(nodes["held_by"],
                  "global g_table (cli_retainers) -> 64 bytes in 1 block allocated at "
                  "build_table (retainers.c:33)", "the table's nodes' chain of holders", run)
    ctx.expect_eq(nodes["holder_kind"], "site", "the nodes are held by a site", run)
    child = groups.get(("build_shared (retainers.c:66)", 32, 1))
    ctx.require(child is not None, "the shared block's child is a group", run)
    ctx.expect_eq(child["held_by"], "several roots, none alone -> 16 bytes in 1 block "
                  "allocated at build_shared (retainers.c:65)", "the shared child's chain", run)
    value = groups.get(("make_cache (retainers.c:41)", 100, 1))
    ctx.require(value is not None, "a cached value is a group", run)
    ctx.expect(re.fullmatch(r"thread \d+ stack -> 24 bytes in 1 block allocated at "
                            r"make_cache \(retainers.c:40\)", value["held_by"]) is not None,
               f"the cached value's chain: {value['held_by']}", run)
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
