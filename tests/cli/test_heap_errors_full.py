"""Heap memory errors with --check-heap=full (docs/heap-errors.md): every block gets redzones
(in memtrack's heap up to 64 KiB with them, in a block of the real allocator beyond), checked
at its free and at exit, and freed blocks wait in a quarantine, checked when they leave it. cli_heap_errors commits one bug per run (programs/heap_errors.c); the
table says what the full check finds of each: the kind, where the reported stack's frame 0 is
(the free that found it, or the allocation for a block found at exit), when it was found, the
address's place from the block. memcheck runs the same cases: every write error it reports is
found. Reads are not (no redzone sees a read)."""

import re

from cli_harness import cli_test
from test_heap_errors import expect_frame0, memcheck_kinds

# case -> (kind, marker of frame 0 of the reported stack, found_at, relation, block size);
# None: nothing is found (a read).
FINDS = {
    "overflow_write": ("write_outside_block", "FREE-block", "free", (0, "after"), 16),
    "overflow_read": None,
    "underflow_write": ("write_outside_block", "FREE-block", "free", (1, "before"), 16),
    "underflow_read": None,
    "uaf_write": ("write_after_free", "FREE-block", "exit", (20, "inside"), 40),
    "uaf_read": None,
    "overflow_odd": ("write_outside_block", "FREE-block", "free", (0, "after"), 10),
    "overflow_freed": ("write_outside_block", "FREE-block", "free", (1, "after"), 8),
    "overflow_kept": ("write_outside_block", "ALLOC-block", "exit", (1, "after"), 8),
    "uaf_write_recycled": ("write_after_free", "FREE-block", "quarantine", (20, "inside"), 40),
    "aligned_overflow": ("write_outside_block", "FREE-block", "free", (0, "after"), 24),
    "large_overflow": ("write_outside_block", "FREE-block", "free", (0, "after"), 100000),
    "large_calloc_overflow": ("write_outside_block", "FREE-block", "free", (0, "after"), 300000),
    "large_aligned_overflow": ("write_outside_block", "FREE-block", "free", (0, "after"), 100000),
    "large_uaf_write": ("write_after_free", "FREE-block", "exit", (20, "inside"), 100000),
}
ALLOC_MARKERS = {"aligned_overflow": "ALLOC-aligned", "large_aligned_overflow": "ALLOC-aligned",
                 "large_calloc_overflow": "ALLOC-zeroed"}


def run_full(ctx, case, *options, quarantine_mb=None):
    json_path = ctx.path(f"{case}.json")
    env = ctx.env(MEMTRACK_OPTIONS=f"check_heap_quarantine_mb={quarantine_mb}"
                  if quarantine_mb is not None else None)
    run = ctx.memtrack("run", "--check-heap=full", f"--json={json_path}", *options,
                       ctx.program("heap_errors"), case, env=env)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    return run, processes[0]


def relation(error):
    address = int(error["address"], 16)
    start = int(error["block"]["address"], 16)
    end = start + error["block"]["size"]
    if address >= end:
        return (address - end, "after")
    if address < start:
        return (start - address, "before")
    return (address - start, "inside")


@cli_test
def test_heap_errors_full_suite(ctx):
    """Each case: the one error the table names, with its stacks (the free's at FREE-block for
    a write after free, the allocation at ALLOC-block), when it was found, the address's place
    from the block, the block's size; the program runs to its end (exit 0, its output)."""
    for case, expected in FINDS.items():
        quarantine = 0 if case == "uaf_write_recycled" else None
        run, process = run_full(ctx, case, quarantine_mb=quarantine)
        ctx.expect_eq((run.exit, run.stdout), (0, f"{case}: done\n"), f"{case}: exit, stdout", run)
        errors = process["errors"]
        if expected is None:
            ctx.expect_eq(errors, [], f"{case}: no error (no redzone sees a read)", run)
            continue
        kind, marker, found_at, place, size = expected
        if not ctx.expect_eq([e["kind"] for e in errors], [kind], f"{case}: kinds", run):
            continue
        error = errors[0]
        expect_frame0(ctx, run, error["stack"], marker, f"{case}: reported stack")
        expect_frame0(ctx, run, error["alloc_stack"], ALLOC_MARKERS.get(case, "ALLOC-block"),
                      f"{case}: allocation")
        if kind == "write_after_free":
            expect_frame0(ctx, run, error["free_stack"], "FREE-block", f"{case}: free")
        ctx.expect_eq(error["found_at"], found_at, f"{case}: found_at", run)
        ctx.expect_eq(error["block"]["size"], size, f"{case}: block size", run)
        ctx.expect_eq(relation(error), place, f"{case}: address from the block", run)


@cli_test
def test_heap_errors_full_realloc_stale(ctx):
    """realloc always moves a checked block, so a write through the old pointer is a write
    after free (found at exit, the free being the realloc's)."""
    run, process = run_full(ctx, "realloc_stale")
    errors = process["errors"]
    if ctx.expect_eq([e["kind"] for e in errors], ["write_after_free"], "realloc_stale: kinds",
                     run):
        expect_frame0(ctx, run, errors[0]["free_stack"], "REALLOC-block", "realloc_stale: free")
        ctx.expect_eq(relation(errors[0]), (3, "inside"), "realloc_stale: address", run)


@cli_test
def test_heap_errors_full_large_beyond_quarantine(ctx):
    """A freed block over 64 KiB larger than the whole quarantine is given back at its free
    (filling it would touch every page, and it would push out every other freed block): its
    overflow is still found at the free, its write after free is not; no block is unchecked."""
    run, process = run_full(ctx, "large_overflow", quarantine_mb=0)
    ctx.expect_eq([e["kind"] for e in process["errors"]], ["write_outside_block"],
                  "large_overflow with no quarantine: found at its free", run)
    ctx.expect(re.search(r"had no redzones", run.stderr) is None, "no block unchecked", run)


@cli_test
def test_heap_errors_full_counts_and_formats(ctx):
    """Twenty overflows: the ten found at their free and the ten found at exit are one error
    each, ten occurrences; valgrind's XML calls them InvalidWrite, SARIF write-outside-block;
    a write after free is SARIF's write-after-free, with the free as its location."""
    xml_path = ctx.path("many.xml")
    sarif_path = ctx.path("many.sarif")
    json_path = ctx.path("many.json")
    run = ctx.memtrack("run", "--check-heap=full", f"--json={json_path}",
                       f"--xml-file={xml_path}", f"--sarif={sarif_path}",
                       ctx.program("heap_errors"), "many")
    errors = ctx.read_json(json_path, run)["processes"][0]["errors"]
    ctx.expect_eq(sorted((e["kind"], e["found_at"], e["occurrences"]) for e in errors),
                  [("write_outside_block", "exit", 10), ("write_outside_block", "free", 10)],
                  "many: errors", run)
    xml = open(xml_path).read()
    ctx.expect_eq(re.findall(r"<kind>(\w+)</kind>", xml).count("InvalidWrite"), 2,
                  "XML: two InvalidWrite errors", run)
    ctx.expect(re.search(r"is 0 bytes after a block of size 1\d alloc&apos;d</auxwhat>", xml),
               "XML auxwhat as memcheck words it", run)
    rules = [r["ruleId"] for r in ctx.read_json(sarif_path, run)["runs"][0]["results"]
             if not r["ruleId"].endswith("-leak")]  # the nine blocks main's frame let go
    ctx.expect_eq(rules, ["write-outside-block"] * 2, "SARIF rules", run)

    sarif_path = ctx.path("uaf.sarif")
    run = ctx.memtrack("run", "--check-heap=full", f"--sarif={sarif_path}",
                       ctx.program("heap_errors"), "uaf_write")
    results = ctx.read_json(sarif_path, run)["runs"][0]["results"]
    ctx.expect_eq([r["ruleId"] for r in results], ["write-after-free"], "SARIF uaf rule", run)
    if results:
        names = [s["message"]["text"] for s in results[0].get("stacks", [])]
        ctx.expect_eq(names, ["Freed at", "Allocated at"], "SARIF uaf stacks", run)
    ctx.expect(re.search(r"Write to a freed block: 0x[0-9a-f]+ is 20 bytes inside a block of 40 "
                         r"bytes, found at exit", run.stderr) is not None, "text report", run)


@cli_test
def test_heap_errors_full_keeps_verdicts(ctx):
    """The check changes no leak verdict: leak_kinds' groups (definite with its indirect,
    possible, reachable, a deep definite) are the same bytes and blocks with and without it,
    and the bug-free cases report no error."""
    def summary(options):
        json_path = ctx.path(f"leaks{len(options)}.json")
        run = ctx.memtrack("run", *options, f"--json={json_path}", "--show-leak-kinds=all",
                           ctx.program("leak_kinds"))
        s = ctx.read_json(json_path, run)["processes"][0]["summary"]
        return run, {k: v for k, v in s.items()
                     if k.split("_")[0] in ("definite", "indirect", "possible", "reachable")}
    _, plain = summary([])
    run, checked = summary(["--check-heap=full"])
    ctx.expect_eq(checked, plain, "leak totals with --check-heap=full", run)
    ctx.expect_eq(plain["definite_blocks"], 2, "leak_kinds: definite blocks", run)
    for case, kinds in (("none", []), ("double_free", ["double_free"]),
                        ("free_stack", ["invalid_free"])):
        run, process = run_full(ctx, case)
        ctx.expect_eq([e["kind"] for e in process["errors"]], kinds, f"{case}: kinds", run)


@cli_test
def test_heap_errors_full_memcheck_agrees(ctx):
    """memcheck on each case: where it reports an invalid write, the full check reports a write
    error; where it reports only invalid reads, the full check reports nothing (it cannot see
    reads)."""
    for case, expected in FINDS.items():
        oracle, kinds = memcheck_kinds(ctx, case)
        ctx.expect(kinds, f"{case}: memcheck reports an invalid access", oracle)
        ctx.expect_eq("InvalidWrite" in kinds, expected is not None,
                      f"{case}: memcheck's InvalidWrite found exactly when memtrack finds one",
                      oracle)
