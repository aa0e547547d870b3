"""Golden files: the whole stdout, stderr and exit status of small deterministic runs,
normalized (see run_cli_tests.py), compared exactly; `run_cli_tests.py --update NAME`
rewrites them. Also colour (--color, NO_COLOR, a terminal) and --log-file."""

import os
import re

from cli_harness import cli_test, text_by_pid

ESCAPE = re.compile(r"\033\[[0-9;]*m")


@cli_test
def test_golden_text(ctx):
    """One 100-byte leak in make_leak(): the complete text report."""
    ctx.expect_golden("leak_one", ctx.memtrack("run", ctx.program("leak_one")))


@cli_test
def test_golden_gen_suppressions(ctx):
    """Three leak sites, each with its suppression block (unprefixed lines); exit(4)."""
    run = ctx.memtrack("run", "--gen-suppressions=yes", ctx.program("three_sites"), "4")
    ctx.expect_golden("three_sites_gen_suppressions", run)


@cli_test
def test_golden_no_leaks(ctx):
    """A program that frees everything: one line."""
    ctx.expect_golden("no_leak", ctx.memtrack("run", ctx.program("no_leak"), "3"))


@cli_test
def test_golden_json(ctx):
    """--json=- writes the JSON report to stdout (and the text report still goes to stderr)."""
    ctx.expect_golden("leak_one_json", ctx.memtrack("run", "--json=-", ctx.program("leak_one")))


def colour_runs(ctx, env_changes):
    """stderr of memtrack run leak_one with each --color value, in the environment given."""
    runs = {}
    for colour in ("auto", "always", "never"):
        run = ctx.memtrack("run", f"--color={colour}", ctx.program("leak_one"),
                           env=ctx.env(**env_changes))
        ctx.expect_run(run, exit=0, stdout="", what=f"--color={colour}")
        runs[colour] = run
    return runs


def check_colour(ctx, run, coloured, what):
    codes = ESCAPE.findall(run.stderr)
    if not coloured:
        ctx.expect(not codes and "\033" not in run.stderr, f"{what}: escape codes", run)
        return
    # Group titles bold red, the LEAK SUMMARY line bold, each followed by a reset.
    lines = [line.split(" ", 1)[1] for line in run.stderr.splitlines() if " " in line]
    ctx.expect("\033[1;31m100 bytes in 1 block is definitely lost\033[0m" in lines,
               f"{what}: no bold red group title", run)
    ctx.expect("\033[1mLEAK SUMMARY:\033[0m" in lines,
               f"{what}: no bold LEAK SUMMARY", run)
    ctx.expect_eq(len(codes), 4, f"{what}: number of escape codes", run)


@cli_test
def test_color(ctx):
    """stderr is a pipe here: colour only with --color=always, also with NO_COLOR set; the
    coloured report without its escape codes is the plain one."""
    for env_changes in ({}, {"NO_COLOR": "1"}, {"TERM": "xterm-256color"}):
        runs = colour_runs(ctx, env_changes)
        for colour, run in runs.items():
            check_colour(ctx, run, colour == "always", f"--color={colour} with {env_changes}")
        stripped = ctx.normalizer()(ESCAPE.sub("", runs["always"].stderr))
        ctx.expect_eq(stripped, ctx.normalizer()(runs["never"].stderr),
                      "--color=always without escape codes vs --color=never (normalized)")


@cli_test
def test_color_tty(ctx):
    """With stderr on a terminal, auto colours unless NO_COLOR is set (to anything but "")
    or TERM=dumb; always and never still win."""
    cases = [("auto", {"TERM": "xterm"}, True), ("auto", {"TERM": None}, True),
             ("auto", {"NO_COLOR": "1"}, False), ("auto", {"NO_COLOR": ""}, True),
             ("auto", {"TERM": "dumb"}, False), ("never", {}, False),
             ("always", {"NO_COLOR": "1"}, True)]
    for colour, env_changes, coloured in cases:
        run = ctx.memtrack_on_tty("run", f"--color={colour}", ctx.program("leak_one"),
                                  env=ctx.env(**env_changes))
        what = f"--color={colour} on a tty with {env_changes}"
        ctx.expect_run(run, exit=0, stdout="", what=what)
        check_colour(ctx, run, coloured, what)


@cli_test
def test_log_file(ctx):
    """--log-file=FILE takes the text report (%p: the program's pid); stderr stays empty, and
    the log is never coloured."""
    pattern = ctx.path("memtrack.%p.log")
    run = ctx.memtrack("run", f"--log-file={pattern}", "--color=auto", ctx.program("leak_one"),
                       "2")
    ctx.expect_run(run, exit=2, stdout="", stderr="")
    logs = [name for name in os.listdir(ctx.tmp) if name.endswith(".log")]
    ctx.require(len(logs) == 1, f"expected one log file, found {logs}", run)
    with open(ctx.path(logs[0]), encoding="utf-8") as f:
        log = f.read()
    pids = list(text_by_pid(log))
    ctx.expect_eq(logs[0], f"memtrack.{pids[0] if pids else '?'}.log",
                  "log file name (pid of the reported program)", run)
    normalize = ctx.normalizer()
    with open(os.path.join(ctx.paths.golden_dir, "leak_one.stderr"), encoding="utf-8") as f:
        expected = f.read().replace("cli_leak_one (pid", "cli_leak_one 2 (pid").replace(
            "exited with status 0", "exited with status 2")
    ctx.expect_eq(normalize(log), expected, "log file (normalized) vs golden/leak_one.stderr")
