"""The program's own allocators as it declares them (docs/annotations.md): a pool allocator
over superblocks from malloc, annotated with memtrack.h, with valgrind's macros through
memtrack's compatibility headers, and with heaptrack's heaptrack_api.h (programs/
pool_annotated.c). Each way gives the same verdicts, exact bytes and blocks, at the lines of
the annotating calls; the pools' superblocks are no leaks; a destroyed pool's blocks are
gone. The valgrind way's binary is also run under memcheck, whose leak summary is the
oracle."""

import re
import shutil

from cli_harness import cli_test

WAYS = {1: "memtrack.h", 2: "valgrind.h", 3: "heaptrack_api.h"}
SOURCE = "pool_annotated.c"
# (kind, bytes, blocks) of every group, and the totals of each kind.
TOTALS = {"definite": (72, 2), "indirect": (32, 1), "possible": (0, 0), "reachable": (124, 2)}


def expected_groups(ctx):
    pool = ctx.marker_line(SOURCE, "POOL-ALLOC")
    block = ctx.marker_line(SOURCE, "BLOCK-ALLOC")
    return sorted([("definite", 48, pool), ("indirect", 32, pool), ("definite", 24, block)])


def check_way(ctx, way):
    json_path = ctx.path(f"way{way}.json")
    run = ctx.memtrack("run", f"--json={json_path}", ctx.program(f"pool_annotated_{way}"))
    what = WAYS[way]
    ctx.require_eq(run.exit, 0, f"exit status ({what})", run)
    ctx.expect_eq(run.stdout, "pool_annotated: done\n", f"the program ran ({what})", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    summary = process["summary"]
    for kind, (size, blocks) in TOTALS.items():
        ctx.expect_eq((summary[f"{kind}_bytes"], summary[f"{kind}_blocks"]), (size, blocks),
                      f"{kind}: bytes and blocks ({what})", run)
    found = sorted((g["kind"], g["bytes"], g["stack"][0]["line"]) for g in process["leaks"]
                   if g["kind"] in ("definite", "indirect") and g["blocks"] == 1
                   and g["stack"][0]["file"] == ctx.source(SOURCE))
    ctx.expect_eq(found, expected_groups(ctx),
                  f"each lost block at the annotating call's line ({what})", run)
    ctx.expect_eq(process["errors"], [], f"no misuse errors ({what})", run)
    return run


@cli_test
def test_annotations_memtrack(ctx):
    """memtrack.h's pool and malloc-like calls: the block of the stack the annotating call
    made, no inline frame of the header above it."""
    run = check_way(ctx, 1)
    ctx.expect("memtrack.h" not in run.stderr, "no frame in memtrack.h", run)


@cli_test
def test_annotations_valgrind(ctx):
    """valgrind's macros (VALGRIND_CREATE_MEMPOOL & co., VALGRIND_MALLOCLIKE_BLOCK) built
    against include/memtrack/compat report to memtrack, with the verdicts memcheck gives the
    same binary."""
    check_way(ctx, 2)
    valgrind = shutil.which("valgrind")
    ctx.require(valgrind is not None, "valgrind is installed (scripts/install-deps.sh)")
    oracle = ctx.run([valgrind, "--leak-check=full", "--show-leak-kinds=all",
                      ctx.program("pool_annotated_2")])
    ctx.require_eq(oracle.exit, 0, "memcheck: exit status", oracle)
    names = {"definite": "definitely lost", "indirect": "indirectly lost",
             "possible": "possibly lost", "reachable": "still reachable"}
    for kind, (size, blocks) in TOTALS.items():
        line = re.search(rf"{names[kind]}: ([\d,]+) bytes in ([\d,]+) blocks", oracle.stderr)
        ctx.require(line is not None, f"memcheck's summary has {names[kind]}", oracle)
        got = (int(line.group(1).replace(",", "")), int(line.group(2).replace(",", "")))
        ctx.expect_eq(got, (size, blocks), f"memcheck: {names[kind]}", oracle)


@cli_test
def test_annotations_heaptrack(ctx):
    """A program annotated for heaptrack (heaptrack_api.h's weak heaptrack_malloc & co.) is
    seen without a rebuild for memtrack: the runtime defines those functions."""
    check_way(ctx, 3)


@cli_test
def test_annotations_without_memtrack(ctx):
    """Without memtrack every way is a no-op: the programs run as plain programs."""
    for way in WAYS:
        run = ctx.run([ctx.program(f"pool_annotated_{way}")])
        ctx.expect_eq((run.exit, run.stdout), (0, "pool_annotated: done\n"),
                      f"plain run ({WAYS[way]})", run)
