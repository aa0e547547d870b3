"""A program that starts children with an empty environment (posix_spawn, then execve):
memtrack hands on what a traced child needs, so both children are reported."""

from cli_harness import cli_test, leak_groups


@cli_test
def test_exec_env_cleared_children_traced(ctx):
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", ctx.program("clear_env"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    ctx.expect_eq(run.stdout, "child: LD_PRELOAD set\n" * 2, "what the children saw", run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 2, "two processes: the spawned child, the exec'd image",
                   run)
    for process in processes:
        ctx.expect_eq(process["command"][1:], ["child"], "a child's command", run)
        ctx.expect_eq(leak_groups(process), [(33, 1, "child_leak")], "a child's leak", run)
    ctx.expect("no leak data" not in run.stderr, "no process without data", run)
