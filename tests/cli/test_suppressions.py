"""--suppressions (LeakSanitizer lines and valgrind-style blocks, report/suppressions.h) and
--gen-suppressions (report/gen_suppressions.h).

cli_three_sites leaks 11 bytes from leak_by_name() (three_sites.c), 22 bytes from
alloc_in_site() (alloc_site.c) and 33 bytes from modleak_alloc() in libcli_modleak.so, which
it links; each test suppresses a different one. cli_several_leaks has the leaks that
generated entries used to over-match (in main, strdup from main, vector<int> in two
functions, a thread, a library) and two descriptor sites: each generated entry, alone, must
hide exactly one of them."""

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
                        + ("" if totals[3] == 1 else "s"), "text report", run)
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


def blocks_in(text):
    """The suppression blocks of a text report: the unprefixed lines from "{" to "}"."""
    blocks, current = [], None
    for line in text.splitlines():
        if line == "{":
            current = [line]
        elif current is not None:
            current.append(line)
            if line == "}":
                blocks.append("\n".join(current))
                current = None
    return blocks


@cli_test
def test_gen_suppressions_round_trip(ctx):
    """The blocks --gen-suppressions=yes prints, as one suppressions file, suppress every leak;
    the JSON report carries the same blocks."""
    run, first = run_three_sites(ctx, "--gen-suppressions=yes")
    blocks = blocks_in(run.stderr)
    ctx.expect_eq(len(blocks), 3, "number of printed blocks", run)
    ctx.expect_eq([g["suppression_block"] for g in first["leaks"]], blocks,
                  "JSON leaks[].suppression_block vs the text's blocks", run)
    ctx.expect_eq(sorted(g["suppression"] for g in first["leaks"]),
                  ["leak:^alloc_in_site$", "leak:^leak_by_name$", "leak:^modleak_alloc$"],
                  "JSON leaks[].suppression", run)
    ctx.require(first["summary"]["leaked_blocks"] == 3, "expected 3 leaked blocks first", run)
    path = ctx.write("generated.supp", "".join(b + "\n" for b in blocks))
    run, second = run_three_sites(ctx, f"--suppressions={path}")
    ctx.expect_eq(second["leaks"], [], "leaks after suppressing the generated entries", run)
    ctx.expect_eq(second["summary"]["suppressed_blocks"], first["summary"]["leaked_blocks"],
                  "suppressed_blocks vs the first run's leaked_blocks", run)
    ctx.expect_eq(second["summary"]["suppressed_bytes"], first["summary"]["leaked_bytes"],
                  "suppressed_bytes vs the first run's leaked_bytes", run)
    ctx.expect("{" not in run.stderr.splitlines() and "no leaks" in run.stderr,
               "expected the one-line 'no leaks' summary", run)


@cli_test
def test_suppress_not_below_main(ctx):
    """Patterns that match only the C start-up frames below main (never printed) suppress
    nothing: every leak of cli_three_sites is made by program code."""
    for pattern in ("leak:libc.so.6", "leak:start", "leak:__libc_start_main", "leak:^_start$",
                    "leak:__libc_start_call_main"):
        check_suppressed(ctx, pattern + "\n", [])


@cli_test
def test_suppress_valgrind_blocks(ctx):
    """A valgrind-style file: '...' and globs, an allocator frame as valgrind writes it first,
    blocks of kinds memtrack does not report skipped, and match-leak-kinds."""
    text = ("# valgrind format: the first meaningful line is '{'\n"
            "{\n   by_name\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
            "   fun:malloc\n   fun:leak_by_*\n   fun:main\n}\n"
            "{\n   uninitialised\n   Memcheck:Cond\n   fun:alloc_in_site\n}\n"
            "{\n   anywhere_in_the_library\n   Memcheck:Leak\n   ...\n"
            "   obj:*/libcli_modleak.so\n   ...\n}\n"
            "{\n   reachable_only\n   Memcheck:Leak\n   match-leak-kinds: reachable\n"
            "   src:alloc_site.c\n}\n")
    check_suppressed(ctx, text, [(33, 1, "modleak_alloc"), (11, 1, "leak_by_name")])


@cli_test
def test_suppress_valgrind_bad_block(ctx):
    path = ctx.write("bad.supp", "{\n  name\n  Memcheck:Leak\n  fun:a\n  func:b\n}\n")
    run = ctx.memtrack("run", f"--suppressions={path}", ctx.program("three_sites"))
    ctx.expect_error(run, 125, f"{path}:5: 'func:b' is not a frame line; expected fun:, obj:, "
                     "src:, ... or '}'")


# --- every generated entry, alone, hides exactly its own group --------------------------------

def run_several(ctx, *options):
    """memtrack run OPTIONS cli_several_leaks with a JSON report: (run, JSON process)."""
    json_path = ctx.path("several.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    return run, processes[0]


def group_key(group):
    """What tells a group apart from run to run (addresses change): kind, size and stack."""
    stack = tuple((f["function"], f["file"], f["line"]) for f in group["stack"])
    return (group["kind"], group["bytes"], group["blocks"], stack)


def site_key(resource):
    return tuple((f["function"], f["file"], f["line"]) for f in resource["stack"])


def sites(process):
    return sorted({site_key(r) for r in process["resources"]})


def check_hides_exactly(ctx, entry, first, hidden_group=None, hidden_site=None):
    """Runs again with `entry` alone as the suppressions file: exactly the one group (or
    descriptor site) is gone, every other group and site remains with its bytes and blocks."""
    path = ctx.write("one.supp", entry + "\n")
    run, second = run_several(ctx, f"--suppressions={path}")
    expected = [group_key(g) for g in first["leaks"] if g is not hidden_group]
    ctx.expect_eq(sorted(group_key(g) for g in second["leaks"]), sorted(expected),
                  f"groups left by\n{entry}\n", run)
    ctx.expect_eq([group_key(g) for g in second["suppressed"]],
                  [group_key(hidden_group)] if hidden_group else [],
                  f"groups suppressed by\n{entry}\n", run)
    hidden_bytes = hidden_group["bytes"] if hidden_group else 0
    ctx.expect_eq((second["summary"]["leaked_bytes"], second["summary"]["suppressed_bytes"]),
                  (first["summary"]["leaked_bytes"] - hidden_bytes, hidden_bytes),
                  f"leaked and suppressed bytes with\n{entry}\n", run)
    expected_sites = [s for s in sites(first) if s != hidden_site]
    ctx.expect_eq(sites(second), expected_sites, f"descriptor sites left by\n{entry}\n", run)
    ctx.expect_eq(second["summary"]["suppressed_descriptors"], 1 if hidden_site else 0,
                  f"suppressed_descriptors with\n{entry}\n", run)


def several_first_run(ctx, mode):
    run, first = run_several(ctx, f"--gen-suppressions={mode}")
    functions = sorted({g["stack"][0]["function"] for g in first["leaks"] if g["stack"]})
    ctx.require_eq(len(first["leaks"]), 8, "number of leak groups (in main, strdup, two "
                   "vector objects and buffers, thread, library)", run)
    ctx.require_eq(len(sites(first)), 2, "number of descriptor sites", run)
    ctx.expect("main" in functions and "strdup" in functions
               and "worker(void*)" in functions,
               f"groups allocated in main, strdup and worker: {functions}", run)
    return run, first


@cli_test
def test_gen_suppressions_each_block_hides_one_group(ctx):
    """cli_several_leaks: each block --gen-suppressions=yes prints, alone, hides exactly the
    group or descriptor site it was printed under."""
    run, first = several_first_run(ctx, "yes")
    blocks = blocks_in(run.stderr)
    ctx.expect_eq(len(blocks), 10, "blocks printed (8 groups, 2 descriptor sites)", run)
    for group in first["leaks"]:
        ctx.expect(group["suppression_block"] in blocks, "JSON block not in the text", run)
        check_hides_exactly(ctx, group["suppression_block"], first, hidden_group=group)
    seen = set()
    for resource in first["resources"]:
        if site_key(resource) in seen:
            continue
        seen.add(site_key(resource))
        check_hides_exactly(ctx, resource["suppression_block"], first,
                            hidden_site=site_key(resource))


@cli_test
def test_gen_suppressions_lsan_lines_hide_one_group(ctx):
    """--gen-suppressions=lsan: a leak: line only where one name singles the group out (never
    main, strdup or std::), each hiding exactly its group; the others say there is none."""
    run, first = several_first_run(ctx, "lsan")
    lines = re.findall(r"^==\d+==    suppress with: (leak:\S+)$", run.stderr, re.MULTILINE)
    none = re.findall(r"^==\d+==    no leak: pattern singles this out", run.stderr, re.MULTILINE)
    by_function = {g["stack"][0]["function"]:
                   g["suppression"] for g in first["leaks"]}
    ctx.expect_eq(by_function.get("main"), "", "leak: line for the leak in main", run)
    ctx.expect_eq(by_function.get("strdup"), "", "leak: line for strdup's leak", run)
    ctx.expect_eq(by_function.get("worker(void*)"), "leak:^worker(void*)$",
                  "the thread's leak: line", run)
    ctx.expect_eq(by_function.get("modleak_alloc"), "leak:^modleak_alloc$",
                  "the library's leak: line", run)
    for line in lines:
        ctx.expect("main" not in line and "std::" not in line and "strdup" not in line,
                   f"leak: line names main, std:: or strdup: {line}", run)
    entries = [g["suppression"] for g in first["leaks"]] + sorted(
        {r["suppression"] for r in first["resources"]})
    ctx.expect_eq(sorted(e for e in entries if e), sorted(lines), "text vs JSON leak: lines", run)
    ctx.expect_eq(len(none), entries.count(""), "'no leak: pattern' lines", run)
    for group in first["leaks"]:
        if group["suppression"]:
            check_hides_exactly(ctx, group["suppression"], first, hidden_group=group)
    for resource in first["resources"]:
        check_hides_exactly(ctx, resource["suppression"], first, hidden_site=site_key(resource))
