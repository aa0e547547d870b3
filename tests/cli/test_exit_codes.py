"""Exit status of `memtrack run` (docs/cli.md, "Exit status"): the program's own, 128+N when
it was killed by signal N, --error-exitcode when unsuppressed leaks exist, 125 when memtrack
fails, 126 when PROG cannot be executed, 127 when it is not found; every failure is exactly
one "memtrack: error:" line on stderr and nothing on stdout."""

import os
import re

from cli_harness import cli_test, summary_totals, text_by_pid

LEAK_ONE_SUMMARY = "   definitely lost: 100 bytes in 1 block"


def project_version(ctx):
    with open(os.path.join(ctx.paths.source_dir, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(memtrack VERSION (\S+)", f.read()).group(1)


def main_text(ctx, run):
    """The text report's lines for the program memtrack started (the first process)."""
    processes = text_by_pid(run.stderr)
    ctx.require(processes, "no text report on stderr", run)
    return next(iter(processes.values()))


@cli_test
def test_exit_program_status(ctx):
    """Leaks alone do not change the exit status: the program's exit(3) is memtrack's."""
    run = ctx.memtrack("run", ctx.program("leak_one"), "3")
    ctx.expect_run(run, exit=3, stdout="")
    ctx.expect(LEAK_ONE_SUMMARY in main_text(ctx, run), "leak not reported", run)


@cli_test
def test_exit_error_exitcode(ctx):
    """--error-exitcode=7 replaces the program's status (3, and also 0) when leaks exist."""
    for status in ("3", "0"):
        run = ctx.memtrack("run", "--error-exitcode=7", ctx.program("leak_one"), status)
        ctx.expect_run(run, exit=7, stdout="", what=f"leak_one {status}")
        ctx.expect(LEAK_ONE_SUMMARY in main_text(ctx, run), "leak not reported", run)


@cli_test
def test_exit_no_leaks_error_exitcode(ctx):
    """Without leaks --error-exitcode does not apply: the program's own status."""
    for status in (3, 0):
        run = ctx.memtrack("run", "--error-exitcode=7", ctx.program("no_leak"), str(status))
        ctx.expect_run(run, exit=status, stdout="", what=f"no_leak {status}")
        lines = main_text(ctx, run)
        ctx.expect(len(lines) == 1 and lines[0].endswith(": no leaks (3 allocations, all freed)"),
                   "expected the one-line 'no leaks' summary", run)


@cli_test
def test_exit_suppressed_error_exitcode(ctx):
    """Suppressed leaks are not leaks for --error-exitcode."""
    suppressions = ctx.write("leak_one.supp", "leak:^make_leak$\n")
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", "--error-exitcode=7", f"--suppressions={suppressions}",
                       f"--json={json_path}", ctx.program("leak_one"), "3")
    ctx.expect_run(run, exit=3, stdout="")
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq(summary_totals(process), (0, 0, 100, 1),
                  "leaked bytes/blocks, suppressed bytes/blocks", run)


def check_killed(ctx, signal, name):
    json_path = ctx.path("report.json")
    program = ctx.program("die_by_signal")
    run = ctx.memtrack("run", f"--json={json_path}", program, str(signal))
    ctx.expect_run(run, exit=128 + signal, stdout="")
    lines = main_text(ctx, run)
    ctx.expect(re.match(rf"memtrack( \S+)?: {re.escape(program)} {signal} \(pid \d+, parent "
                        rf"{run.pid}\) was killed by signal {signal} \({name}\)", lines[0]),
               f"the report's first line should say 'was killed by signal {signal} ({name})'",
               run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq(process["exit"], {"signal": signal}, "JSON exit", run)
    ctx.expect_eq(process["ppid"], run.pid, "JSON ppid (memtrack's pid)", run)
    ctx.expect_eq(process["command"], [program, str(signal)], "JSON command", run)


@cli_test
def test_exit_killed_sigsegv(ctx):
    check_killed(ctx, 11, "SIGSEGV")


@cli_test
def test_exit_killed_sigkill(ctx):
    check_killed(ctx, 9, "SIGKILL")


@cli_test
def test_exit_killed_no_leak_data(ctx):
    """A process killed by SIGKILL leaves no result file. docs/cli.md: the report says so
    ("killed by signal 9 (SIGKILL)", no leak data); it must not claim "no leaks ... all
    freed" for a program that leaked 100 bytes before dying."""
    run = ctx.memtrack("run", ctx.program("die_by_signal"), "9")
    ctx.expect_run(run, exit=137, stdout="")
    text = "\n".join(main_text(ctx, run))
    ctx.expect("no leak data" in text, "the text report should say there is no leak data", run)
    ctx.expect("no leaks" not in text and "all freed" not in text,
               "the text report claims 'no leaks'/'all freed' without any leak data", run)


@cli_test
def test_exit_not_found(ctx):
    run = ctx.memtrack("run", "--", "/nonexistent")
    ctx.expect_error(run, 127, "cannot run /nonexistent: no such file")
    run = ctx.memtrack("run", ctx.path("missing", "prog"))
    ctx.expect_error(run, 127, f"cannot run {ctx.path('missing', 'prog')}: no such file")


@cli_test
def test_exit_not_found_in_path(ctx):
    """A name without '/' is looked up in PATH, like execvp."""
    env = ctx.env(PATH=ctx.mkdir("empty_bin"))
    run = ctx.memtrack("run", "cli_leak_one", "3", env=env)
    ctx.expect_error(run, 127, "cannot run cli_leak_one: not found in PATH")
    # The same name is found where PATH says.
    run = ctx.memtrack("run", "cli_leak_one", "3",
                       env=ctx.env(PATH=f"{ctx.path('empty_bin')}:{ctx.paths.programs}"))
    ctx.expect_run(run, exit=3, stdout="", what="cli_leak_one found in PATH")
    ctx.expect(LEAK_ONE_SUMMARY in main_text(ctx, run), "leak not reported", run)


@cli_test
def test_exit_not_executable(ctx):
    text_file = ctx.write("notes.txt", "not a program\n", mode=0o644)
    run = ctx.memtrack("run", text_file)
    ctx.expect_error(run, 126, f"cannot run {text_file}: not an executable file")
    # Found in PATH but not executable: also 126.
    run = ctx.memtrack("run", "notes.txt", env=ctx.env(PATH=ctx.tmp))
    ctx.expect_error(run, 126, "cannot run notes.txt: not an executable file",
                     what="found in PATH")


@cli_test
def test_exit_directory(ctx):
    directory = ctx.mkdir("a_directory")
    run = ctx.memtrack("run", "--", directory)
    ctx.expect_error(run, 126, f"cannot run {directory}: not an executable file")


BAD_OPTIONS = [
    (["run", "--error-exitcode=abc", "PROG"],
     "--error-exitcode expects a number from 0 to 255, not 'abc'"),
    (["run", "--error-exitcode=256", "PROG"],
     "--error-exitcode expects a number from 0 to 255, not '256'"),
    (["run", "--num-callers=0", "PROG"], "--num-callers expects a number from 1 to 256, not '0'"),
    (["run", "--trace-children=maybe", "PROG"], "--trace-children expects yes or no, not 'maybe'"),
    (["run", "--color=blue", "PROG"], "--color expects auto, always or never, not 'blue'"),
    (["run", "--gen-suppressions=valgrind", "PROG"],
     "--gen-suppressions expects no, yes or lsan, not 'valgrind'"),
    (["run", "--show-leak-kinds=definite,lost", "PROG"],
     "--show-leak-kinds expects all, none or a comma-separated list of definite, indirect, "
     "possible, reachable, not 'definite,lost'"),
    (["report", "--errors-for-leak-kinds=all,none", "x.mtr"],
     "--errors-for-leak-kinds expects all, none or a comma-separated list of definite, "
     "indirect, possible, reachable, not 'all,none'"),
    (["run", "--frobnicate", "PROG"],
     "unknown option '--frobnicate' (see memtrack run --help; put '--' before a program whose "
     "name starts with '-')"),
    (["run"], "no program given (usage: memtrack run [OPTIONS] [--] PROG [ARGS...])"),
    (["run", "--"], "no program given (usage: memtrack run [OPTIONS] [--] PROG [ARGS...])"),
    (["run", "--error-exitcode=7"],
     "no program given (usage: memtrack run [OPTIONS] [--] PROG [ARGS...])"),
    (["report"], "FILE is required (see memtrack --help)"),
]


@cli_test
def test_exit_bad_options(ctx):
    """Usage errors: 125, one line, and the program is not started (echo_args would print)."""
    for args, message in BAD_OPTIONS:
        if "PROG" in args:
            i = args.index("PROG")
            args = args[:i] + [ctx.program("echo_args"), "ran"] + args[i + 1:]
        run = ctx.memtrack(*args)
        ctx.expect_error(run, 125, message, what=" ".join(["memtrack", *args]))


@cli_test
def test_exit_bare_memtrack_prints_usage(ctx):
    """A bare `memtrack`: the usage and the commands on stderr (what --help prints), 125."""
    run = ctx.memtrack()
    help_run = ctx.memtrack("--help")
    ctx.expect((run.exit, run.stdout) == (125, "") and run.stderr == help_run.stdout,
               "bare memtrack: the --help text on stderr, exit 125", run)
    for command in ("run", "report", "top", "snapshot", "diff", "ui", "link-flags"):
        ctx.expect(f"\n  {command} " in run.stderr, f"the usage lacks {command}", run)


@cli_test
def test_exit_version_and_help(ctx):
    version = project_version(ctx)
    ctx.expect_run(ctx.memtrack("--version"), exit=0, stdout=f"memtrack {version}\n", stderr="",
                   what="--version")
    for command in ("run", "report"):
        run = ctx.memtrack(command, "--help")
        ctx.expect_run(run, exit=0, stderr="", what=f"{command} --help")
        ctx.expect(run.stdout.startswith("Run PROG" if command == "run" else "Render result"),
                   f"{command} --help: unexpected first line", run)
        for option in ("--log-file FILE", "--json FILE", "--suppressions FILE",
                       "--gen-suppressions no|yes|lsan", "--error-exitcode N",
                       "--color auto|always|never"):
            ctx.expect(f"  {option}" in run.stdout, f"{command} --help lacks {option}", run)
    run = ctx.memtrack("run", "--help")
    for line in ("Usage: memtrack run [OPTIONS] [--] PROG [ARGS...]",
                 "  --num-callers N             Stack frames recorded per allocation (1-256). "
                 "Default: 32."):
        ctx.expect_line(run.stdout, line, "run --help", run)


@cli_test
def test_program_arguments(ctx):
    """Everything after PROG belongs to PROG (docs/cli.md), also '--', '--help' and options
    that memtrack knows."""
    program = ctx.program("echo_args")
    for args in (["--help"], ["--version", "--json=x"], ["a", "--", "b"],
                 ["--", "--error-exitcode=7"]):
        run = ctx.memtrack("run", program, *args)
        ctx.expect_run(run, exit=0, stdout="".join(a + "\n" for a in args),
                       what=f"memtrack run PROG {' '.join(args)}")
        lines = text_by_pid(run.stderr)
        ctx.expect(len(lines) == 1, "expected the program's report", run)
    # With '--' before PROG, PROG's own '--' is an argument too.
    run = ctx.memtrack("run", "--", program, "a", "--", "b")
    ctx.expect_run(run, exit=0, stdout="a\n--\nb\n", what="memtrack run -- PROG a -- b")
