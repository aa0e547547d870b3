"""LeakSanitizer's options under memtrack (docs/switching.md, "LeakSanitizer"): LSAN_OPTIONS
read by `memtrack run` before its command line, one note per option without an effect, the
used suppressions of -v, and the runtime's own reading of LSAN_OPTIONS without the CLI."""

import os

from cli_harness import cli_test, text_by_pid

REPORT_OBJECTS_NOTE = ("memtrack: note: LSAN_OPTIONS: report_objects is ignored (memtrack groups "
                       "leaks by allocation stack and keeps no block addresses)")
UNKNOWN_NOTE = "memtrack: note: LSAN_OPTIONS: no_such_option is ignored (memtrack has no equivalent)"


def runtime_path(ctx):
    return os.path.join(os.path.dirname(os.path.dirname(ctx.paths.memtrack)), "runtime",
                        "libmemtrack.so")


@cli_test
def test_lsan_options_report_side(ctx):
    """suppressions, exitcode and print_suppressions from LSAN_OPTIONS act as --suppressions,
    --error-exitcode and -v; options memtrack has no use for get one note each, before the
    program runs, and never fail the run."""
    supp = ctx.write("lsan.supp", "# third party\nleak:make_leak\n")
    env = ctx.env(LSAN_OPTIONS=f"report_objects=1:suppressions={supp}:print_suppressions=1:"
                                "no_such_option=3:exitcode=7")
    run = ctx.memtrack("run", ctx.program("leak_one"), env=env)
    ctx.expect_eq(run.exit, 0, "all leaks suppressed: the program's status", run)
    lines = run.stderr.splitlines()
    ctx.expect_eq(lines[:2], [REPORT_OBJECTS_NOTE, UNKNOWN_NOTE], "the notes, first", run)
    processes = text_by_pid(run.stderr)
    ctx.require(len(processes) == 1, "one process", run)
    (report,) = processes.values()
    ctx.expect_line("\n".join(report),
                    f"used_suppression:      1 leak:make_leak {supp}:2 (100 bytes in 1 block)",
                    "print_suppressions=1 lists the entry", run)
    # The same without the suppression: exitcode applies, and nothing is listed as used.
    env = ctx.env(LSAN_OPTIONS="exitcode=7:print_suppressions=1")
    run = ctx.memtrack("run", ctx.program("leak_one"), env=env)
    ctx.expect_eq(run.exit, 7, "LSAN_OPTIONS exitcode=7 with a leak", run)
    ctx.expect("used_suppression" not in run.stderr, "no used suppression", run)
    ctx.expect("memtrack: note:" not in run.stderr, "no note for options memtrack applies", run)


@cli_test
def test_lsan_options_command_line_wins(ctx):
    """The command line comes after LSAN_OPTIONS: its --error-exitcode wins, and -v lists
    the suppressions of both places."""
    supp = ctx.write("lsan.supp", "leak:make_leak\n")
    env = ctx.env(LSAN_OPTIONS="exitcode=7")
    run = ctx.memtrack("run", "--error-exitcode=9", ctx.program("leak_one"), env=env)
    ctx.expect_eq(run.exit, 9, "--error-exitcode over LSAN_OPTIONS exitcode", run)
    run = ctx.memtrack("run", "-v", f"--suppressions={supp}", ctx.program("leak_one"), env=env)
    ctx.expect_eq(run.exit, 0, "suppressed: no exitcode", run)
    ctx.expect(f"used_suppression:      1 leak:make_leak {supp}:1 (100 bytes in 1 block)"
               in run.stderr, "-v lists the used entry", run)


@cli_test
def test_lsan_options_bad_values_and_asan(ctx):
    """A bad value is one note naming it; ASAN_OPTIONS=detect_leaks=0 is noted, and memtrack
    checks anyway; a missing suppressions file is memtrack's usual error."""
    env = ctx.env(LSAN_OPTIONS="exitcode=300:max_leaks=x", ASAN_OPTIONS="detect_leaks=0")
    run = ctx.memtrack("run", ctx.program("leak_one"), env=env)
    ctx.expect_eq(run.exit, 0, "no exit code from a bad exitcode", run)
    ctx.expect_eq(run.stderr.splitlines()[:3], [
        "memtrack: note: LSAN_OPTIONS: exitcode is ignored (LSAN_OPTIONS exitcode expects a "
        "number from 0 to 255, not '300')",
        "memtrack: note: LSAN_OPTIONS: max_leaks is ignored (LSAN_OPTIONS max_leaks expects a "
        "number from 0 to 1073741824, not 'x')",
        "memtrack: note: ASAN_OPTIONS sets detect_leaks=0, which memtrack ignores: it checks "
        "for leaks anyway"], "the notes", run)
    ctx.expect("100 bytes in 1 block is definitely lost" in run.stderr, "still checked", run)
    missing = ctx.path("missing.supp")
    run = ctx.memtrack("run", ctx.program("leak_one"),
                       env=ctx.env(LSAN_OPTIONS=f"suppressions={missing}"))
    ctx.expect_error(run, 125, f"cannot read suppressions file {missing}: No such file or "
                               "directory")


@cli_test
def test_lsan_options_max_leaks_and_log_path(ctx):
    """max_leaks lists the largest groups only; log_path=PATH writes PATH.PID, as LSan."""
    log = ctx.path("lsan.log")
    run = ctx.memtrack("run", ctx.program("several_leaks"),
                       env=ctx.env(LSAN_OPTIONS=f"max_leaks=2:log_path={log}"))
    ctx.require(run.stderr == "", "the report goes to the log file", run)
    files = [name for name in os.listdir(ctx.tmp) if name.startswith("lsan.log.")]
    ctx.require(len(files) == 1, f"one lsan.log.PID file, found {files}", run)
    with open(ctx.path(files[0]), encoding="utf-8") as f:
        (report,) = text_by_pid(f.read()).values()
    titles = [line for line in report if line.endswith(" lost")]
    ctx.expect_eq(len(titles), 2, "groups listed", run)
    ctx.expect(any(line.endswith("more groups not listed (max_leaks=2)") for line in report),
               "a line counts the others", run)


@cli_test
def test_lsan_options_without_the_cli(ctx):
    """LD_PRELOAD=libmemtrack.so alone: the runtime reads LSAN_OPTIONS itself, applies
    max_leaks, and notes the options that only memtrack run applies or nobody does."""
    runtime = runtime_path(ctx)
    ctx.require(os.path.exists(runtime), f"the runtime at {runtime}")
    env = ctx.env(LD_PRELOAD=runtime, LSAN_OPTIONS="exitcode=3:report_objects=1:max_leaks=1")
    run = ctx.run([ctx.program("several_leaks")], env=env)
    ctx.expect_eq(run.exit, 0, "the program's status", run)
    notes = [line.split(": ", 1)[1] for line in run.stderr.splitlines()
             if line.startswith("memtrack[")]
    ctx.expect_eq(notes, [
        "note: LSAN_OPTIONS: exitcode is ignored (applies under memtrack run only)",
        "note: LSAN_OPTIONS: report_objects is ignored (memtrack groups leaks by allocation "
        "stack and keeps no block addresses)"], "the runtime's notes", run)
