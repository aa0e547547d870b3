"""memtrack top --once and --json on the fixture tree (fixtures/proc: see make_fixture.py
for what each pid exercises) against golden files, the usage errors, and a run on the real
/proc."""

import json
import os

from cli_harness import cli_test


@cli_test
def test_once_golden(ctx):
    """The whole table, sorted by RSS: kernel thread 0K, '-' for the unreadable smaps_rollup
    and the zombie, statm fallback, whole long command (stdout is not a terminal)."""
    ctx.expect_golden("once", ctx.top("--once"))


@cli_test
def test_once_columns(ctx):
    """$COLUMNS cuts every line (the long command line too); a bad $COLUMNS is ignored."""
    ctx.expect_golden("once_columns_90", ctx.top("--once", env=ctx.env(COLUMNS="90")))
    ctx.expect_run(ctx.top("--once", env=ctx.env(COLUMNS="wide")),
                   stdout=ctx.top("--once").stdout, exit=0, what="COLUMNS=wide")


@cli_test
def test_once_filters(ctx):
    """--sort (each column), --reverse, --limit, --pid, --user, --filter."""
    runs = [["--once", "--sort", column] for column in
            ("pid", "user", "pss", "uss", "swap", "growth", "rate", "command")]
    runs += [["--once", "--sort", "pid", "--reverse"], ["--once", "--limit", "3"],
             ["--once", "--pid", "100,150", "--pid", "2"], ["--once", "--user", "4242"],
             ["--once", "--user", "root", "--user", "nobody", "--sort", "pid"],
             ["--once", "--filter", "SERVER"], ["--once", "--filter", "300"],
             ["--once", "--pid", "999"]]
    ctx.expect_golden("once_filters", ctx.runs_as_one(runs))


@cli_test
def test_once_threads_tree(ctx):
    """--threads (TID, TGID, state, CPU time, name under each process), --tree, both."""
    runs = [["--once", "--threads", "--pid", "100,1"], ["--once", "--tree"],
            ["--once", "--tree", "--threads", "--user", "4242"]]
    ctx.expect_golden("once_threads_tree", ctx.runs_as_one(runs))


@cli_test
def test_json_golden(ctx):
    """--json: every process with its threads; null where unreadable; full command lines."""
    run = ctx.top("--json")
    ctx.expect_golden("json", run)
    doc = json.loads(run.stdout)
    ctx.expect_eq([p["pid"] for p in doc["processes"]], [100, 1, 300, 150, 400, 800, 2, 700],
                  "pids by RSS")


@cli_test
def test_json_filters(ctx):
    """--json honours --pid, --user, --sort, --reverse and --limit; --once with it changes
    nothing."""
    run = ctx.top("--json", "--user", "4242", "--sort", "pid", "--reverse")
    ctx.expect_run(run, exit=0, stderr="", what="--json --user 4242")
    doc = json.loads(run.stdout)
    ctx.expect_eq([p["pid"] for p in doc["processes"]], [150, 100], "pids", run)
    ctx.expect_eq([t["tid"] for t in doc["processes"][1]["threads"]], [100, 101, 102],
                  "threads of 100", run)
    ctx.expect_eq(doc["processes"][0]["pss_kb"], None, "pss_kb of 150 (no smaps_rollup)", run)
    run = ctx.top("--json", "--once", "--limit", "1")
    ctx.expect_eq([p["pid"] for p in json.loads(run.stdout)["processes"]], [100], "--limit 1", run)


BAD_OPTIONS = [
    (["-d", "0"], "-d expects seconds from 0.01 to 86400 (e.g. 0.5), not '0'"),
    (["-d", "-1"], "-d expects seconds from 0.01 to 86400 (e.g. 0.5), not '-1'"),
    (["--delay=soon"], "-d expects seconds from 0.01 to 86400 (e.g. 0.5), not 'soon'"),
    (["--once", "--sort", "cpu"],
     "--sort expects one of pid, user, rss, pss, uss, swap, growth, rate, command, not 'cpu'"),
    (["--once", "--limit", "0"], "--limit expects a number from 1 to 1073741824, not '0'"),
    (["--once", "--pid", "12,x"], "--pid expects a number from 1 to 1073741824, not 'x'"),
    (["--once", "--growth-samples", "0"],
     "--growth-samples expects a number from 1 to 1000, not '0'"),
    (["--once", "--bogus"], "The following argument was not expected: --bogus (see memtrack --help)"),
    (["--once", "--proc-root", "/nonexistent/proc"],
     "cannot open the proc directory /nonexistent/proc: No such file or directory "
     "(--proc-root takes a directory laid out like /proc)"),
    (["--samples", "3"], "--samples applies to --once and --json only"),
]


@cli_test
def test_bad_options(ctx):
    """Each bad option: exit 125 and one line saying what is wrong."""
    for args, message in BAD_OPTIONS:
        run = ctx.memtrack("top", *args)
        ctx.expect_error(run, 125, message, what=" ".join(["memtrack top", *args]))


@cli_test
def test_no_terminal(ctx):
    """The live view needs a terminal: without one, a one-line error pointing at --once."""
    ctx.expect_error(ctx.memtrack("top"), 125,
                     "memtrack top shows a live table only on a terminal; use --once or --json "
                     "to print it once")


@cli_test
def test_real_proc(ctx):
    """On the real /proc: this test's own process is listed with its memory, PSS/USS are
    readable (we may read our own smaps_rollup), and with --samples a process that keeps
    growing is marked."""
    run = ctx.memtrack("top", "--once")
    ctx.expect(run.exit == 0 and run.stdout.startswith("    PID USER"), "--once failed", run)
    me = os.getpid()
    run = ctx.memtrack("top", "--json", "--pid", str(me))
    ctx.expect_run(run, exit=0, stderr="", what="--json --pid SELF")
    processes = json.loads(run.stdout)["processes"] if run.exit == 0 else []
    if ctx.expect_eq(len(processes), 1, "processes for --pid SELF", run):
        p = processes[0]
        ctx.expect(p["rss_kb"] > 1000 and p["pss_kb"] and p["uss_kb"], "memory of SELF", run)
        ctx.expect("run_top_tests.py" in p["command"], "command of SELF", run)
        ctx.expect(p["threads"] and p["threads"][0]["tid"] == me, "threads of SELF", run)
    grower = ctx.start([ctx.paths.grower, "grow", "real-proc-tag"])
    run = ctx.memtrack("top", "--json", "--pid", str(grower.pid), "--samples", "4", "-d", "0.3",
                       "--growth-samples", "2")
    processes = json.loads(run.stdout)["processes"] if run.exit == 0 else []
    if ctx.expect_eq(len(processes), 1, "processes for --pid GROWER", run):
        p = processes[0]
        ctx.expect(p["growth_kb"] > 1000 and p["growth_kb_per_min"] > 0 and p["growing"],
                   "grower's growth", run)
        names = sorted(t["name"] for t in p["threads"])
        ctx.expect_eq(names, ["grower-worker", "top_grower"], "grower's threads", run)
