"""dlopen/dlclose: cli_dlopen_leak dlopens libcli_dlleak.so, calls dlleak_alloc() (77 bytes,
on the line marked DLLEAK-LINE in dlleak.c), dlcloses it and exits. The leak's frames in the
unloaded library still symbolize (the result file keeps unloaded modules)."""

from cli_harness import cli_test, leak_groups, summary_totals, text_by_pid


def run_dlopen(ctx, *options):
    json_path = ctx.path("report.json")
    library = ctx.library("dlleak")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("dlopen_leak"),
                       library)
    ctx.require_eq(run.exit, 0, "exit status", run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    return run, processes[0]


@cli_test
def test_dlopen_leak(ctx):
    run, process = run_dlopen(ctx)
    ctx.require_eq(leak_groups(process), [(77, 1, "dlleak_alloc")], "leak groups", run)
    top = process["leaks"][0]["stack"][0]
    line = ctx.marker_line("dlleak.c", "DLLEAK-LINE")
    ctx.expect_eq(top["module"], ctx.library("dlleak"), "frame 0: module", run)
    ctx.expect_eq(top["file"], ctx.source("dlleak.c"), "frame 0: file", run)
    ctx.expect_eq(top["line"], line, "frame 0: line (the malloc call, marked DLLEAK-LINE)", run)
    ctx.expect_eq(top["inlined"], False, "frame 0: inlined", run)
    caller = process["leaks"][0]["stack"][1]
    ctx.expect_eq((caller["function"], caller["file"], caller["module"]),
                  ("main", ctx.source("dlopen_leak.c"), ctx.program("dlopen_leak")),
                  "frame 1: function, file, module", run)
    ctx.expect_eq(process["notes"], [], "notes", run)
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    ctx.expect_line("\n".join(lines),
                    f"   #0 dlleak_alloc ({ctx.source('dlleak.c')}:{line}:13) libcli_dlleak.so",
                    "text report", run)


@cli_test
def test_dlopen_suppress_module(ctx):
    """The unloaded library's basename still suppresses its leak."""
    path = ctx.write("dlleak.supp", "leak:^libcli_dlleak.so$\n")
    run, process = run_dlopen(ctx, f"--suppressions={path}")
    ctx.expect_eq(leak_groups(process), [], "leak groups", run)
    ctx.expect_eq(leak_groups(process, "suppressed"), [(77, 1, "dlleak_alloc")],
                  "suppressed groups", run)
    ctx.expect_eq(summary_totals(process)[2:], (77, 1), "suppressed bytes/blocks", run)


@cli_test
def test_dlopen_profile_killed(ctx):
    """A heap profile cut short by SIGKILL while the dlopen'ed library is loaded: the runtime's
    thread wrote the module map again once the library came, so its frame symbolizes (the map
    of the start has no such library, and there is no map at exit)."""
    path = ctx.path("dl.prof")
    run = ctx.memtrack("run", f"--profile={path}", ctx.program("dlopen_leak"),
                       ctx.library("dlleak"), "kill")
    ctx.require_eq(run.exit, 128 + 9, "memtrack run: the program's SIGKILL status", run)
    json_path = ctx.path("profile.json")
    report_run = ctx.memtrack("report", path, f"--json={json_path}")
    ctx.require_eq(report_run.exit, 0, "memtrack report PROFILE --json", report_run)
    sites = ctx.read_json(json_path, report_run)["sites"]
    line = ctx.marker_line("dlleak.c", "DLLEAK-LINE")
    frames = [(s["stack"][0]["function"], s["stack"][0]["line"], s["stack"][0]["module"],
               s["allocated_bytes"]) for s in sites if s["allocated_bytes"] == 77]
    ctx.expect_eq(frames, [("dlleak_alloc", line, ctx.library("dlleak"), 77)],
                  "the library's allocation site, symbolized", report_run)
