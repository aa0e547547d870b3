"""Under memtrack run every report the runtime makes reaches the user through the CLI, in
the report's format and where --log-file and --json say: on-demand leak checks
(memtrack_do_leak_check) and allocator misuse errors print nothing raw on the program's
stderr."""

from cli_harness import cli_test, leak_groups


@cli_test
def test_runtime_reports_on_demand_check(ctx):
    log = ctx.path("leaks.txt")
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--log-file={log}", f"--json={json_path}",
                       ctx.program("do_leak_check"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    ctx.expect_eq(run.stdout, "lost 333\n", "what memtrack_do_leak_check returned", run)
    ctx.expect_eq(run.stderr, "", "nothing on stderr (the reports went to the log)", run)
    with open(log) as f:
        text = f.read()
    headers = [line for line in text.splitlines() if " memtrack " in line and "(pid " in line]
    ctx.expect(len(headers) == 2 and headers[0].endswith(
        "on-demand leak check 1 (memtrack_do_leak_check)") and
        headers[1].endswith("exited with status 0"), f"the two report headers {headers}", run)
    ctx.expect(text.count("333 bytes in 1 block is definitely lost") == 2,
               "the leak in both reports, symbolized", run)
    report = ctx.read_json(json_path, run)
    ctx.require_eq(len(report.get("checks", [])), 1, "one on-demand check in the JSON", run)
    check = report["checks"][0]
    ctx.expect_eq(check["occasion"], "on-demand leak check 1 (memtrack_do_leak_check)",
                  "its occasion", run)
    ctx.expect_eq(check["exit"], {"running": True}, "its exit", run)
    ctx.expect_eq(leak_groups(check), [(333, 1, "lose_one")], "its leak", run)


@cli_test
def test_runtime_reports_misuse_not_raw(ctx):
    log = ctx.path("leaks.txt")
    run = ctx.memtrack("run", f"--log-file={log}", ctx.program("misuse"), "double_free")
    ctx.require_eq(run.exit, 0, "exit status", run)
    ctx.expect("memtrack[" not in run.stderr, "no raw runtime line on stderr", run)
    with open(log) as f:
        ctx.expect("Double free of 0x" in f.read(), "the error in the log", run)
