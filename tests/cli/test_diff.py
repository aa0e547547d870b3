"""memtrack diff BASE NEW and memtrack run --baseline: leak groups matched by kind and stack
(function and source file name of each frame, not lines or addresses), --fail-on exit codes,
the JSON form, and result files as input. The programs are written and compiled here, twice:
the second version moves the old leak down by some lines and adds a leak site."""

import os
import shutil
import subprocess

from cli_harness import Failure, cli_test

# Version 1 leaks 64 bytes in keep(). Version 2 has lines above keep() (the leak's line moves)
# and a second leak site, fresh(); keep() leaks as before.
PROGRAM_V1 = """#include <stdlib.h>
#include <string.h>
static void *volatile sink;
__attribute__((noinline)) static void keep(void) { sink = malloc(64); memset(sink, 1, 64); }
int main(void) { keep(); sink = 0; return 0; }
"""

PROGRAM_V2 = """#include <stdlib.h>
#include <string.h>
/* A comment and a helper above the old leak site: every line below moves. */
__attribute__((noinline)) static int unrelated(int x) { return x * 3 + 1; }

static void *volatile sink;
static void *volatile other;
__attribute__((noinline)) static void fresh(void) { other = malloc(32); }
__attribute__((noinline)) static void keep(void) { sink = malloc(64); memset(sink, 1, 64); }
int main(void) { keep(); fresh(); sink = 0; other = 0; return unrelated(0) - 1; }
"""


def build(ctx, version, source):
    """Writes v1/leak.c or v2/leak.c and compiles it with gcc -g -O1 to leak-v1 or leak-v2;
    the program's path."""
    directory = ctx.mkdir(version)
    path = os.path.join(directory, "leak.c")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    program = os.path.join(directory, f"leak-{version}")  # renamed: only main and up count
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        raise Failure("no C compiler (gcc or cc) to build the diff test programs")
    subprocess.run([compiler, "-g", "-O1", "-fno-inline", "-o", program, path], check=True)
    return program


def run_json(ctx, program, name, *options):
    """memtrack run --json=NAME PROGRAM; the JSON report's path."""
    path = ctx.path(name)
    run = ctx.memtrack("run", f"--json={path}", *options, program)
    ctx.require_eq(run.exit, 0, f"memtrack run {program}: exit status", run)
    return path


def two_versions(ctx):
    v1 = build(ctx, "v1", PROGRAM_V1)
    v2 = build(ctx, "v2", PROGRAM_V2)
    return run_json(ctx, v1, "v1.json"), run_json(ctx, v2, "v2.json")


def leak_line(report, function):
    for group in report["processes"][0]["leaks"]:
        if group["stack"][0]["function"] == function:
            return group["stack"][0]["line"]
    return None


@cli_test
def test_diff_moved_leak_unchanged(ctx):
    base, new = two_versions(ctx)
    lines = (leak_line(ctx.read_json(base), "keep"), leak_line(ctx.read_json(new), "keep"))
    ctx.require(None not in lines and lines[0] != lines[1],
                f"keep()'s leak should be on different lines in v1 and v2, got {lines}")
    out = ctx.path("diff.json")
    run = ctx.memtrack("diff", f"--json={out}", base, new)
    ctx.expect_eq(run.exit, 0, "memtrack diff without --fail-on: exit status", run)
    ctx.expect_line(run.stdout, "Leak groups: 1 new, 0 grown, 0 shrunk, 0 gone, 1 unchanged",
                    "memtrack diff text", run)
    ctx.expect_line(run.stdout, "new (definite): 0 bytes in 0 blocks -> 32 bytes in 1 block",
                    "memtrack diff text", run)
    ctx.expect_line(run.stdout, "    #0 fresh (leak.c)", "memtrack diff text", run)
    diff = ctx.read_json(out, run)
    ctx.expect_eq(diff["diff"], {"new": 1, "grown": 0, "shrunk": 0, "gone": 0, "unchanged": 1},
                  "diff.json counts", run)
    statuses = {e["frames"][0]: (e["status"], e["kind"], e["base_bytes"], e["new_bytes"])
                for e in diff["entries"]}
    ctx.expect_eq(statuses, {"fresh (leak.c)": ("new", "definite", 0, 32),
                             "keep (leak.c)": ("unchanged", "definite", 64, 64)},
                  "diff.json entries by first frame", run)


@cli_test
def test_diff_fail_on(ctx):
    base, new = two_versions(ctx)
    ctx.expect_eq(ctx.memtrack("diff", "--fail-on=new", base, new).exit, 1,
                  "--fail-on=new with a new group: exit status")
    ctx.expect_eq(ctx.memtrack("diff", "--fail-on=grown", base, new).exit, 1,
                  "--fail-on=grown with a new group: exit status")
    gone = ctx.memtrack("diff", "--fail-on=grown", new, base)
    ctx.expect_eq(gone.exit, 0, "--fail-on=grown with a gone group only: exit status", gone)
    ctx.expect_line(gone.stdout, "Leak groups: 0 new, 0 grown, 0 shrunk, 1 gone, 1 unchanged",
                    "memtrack diff NEW BASE", gone)
    same = ctx.memtrack("diff", "--fail-on=new", base, base)
    ctx.expect_eq(same.exit, 0, "--fail-on=new, a report against itself: exit status", same)
    bad = ctx.memtrack("diff", "--fail-on=sometimes", base, new)
    ctx.expect_error(bad, 125, "--fail-on expects never, new or grown, not 'sometimes'")
    junk = ctx.write("junk.json", '{"not": "a report"}')
    ctx.expect_error(ctx.memtrack("diff", junk, new), 125,
                     f"{junk}: not a memtrack JSON report", "memtrack diff JUNK NEW")


@cli_test
def test_diff_json_stdout(ctx):
    base, new = two_versions(ctx)
    run = ctx.memtrack("diff", "--json=-", base, new)
    ctx.expect_eq(run.exit, 0, "memtrack diff --json=-: exit status", run)
    ctx.expect(run.stdout.startswith("{"), "memtrack diff --json=-: JSON on stdout", run)


@cli_test
def test_diff_result_dirs(ctx):
    v1 = build(ctx, "v1", PROGRAM_V1)
    v2 = build(ctx, "v2", PROGRAM_V2)
    for name, program in (("r1", v1), ("r2", v2)):
        run = ctx.memtrack("run", f"--keep-results={ctx.path(name)}", program)
        ctx.require_eq(run.exit, 0, "memtrack run --keep-results: exit status", run)
    run = ctx.memtrack("diff", ctx.path("r1"), ctx.path("r2"))
    ctx.expect_line(run.stdout, "Leak groups: 1 new, 0 grown, 0 shrunk, 0 gone, 1 unchanged",
                    "memtrack diff DIR DIR", run)
    mixed = ctx.memtrack("diff", run_json(ctx, v1, "v1.json"), ctx.path("r2"))
    ctx.expect_line(mixed.stdout, "Leak groups: 1 new, 0 grown, 0 shrunk, 0 gone, 1 unchanged",
                    "memtrack diff JSON DIR", mixed)


@cli_test
def test_run_baseline(ctx):
    v1 = build(ctx, "v1", PROGRAM_V1)
    v2 = build(ctx, "v2", PROGRAM_V2)
    base = run_json(ctx, v1, "v1.json")
    same = ctx.memtrack("run", f"--baseline={base}", "--fail-on=new", v1)
    ctx.expect_eq(same.exit, 0, "run --baseline --fail-on=new, same program: exit status", same)
    ctx.expect_line(same.stderr, f"memtrack: compared with the baseline {base}:",
                    "run --baseline: stderr", same)
    worse = ctx.memtrack("run", f"--baseline={base}", "--fail-on=new", v2)
    ctx.expect_eq(worse.exit, 1, "run --baseline --fail-on=new, a new leak: exit status", worse)
    ctx.expect_line(worse.stderr, "    #0 fresh (leak.c)", "run --baseline: stderr", worse)
    code = ctx.memtrack("run", f"--baseline={base}", "--fail-on=grown", "--error-exitcode=7", v2)
    ctx.expect_eq(code.exit, 7, "run --baseline --error-exitcode=7, a new leak: exit status", code)
    lone = ctx.memtrack("run", "--fail-on=new", v1)
    ctx.expect_error(lone, 125, "--fail-on needs --baseline (memtrack run compares with "
                     "nothing without it)", "run --fail-on without --baseline")
    missing = ctx.memtrack("run", f"--baseline={ctx.path('none.json')}", v1)
    ctx.expect_error(missing, 125, f"cannot read {ctx.path('none.json')}",
                     "run --baseline=MISSING")
