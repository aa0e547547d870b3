"""Heap memory errors with --check-heap=sample (docs/heap-errors.md): cli_heap_errors commits
one bug per run, named by its first argument (programs/heap_errors.c, bad accesses on lines
marked BAD-<case>). With sample:1 every block of up to a page goes on a guard page, and
check_heap_side fixes where it lies on its page, so each run is deterministic: the table says
what each side finds (the kind, where its stack's frame 0 is, whether the block was freed).
memcheck, the oracle, runs the same cases: every write error it reports is found by one side
or the other."""

import re
import shutil

from cli_harness import cli_test

SOURCE = "heap_errors.c"

# case -> {side: (kind, marker of frame 0, block freed / found at, dies by SIGSEGV)}; a side
# without an entry finds nothing (a read the page's other side cannot fault on).
FINDS = {
    "overflow_write": {"end": ("invalid_write", "BAD-overflow_write", False, True),
                       "start": ("write_outside_block", "FREE-block", "free", False)},
    "overflow_read": {"end": ("invalid_read", "BAD-overflow_read", False, True)},
    "underflow_write": {"end": ("write_outside_block", "FREE-block", "free", False),
                        "start": ("invalid_write", "BAD-underflow_write", False, True)},
    "underflow_read": {"start": ("invalid_read", "BAD-underflow_read", False, True)},
    "uaf_write": {"end": ("invalid_write", "BAD-uaf_write", True, True),
                  "start": ("invalid_write", "BAD-uaf_write", True, True)},
    "uaf_read": {"end": ("invalid_read", "BAD-uaf_read", True, True),
                 "start": ("invalid_read", "BAD-uaf_read", True, True)},
    # 10 bytes: the block ends 6 bytes before its page's end (addresses in units of 8).
    "overflow_odd": {"end": ("write_outside_block", "FREE-block", "free", False),
                     "start": ("write_outside_block", "FREE-block", "free", False)},
    "overflow_kept": {"end": ("invalid_write", "BAD-overflow_freed", False, True),
                      "start": ("write_outside_block", "ALLOC-block", "exit", False)},
}


def run_case(ctx, case, side, *options, extra_env=None):
    json_path = ctx.path(f"{case}-{side}.json")
    env = ctx.env(MEMTRACK_OPTIONS=f"check_heap_side={side}", **(extra_env or {}))
    run = ctx.memtrack("run", "--check-heap=sample:1", f"--json={json_path}", *options,
                       ctx.program("heap_errors"), case, env=env)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    return run, processes[0]


def expect_frame0(ctx, run, stack, marker, what):
    if not ctx.expect(stack, f"{what}: empty stack", run):
        return
    ctx.expect_eq((stack[0]["file"], stack[0]["line"]),
                  (ctx.source(SOURCE), ctx.marker_line(SOURCE, marker)),
                  f"{what}: frame 0 file:line (marked {marker})", run)


@cli_test
def test_heap_errors_suite(ctx):
    """Each case on each side: the one error the table names (kind, the access's or the free's
    file:line, the allocation at ALLOC-block, the free at FREE-block for a freed block, the
    block's size), the death by SIGSEGV where the instruction faulted (exit 139, with the
    crash section), or the program's normal end."""
    for case, sides in FINDS.items():
        for side in ("end", "start"):
            run, process = run_case(ctx, case, side)
            expected = sides.get(side)
            errors = process["errors"]
            label = f"{case}, side={side}"
            if expected is None:
                ctx.expect_eq(errors, [], f"{label}: no error (a read it cannot catch)", run)
                ctx.expect_eq(run.exit, 0, f"{label}: exit status", run)
                continue
            kind, marker, detail, dies = expected
            if not ctx.expect_eq([e["kind"] for e in errors], [kind], f"{label}: kinds", run):
                continue
            error = errors[0]
            expect_frame0(ctx, run, error["stack"], marker, f"{label}: bad access")
            expect_frame0(ctx, run, error["alloc_stack"], "ALLOC-block", f"{label}: allocation")
            if kind == "write_outside_block":
                ctx.expect_eq(error["found_at"], detail, f"{label}: found_at", run)
            else:
                ctx.expect_eq(error["block_freed"], detail, f"{label}: block_freed", run)
                if detail:
                    expect_frame0(ctx, run, error["free_stack"], "FREE-block", f"{label}: free")
            size = 40 if case.startswith("uaf") else 8 if case == "overflow_kept" else \
                10 if case == "overflow_odd" else 16
            ctx.expect_eq(error["block"]["size"], size, f"{label}: block size", run)
            ctx.expect_eq(run.exit, 139 if dies else 0, f"{label}: exit status", run)
            ctx.expect_eq("crash" in process and process["crash"] is not None, dies,
                          f"{label}: crash section", run)


@cli_test
def test_heap_errors_continue(ctx):
    """check_heap_continue=1: the use after free is reported and the program runs to its end
    (the page is made accessible), exit 0."""
    json_path = ctx.path("report.json")
    env = ctx.env(MEMTRACK_OPTIONS="check_heap_continue=1:check_heap_side=end")
    run = ctx.memtrack("run", "--check-heap=sample:1", f"--json={json_path}",
                       ctx.program("heap_errors"), "uaf_write", env=env)
    ctx.expect_eq((run.exit, run.stdout), (0, "uaf_write: done\n"), "exit, stdout", run)
    errors = ctx.read_json(json_path, run)["processes"][0]["errors"]
    ctx.expect_eq([(e["kind"], e["block_freed"]) for e in errors], [("invalid_write", True)],
                  "errors", run)


@cli_test
def test_heap_errors_not_heap_ones(ctx):
    """The cases that are no heap access keep their misuse errors, with the check on: a
    double free, a free of a stack address; and a program without a bug has none."""
    for case, kind in (("double_free", ["double_free"]), ("free_stack", ["invalid_free"]),
                       ("none", [])):
        run, process = run_case(ctx, case, "random")
        ctx.expect_eq([e["kind"] for e in process["errors"]], kind, f"{case}: kinds", run)
        ctx.expect_eq(run.exit, 0, f"{case}: exit status", run)


RATE_LINE = re.compile(r"check_heap=sample: ([\d,]+) blocks? picked for a guard page went "
                       r"without: a thread picked more than ([\d,]+) a second")


@cli_test
def test_heap_errors_rate_limit(ctx):
    """check_heap_max_per_sec: a thread that picks blocks faster than the limit gets no more
    than the limit (and a burst) on guard pages, and the run ends with one line counting the
    others; 0 lifts the limit, and sample:1 (every block) has none."""
    rounds = "20000"  # a few hundredths of a second: far above 10 picks a second
    def run_churn(check, options):
        env = ctx.env(MEMTRACK_OPTIONS=options)
        return ctx.memtrack("run", f"--check-heap={check}", ctx.program("heap_errors"), "churn",
                            rounds, env=env)
    run = run_churn("sample:2", "check_heap_max_per_sec=10")
    ctx.expect_eq((run.exit, run.stdout), (0, "churn: done\n"), "limited: exit, stdout", run)
    found = RATE_LINE.search(run.stderr)
    if ctx.expect(found is not None, "limited: the line counting the blocks passed by", run):
        passed = int(found.group(1).replace(",", ""))
        # About 10,000 picks (one block in 2, drawn at random), of which at most the burst
        # (16) and 10 a second of the run went on guard pages.
        ctx.expect(5000 <= passed <= 20000, f"limited: {passed} blocks passed by", run)
        ctx.expect_eq(found.group(2), "10", "limited: the limit named", run)
    for check, options in (("sample:2", "check_heap_max_per_sec=0"), ("sample:1", "")):
        run = run_churn(check, options)
        ctx.expect_eq((run.exit, RATE_LINE.search(run.stderr)), (0, None),
                      f"{check} {options or 'default'}: exit, no line", run)


@cli_test
def test_heap_errors_formats(ctx):
    """The same error in valgrind's XML (<kind>InvalidWrite</kind>, memcheck's auxwhat) and
    in SARIF (rule invalid-write with the three stacks), and the text report's title."""
    xml_path = ctx.path("report.xml")
    sarif_path = ctx.path("report.sarif")
    env = ctx.env(MEMTRACK_OPTIONS="check_heap_side=end")
    run = ctx.memtrack("run", "--check-heap=sample:1", f"--xml-file={xml_path}",
                       f"--sarif={sarif_path}", ctx.program("heap_errors"), "uaf_write",
                       env=env)
    ctx.expect_eq(run.exit, 139, "exit status", run)
    xml = open(xml_path).read()
    ctx.expect("<kind>InvalidWrite</kind>" in xml, "XML kind InvalidWrite", run)
    ctx.expect("is 20 bytes inside a block of size 40 free&apos;d</auxwhat>" in xml,
               "XML auxwhat as memcheck words it", run)
    sarif = ctx.read_json(sarif_path, run)
    results = sarif["runs"][0]["results"]
    ctx.expect_eq([r["ruleId"] for r in results], ["invalid-write"], "SARIF rules", run)
    if results:
        names = [s["message"]["text"] for s in results[0].get("stacks", [])]
        ctx.expect_eq(names, ["Access", "Freed at", "Allocated at"], "SARIF stacks", run)
    ctx.expect(re.search(r"Invalid write at 0x[0-9a-f]+: 20 bytes inside a block of 40 bytes, freed:",
                         run.stderr) is not None, "text report title", run)


def memcheck_kinds(ctx, case):
    """memcheck's run of the case and the kinds of invalid access it reports (InvalidRead,
    InvalidWrite, ...), from its XML."""
    valgrind = shutil.which("valgrind")
    ctx.require(valgrind is not None, "valgrind is installed (scripts/install-deps.sh)")
    xml_path = ctx.path(f"{case}.vg.xml")
    oracle = ctx.run([valgrind, "--xml=yes", f"--xml-file={xml_path}",
                      ctx.program("heap_errors"), case])
    with open(xml_path, encoding="utf-8") as f:
        return oracle, set(re.findall(r"<kind>(Invalid\w+)</kind>", f.read()))


@cli_test
def test_heap_errors_memcheck_agrees(ctx):
    """memcheck on each case: every case where it reports an invalid write, one of the two
    sides reports a write error (invalid_write or write_outside_block); every invalid read it
    reports is found by one side too."""
    for case, sides in FINDS.items():
        oracle, kinds = memcheck_kinds(ctx, case)
        ours = {kind for kind, *_ in sides.values()}
        if "InvalidWrite" in kinds:
            ctx.expect(ours & {"invalid_write", "write_outside_block"},
                       f"{case}: memcheck's InvalidWrite found by a side", oracle)
        if "InvalidRead" in kinds:
            ctx.expect("invalid_read" in ours, f"{case}: memcheck's InvalidRead found", oracle)
        ctx.expect(kinds, f"{case}: memcheck reports an invalid access", oracle)
