"""--suppressions (LeakSanitizer syntax, report/suppressions.h) and --gen-suppressions.

cli_three_sites leaks 11 bytes from leak_by_name() (three_sites.c), 22 bytes from
alloc_in_site() (alloc_site.c) and 33 bytes from modleak_alloc() in libcli_modleak.so, which
it links; each test suppresses a different one."""

import re

from cli_harness import cli_test, leak_groups, summary_totals, text_by_pid

ALL_SITES = [(33, 1, "modleak_alloc"), (22, 1, "alloc_in_site"), (11, 1, "leak_by_name")]


def run_three_sites(ctx, *options, status="0"):
    """memtrack run OPTIONS cli_three_sites STATUS with a JSON report: (run, JSON process)."""
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("three_sites"), status)
    ctx.require_eq(run.exit, int(status), "exit status", run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    return run, processes[0]


def check_suppressed(ctx, suppressions_text, suppressed_sites):
    """Runs with one suppressions file; exactly `suppressed_sites` are suppressed."""
    path = ctx.write("test.supp", suppressions_text)
    run, process = run_three_sites(ctx, f"--suppressions={path}")
    leaked = [g for g in ALL_SITES if g not in suppressed_sites]
    ctx.expect_eq(leak_groups(process), leaked, "leak groups (bytes, blocks, function)", run)
    ctx.expect_eq(leak_groups(process, "suppressed"), suppressed_sites,
                  "suppressed groups (bytes, blocks, function)", run)
    totals = (sum(g[0] for g in leaked), len(leaked),
              sum(g[0] for g in suppressed_sites), len(suppressed_sites))
    ctx.expect_eq(summary_totals(process), totals,
                  "summary leaked bytes/blocks, suppressed bytes/blocks", run)
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    if leaked:
        ctx.expect_line("\n".join(lines), f"        suppressed: {totals[2]} bytes in {totals[3]} block"
                        + ("s" if totals[3] > 1 else ""), "text report", run)
    return run, process


@cli_test
def test_suppress_by_function(ctx):
    check_suppressed(ctx, "leak:^leak_by_name$\n", [(11, 1, "leak_by_name")])


@cli_test
def test_suppress_by_module(ctx):
    """The module's basename, anchored (it cannot match the full path)."""
    check_suppressed(ctx, "leak:^libcli_modleak.so$\n", [(33, 1, "modleak_alloc")])


@cli_test
def test_suppress_by_source_file(ctx):
    check_suppressed(ctx, "leak:*alloc_site.c\n", [(22, 1, "alloc_in_site")])


@cli_test
def test_suppress_comments(ctx):
    """Comments, blank lines, trailing comments and blanks around patterns; with everything
    suppressed the process is one "no leaks" line and --error-exitcode does not apply."""
    text = ("# suppressions for cli_three_sites\n"
            "\n"
            "leak:^leak_by_name$   # trailing comment\n"
            "   leak:*alloc_site.c\n"
            "\t\n"
            "  # an indented comment\n"
            "leak:^libcli_modleak.so$\n")
    run, process = check_suppressed(ctx, text, ALL_SITES)
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    ctx.expect(len(lines) == 1 and lines[0].endswith(
        "exited with status 0: no leaks (3 allocations, 3 blocks suppressed)"),
        "expected one 'no leaks (3 allocations, 3 blocks suppressed)' line", run)
    path = ctx.path("test.supp")
    run = ctx.memtrack("run", f"--suppressions={path}", "--error-exitcode=7",
                       ctx.program("three_sites"), "4")
    ctx.expect_eq(run.exit, 4, "exit status with --error-exitcode=7, all leaks suppressed", run)


@cli_test
def test_suppress_several_files(ctx):
    """--suppressions may be given several times; every file applies."""
    first = ctx.write("first.supp", "leak:^leak_by_name$\n")
    second = ctx.write("second.supp", "leak:^modleak_alloc$\n")
    run, process = run_three_sites(ctx, f"--suppressions={first}", f"--suppressions={second}")
    ctx.expect_eq(leak_groups(process), [(22, 1, "alloc_in_site")], "leak groups", run)
    ctx.expect_eq(summary_totals(process), (22, 1, 44, 2), "summary totals", run)


@cli_test
def test_suppress_bad_file(ctx):
    """A line that is not blank, a comment or leak:PATTERN: 125 and FILE:LINE: in the message."""
    path = ctx.write("bad.supp", "leak:^leak_by_name$\n# fine so far\nfoo\n")
    run = ctx.memtrack("run", f"--suppressions={path}", ctx.program("three_sites"))
    ctx.expect_error(run, 125, f"{path}:3: 'foo' is not a suppression; expected leak:PATTERN")


@cli_test
def test_suppress_missing_file(ctx):
    path = ctx.path("missing.supp")
    run = ctx.memtrack("run", f"--suppressions={path}", ctx.program("three_sites"))
    ctx.expect_error(run, 125, f"cannot read suppressions file {path}: No such file or directory")


@cli_test
def test_suppress_file_checked_before_run(ctx):
    """A bad or missing suppressions file is a usage error like a bad option: memtrack fails
    before it starts the program (which may run for hours or have side effects), not after."""
    bad = ctx.write("bad.supp", "foo\n")
    for path in (bad, ctx.path("missing.supp")):
        run = ctx.memtrack("run", f"--suppressions={path}", ctx.program("echo_args"), "ran")
        ctx.expect_eq(run.exit, 125, f"exit status with --suppressions={path}", run)
        ctx.expect_eq(run.stdout, "", f"stdout with --suppressions={path} (the program ran)", run)


@cli_test
def test_gen_suppressions_round_trip(ctx):
    """The entries --gen-suppressions prints, as a suppressions file, suppress every leak."""
    run, first = run_three_sites(ctx, "--gen-suppressions=yes")
    entries = re.findall(r"^==\d+==    suppress with: (leak:\S+)$", run.stderr, re.MULTILINE)
    ctx.expect_eq(sorted(entries), ["leak:^alloc_in_site$", "leak:^leak_by_name$",
                                    "leak:^modleak_alloc$"], "printed entries", run)
    ctx.expect_eq([g["suppression"] for g in first["leaks"]], entries,
                  "JSON leaks[].suppression vs the text's entries", run)
    ctx.require(first["summary"]["leaked_blocks"] == 3, "expected 3 leaked blocks first", run)
    path = ctx.write("generated.supp", "".join(e + "\n" for e in entries))
    run, second = run_three_sites(ctx, f"--suppressions={path}")
    ctx.expect_eq(second["leaks"], [], "leaks after suppressing the generated entries", run)
    ctx.expect_eq(second["summary"]["suppressed_blocks"], first["summary"]["leaked_blocks"],
                  "suppressed_blocks vs the first run's leaked_blocks", run)
    ctx.expect_eq(second["summary"]["suppressed_bytes"], first["summary"]["leaked_bytes"],
                  "suppressed_bytes vs the first run's leaked_bytes", run)
    ctx.expect("suppress with" not in run.stderr and "no leaks" in run.stderr,
               "expected the one-line 'no leaks' summary", run)
