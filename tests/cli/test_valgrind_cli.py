"""valgrind's command line under `memtrack run` (docs/switching.md): memcheck's options with
their meaning, valgrind options that mean nothing here accepted with one warning line each,
and options neither knows still an error."""

import os

from cli_harness import cli_test, text_by_pid

CI_OPTIONS = ("--leak-check=full", "--show-leak-kinds=all", "--errors-for-leak-kinds=definite",
              "--error-exitcode=1", "--num-callers=20", "--track-origins=yes")
TRACK_ORIGINS_WARNING = ("memtrack: warning: --track-origins (valgrind) has no meaning here: "
                         "memtrack does not track uninitialised values; ignored\n")
LEAK_SUMMARY = ["LEAK SUMMARY:", "   definitely lost: 100 bytes in 1 block",
                "   indirectly lost: 0 bytes in 0 blocks", "     possibly lost: 0 bytes in 0 blocks",
                "   still reachable: 0 bytes in 0 blocks", "        suppressed: 0 bytes in 0 blocks"]


def leak_one_report(ctx, run, groups=True):
    """The exact text report of cli_leak_one (pid taken from the run), with or without its
    one leak group, as "==PID== ..." lines."""
    program = ctx.program("leak_one")
    processes = text_by_pid(run.stderr if run.stdout == "" else run.stdout)
    ctx.require(len(processes) == 1, "one process in the text report", run)
    pid = next(iter(processes))
    source = os.path.join(ctx.paths.source_dir, "tests", "cli", "programs", "leak_one.c")
    lines = [f"memtrack {ctx.version}: {program} (pid {pid}, parent {run.pid}) exited with "
             "status 0",
             "HEAP SUMMARY: 1 allocation, 0 frees, 100 bytes allocated, 100 bytes peak", ""]
    if groups:
        lines += ["100 bytes in 1 block is definitely lost",
                  f"   #0 make_leak ({source}:6:13) cli_leak_one",
                  f"   #1 main ({source}:12:13) cli_leak_one", ""]
    lines += LEAK_SUMMARY
    return "".join(f"=={pid}==" + (f" {line}" if line else "") + "\n" for line in lines)


def version(ctx):
    with open(os.path.join(ctx.paths.source_dir, "CMakeLists.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("project(memtrack VERSION "):
                return line.split()[2]
    raise AssertionError("no project version in CMakeLists.txt")


@cli_test
def test_valgrind_ci_line(ctx):
    """A memcheck line from a CI script, without '--': the leak is reported exactly, after one
    warning for --track-origins, and --error-exitcode applies; a suppression that matches
    leaves nothing to report, and -q then prints nothing but the warning."""
    ctx.version = version(ctx)
    other = ctx.write("other.supp", "{\n   other\n   Memcheck:Leak\n   fun:other_function\n}\n")
    run = ctx.memtrack("run", *CI_OPTIONS, f"--suppressions={other}", "-q",
                       ctx.program("leak_one"))
    ctx.expect_run(run, exit=1, stdout="",
                   stderr=TRACK_ORIGINS_WARNING + leak_one_report(ctx, run))
    matching = ctx.write("leak.supp", "{\n   leak\n   Memcheck:Leak\n   fun:make_leak\n}\n")
    run = ctx.memtrack("run", *CI_OPTIONS, f"--suppressions={matching}", "-q",
                       ctx.program("leak_one"))
    ctx.expect_run(run, exit=0, stdout="", stderr=TRACK_ORIGINS_WARNING, what="suppressed")


@cli_test
def test_valgrind_quiet(ctx):
    """-q/--quiet: a process with nothing to report is left out (valgrind -q prints nothing
    then); one with leaks is reported in full."""
    ctx.version = version(ctx)
    for quiet in ("-q", "--quiet"):
        run = ctx.memtrack("run", quiet, ctx.program("no_leak"))
        ctx.expect_run(run, exit=0, stdout="", stderr="", what=f"{quiet} no_leak")
        run = ctx.memtrack("run", quiet, ctx.program("leak_one"))
        ctx.expect_run(run, exit=0, stdout="", stderr=leak_one_report(ctx, run),
                       what=f"{quiet} leak_one")
    run = ctx.memtrack("run", ctx.program("no_leak"))
    ctx.expect(len(text_by_pid(run.stderr)) == 1, "without -q: the one-line 'no leaks'", run)


@cli_test
def test_valgrind_leak_check(ctx):
    """--leak-check=summary and no: the LEAK SUMMARY without groups, and leaks do not make
    --error-exitcode apply (as in valgrind), even with --show-leak-kinds given after it;
    full and yes: the whole report. Misuse errors still count with --leak-check=no."""
    ctx.version = version(ctx)
    for value in ("summary", "no"):
        run = ctx.memtrack("run", "--error-exitcode=9", f"--leak-check={value}",
                           "--show-leak-kinds=all", "--errors-for-leak-kinds=all",
                           ctx.program("leak_one"))
        ctx.expect_run(run, exit=0, stdout="", stderr=leak_one_report(ctx, run, groups=False),
                       what=f"--leak-check={value}")
    for value in ("full", "yes"):
        run = ctx.memtrack("run", "--error-exitcode=9", f"--leak-check={value}",
                           ctx.program("leak_one"))
        ctx.expect_run(run, exit=9, stdout="", stderr=leak_one_report(ctx, run),
                       what=f"--leak-check={value}")
    run = ctx.memtrack("run", "--error-exitcode=9", "--leak-check=no", ctx.program("misuse"),
                       "double_free")
    ctx.expect_run(run, exit=9, what="--leak-check=no, a double free")
    ctx.expect("double free" in run.stderr.lower(), "the double free is reported", run)
    run = ctx.memtrack("run", "--leak-check=some", ctx.program("leak_one"))
    ctx.expect_error(run, 125, "--leak-check expects no, summary, full or yes, not 'some'")


@cli_test
def test_valgrind_show_reachable(ctx):
    """--show-reachable=yes lists still reachable groups (--show-leak-kinds=all); no, the
    default kinds. The FILE that fopen allocated is still reachable without fd tracking."""
    for value, listed in (("yes", True), ("no", False)):
        json_path = ctx.path(f"{value}.json")
        run = ctx.memtrack("run", "--track-fds=no", f"--show-reachable={value}",
                           f"--json={json_path}", ctx.program("fds"), "leak")
        ctx.expect_run(run, exit=0, stdout="", what=f"--show-reachable={value}")
        kinds = [g["kind"] for g in ctx.read_json(json_path, run)["processes"][0]["leaks"]]
        ctx.expect_eq(kinds, ["reachable"] if listed else [], f"--show-reachable={value}: kinds",
                      run)
        ctx.expect_eq("is still reachable" in run.stderr, listed,
                      f"--show-reachable={value}: text group", run)


@cli_test
def test_valgrind_log_fd(ctx):
    """--log-fd=N: the text report goes to memtrack's descriptor N (1 stdout, 2 stderr, or
    one the shell opened); a descriptor that is not open is an error."""
    ctx.version = version(ctx)
    run = ctx.memtrack("run", "--log-fd=1", ctx.program("leak_one"))
    ctx.expect_run(run, exit=0, stderr="", stdout=leak_one_report(ctx, run), what="--log-fd=1")
    run = ctx.memtrack("run", "--log-fd=2", ctx.program("leak_one"))
    ctx.expect_run(run, exit=0, stdout="", stderr=leak_one_report(ctx, run), what="--log-fd=2")
    log = ctx.path("fd3.log")
    run = ctx.run(["sh", "-c", 'exec "$0" run --log-fd=3 "$1" 3>"$2"', ctx.paths.memtrack,
                   ctx.program("leak_one"), log])
    ctx.expect_run(run, exit=0, stdout="", stderr="", what="--log-fd=3")
    with open(log, encoding="utf-8") as f:
        ctx.expect("definitely lost: 100 bytes in 1 block" in f.read(), "report in fd 3", run)
    run = ctx.memtrack("run", "--log-fd=7", ctx.program("leak_one"))
    ctx.expect_error(run, 125, "--log-fd=7: descriptor 7 is not open")


@cli_test
def test_valgrind_unsupported(ctx):
    """What memtrack cannot do fails with one line: another valgrind tool (and --xml=yes
    without a destination, as in valgrind). Their 'no' values and --tool=memcheck are accepted
    silently, and -v changes nothing."""
    run = ctx.memtrack("run", "--xml=yes", ctx.program("no_leak"))
    ctx.expect_error(run, 125, "--xml=yes needs --xml-file=FILE or --xml-fd=N (where to write "
                     "the XML)")
    run = ctx.memtrack("run", "--tool=helgrind", ctx.program("no_leak"))
    ctx.expect_error(run, 125, "--tool=helgrind (valgrind): memtrack does the work of valgrind's "
                     "memcheck only")
    plain = ctx.memtrack("run", "-q", ctx.program("leak_one"))
    for options in (["--xml=no", "--child-silent-after-fork=no", "--tool=memcheck"], ["-v"],
                    ["--verbose"]):
        run = ctx.memtrack("run", *options, "-q", ctx.program("leak_one"))
        ctx.expect_run(run, exit=0, stdout="", what=" ".join(options))
        ctx.expect_eq(len(run.stderr.splitlines()), len(plain.stderr.splitlines()),
                      f"{' '.join(options)}: report lines", run)
        ctx.expect("warning" not in run.stderr, f"{' '.join(options)}: no warning", run)


@cli_test
def test_valgrind_ignored_options(ctx):
    """valgrind options with no meaning here: exactly one warning line each, then the run
    goes on; after PROG they are PROG's arguments. An option neither knows stays an error."""
    ignored = {
        "--track-origins=yes": "memtrack does not track uninitialised values",
        "--leak-resolution=high": "memtrack groups leaks by their whole stack",
        "--malloc-fill=0xAB": "memtrack does not change the contents of blocks",
        "--free-fill=0xCD": "memtrack does not change the contents of blocks",
        "--vgdb=no": "memtrack has no gdb server",
        "--vgdb-error=0": "memtrack has no gdb server",
        "--smc-check=all": "memtrack runs the program natively, not on a synthetic CPU",
        "--undef-value-errors=no": "memtrack does not track uninitialised values",
        "--max-stackframe=4000000": "memtrack does not check memory accesses",
        "--partial-loads-ok=yes": "memtrack does not check memory accesses",
        "--show-mismatched-frees=yes": "memtrack always reports mismatched frees",
        "--demangle=no": "memtrack reads debug info after the program ends (inlined frames "
                         "and demangled names always)",
    }
    for option, why in ignored.items():
        name = option.split("=")[0]
        run = ctx.memtrack("run", option, "-q", ctx.program("no_leak"))
        ctx.expect_run(run, exit=0, stdout="", what=option,
                       stderr=f"memtrack: warning: {name} (valgrind) has no meaning here: "
                              f"{why}; ignored\n")
    run = ctx.memtrack("run", *ignored, "-q", ctx.program("no_leak"))
    ctx.expect_run(run, exit=0, stdout="", what="all at once")
    ctx.expect_eq(len(run.stderr.splitlines()), len(ignored), "warning lines", run)
    run = ctx.memtrack("run", "--log-file", ctx.path("log"), "--track-origins=yes",
                       ctx.program("echo_args"), "--track-origins=yes", "--leak-check=full")
    ctx.expect_run(run, exit=0, stdout="--track-origins=yes\n--leak-check=full\n",
                   stderr=TRACK_ORIGINS_WARNING, what="after PROG")
    run = ctx.memtrack("run", "--no-such-option=1", ctx.program("no_leak"))
    ctx.expect_error(run, 125, "unknown option '--no-such-option=1' (see memtrack run --help; put "
                     "'--' before a program whose name starts with '-')")
