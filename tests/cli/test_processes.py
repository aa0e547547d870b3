"""Several processes: cli_fork_exec forks, its child execs another test program, and the
parent leaks 50 bytes from parent_leak() after the child has exited. Every traced process
has a report with its own pid, ppid, command line and leaks; --trace-children=no stops at
exec."""

import os
import shlex

from cli_harness import cli_test, leak_groups, text_by_pid


def run_fork_exec(ctx, child_argv, *options):
    """memtrack run --json OPTIONS cli_fork_exec CHILD...: (run, JSON processes)."""
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("fork_exec"),
                       *child_argv)
    ctx.require_eq(run.exit, 0, "exit status", run)
    return run, ctx.read_json(json_path, run)["processes"]


def check_parent(ctx, run, parent, child_argv):
    ctx.expect_eq(parent["ppid"], run.pid, "parent's ppid (memtrack's pid)", run)
    ctx.expect_eq(parent["command"], [ctx.program("fork_exec"), *child_argv], "parent's command",
                  run)
    ctx.expect_eq(parent["exit"], {"code": 0}, "parent's exit", run)
    ctx.expect_eq(leak_groups(parent), [(50, 1, "parent_leak")], "parent's leak groups", run)
    lines = text_by_pid(run.stderr).get(parent["pid"], [])
    command = " ".join(shlex.quote(a) for a in [ctx.program("fork_exec"), *child_argv])
    ctx.expect(lines and lines[0].endswith(
        f": {command} (pid {parent['pid']}, parent {run.pid}) exited with status 0"),
        "parent's text header", run)
    ctx.expect("   definitely lost: 50 bytes in 1 block" in lines,
               "parent's LEAK SUMMARY", run)


@cli_test
def test_fork_exec_traced(ctx):
    child_argv = [ctx.program("leak_one"), "5", "two words"]
    run, processes = run_fork_exec(ctx, child_argv)
    ctx.require_eq(len(processes), 2, "number of processes", run)
    parent, child = processes  # the program memtrack started comes first
    check_parent(ctx, run, parent, child_argv)
    ctx.expect_eq(child["ppid"], parent["pid"], "child's ppid (the parent's pid)", run)
    ctx.expect_eq(child["command"], child_argv, "child's command (after exec)", run)
    ctx.expect_eq(child["exit"], {"code": 5}, "child's exit", run)
    ctx.expect_eq(leak_groups(child), [(100, 1, "make_leak")], "child's leak groups", run)
    texts = text_by_pid(run.stderr)
    ctx.expect_eq(list(texts), [parent["pid"], child["pid"]], "pids of the text reports", run)
    lines = texts.get(child["pid"], [])
    ctx.expect(lines and lines[0].endswith(
        f": {ctx.program('leak_one')} 5 'two words' (pid {child['pid']}, parent {parent['pid']})"
        " exited with status 5"), "child's text header", run)
    ctx.expect("   definitely lost: 100 bytes in 1 block" in lines,
               "child's LEAK SUMMARY", run)


@cli_test
def test_fork_exec_untraced(ctx):
    """--trace-children=no: the exec'd program runs without the runtime (its LD_PRELOAD no
    longer names libmemtrack.so) and has no report; the forked child wrote none before exec
    either, so it is listed without leak data, with the reason, and only the parent's result
    file exists (the child's start marker stays, for memtrack report)."""
    results = ctx.path("results")
    child_argv = [ctx.program("show_env")]
    run, processes = run_fork_exec(ctx, child_argv, "--trace-children=no",
                                   f"--keep-results={results}")
    ctx.require_eq(len(processes), 2, "number of processes", run)
    parent, child = processes
    check_parent(ctx, run, parent, child_argv)
    ctx.expect_eq((child["ppid"], child["no_data"]), (parent["pid"], "exec_not_followed"),
                  "child's ppid and no_data", run)
    ctx.expect_eq(child["notes"], [
        "no leak data: it ended without writing its report: it exec'd a program memtrack does "
        "not follow (--trace-children=no), or it was killed by a signal (SIGKILL)"],
        "child's notes", run)
    ctx.expect_eq(list(text_by_pid(run.stderr)), [parent["pid"], child["pid"]],
                  "pids of the text reports", run)
    preload = [line for line in run.stdout.splitlines() if line.startswith("LD_PRELOAD=")]
    ctx.expect(len(preload) == 1 and "libmemtrack.so" not in preload[0],
               "the exec'd child should run, without libmemtrack.so in LD_PRELOAD", run)
    ctx.expect_eq(sorted(os.listdir(results)), [f"memtrack.{parent['pid']}.mtr",
                                                f"memtrack.{child['pid']}.started"],
                  "result files", run)


@cli_test
def test_fork_exec_no_leaks_child(ctx):
    """A process without leaks is summarised in one line."""
    child_argv = [ctx.program("no_leak")]
    run, processes = run_fork_exec(ctx, child_argv)
    ctx.require_eq(len(processes), 2, "number of processes", run)
    parent, child = processes
    check_parent(ctx, run, parent, child_argv)
    ctx.expect_eq(child["leaks"], [], "child's leaks", run)
    ctx.expect_eq(text_by_pid(run.stderr).get(child["pid"]), [
        f"memtrack: {ctx.program('no_leak')} (pid {child['pid']}, parent {parent['pid']}) "
        "exited with status 0: no leaks (3 allocations, all freed)"], "child's text report", run)


def run_fork_no_exec(ctx, *options):
    """memtrack run --json OPTIONS cli_fork_no_exec leak_one: (run, JSON processes). The
    first child leaks 70 bytes and exits without exec; the second execs leak_one (100 bytes);
    the parent leaks 50."""
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("fork_no_exec"),
                       ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    return run, ctx.read_json(json_path, run)["processes"]


@cli_test
def test_child_silent_after_fork(ctx):
    """--child-silent-after-fork=yes (valgrind's): the child that forked without exec has no
    report and is not listed; the child that exec'd a program is reported as usual. With
    =no (the default) all three processes are."""
    run, processes = run_fork_no_exec(ctx)
    ctx.expect_eq([leak_groups(p) for p in processes],
                  [[(50, 1, "parent_leak")], [(70, 1, "child_leak")], [(100, 1, "make_leak")]],
                  "leak groups without the option", run)
    run, processes = run_fork_no_exec(ctx, "--child-silent-after-fork=yes")
    ctx.expect_eq([leak_groups(p) for p in processes],
                  [[(50, 1, "parent_leak")], [(100, 1, "make_leak")]],
                  "leak groups with --child-silent-after-fork=yes", run)
    ctx.expect("child_leak" not in run.stderr and "no leak data" not in run.stderr,
               "nothing of the silent child in the text report", run)
    ctx.expect_eq(len(text_by_pid(run.stderr)), 2, "text reports", run)
