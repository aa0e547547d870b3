"""The runtime linked into static programs (docs/static-link.md): `memtrack link-flags` builds
a program that `memtrack run` runs as usual (stripped too), and the same checks as for the
preloaded runtime pass on the programs built that way (programs/static/cli_NAME, see
CMakeLists.txt): allocator misuse, snapshots, live reports, result files."""

import os
import shutil
import subprocess

import test_edges
import test_live
import test_misuse
import test_result_files
from cli_harness import cli_test


class StaticPrograms:
    """The test context, with ctx.program(NAME) the static build of cli_NAME."""

    def __init__(self, ctx):
        self._ctx = ctx

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def program(self, name):
        return os.path.join(self._ctx.paths.programs, "static", "cli_" + name)


@cli_test
def test_static_link_flags(ctx):
    """The documented command: gcc -static prog.c $(memtrack link-flags), then memtrack run."""
    flags = ctx.memtrack("link-flags")
    runtime_dir = os.path.join(ctx.paths.build_dir, "runtime")
    ctx.expect_run(flags, exit=0, stderr="", what="memtrack link-flags",
                   stdout=f"-Wl,--eh-frame-hdr -Wl,@{runtime_dir}/libmemtrack_static.wrap "
                   f"-Wl,--start-group {runtime_dir}/libmemtrack_static.a -lstdc++ "
                   "-Wl,--end-group\n")
    program = ctx.path("leak_one")
    source = os.path.join(ctx.paths.source_dir, "tests", "cli", "programs", "leak_one.c")
    build = subprocess.run(["gcc", "-O2", "-g", "-static", "-o", program, source,
                            *flags.stdout.split()], capture_output=True, text=True, check=False)
    ctx.require_eq((build.returncode, build.stderr), (0, ""), "gcc -static ... $(link-flags)")
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", "--error-exitcode=9", program)
    ctx.require_eq(run.exit, 9, "exit status (--error-exitcode=9: one leak)", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq([(g["bytes"], g["blocks"], g["stack"][0]["function"], g["stack"][0]["line"])
                   for g in process["leaks"]],
                  [(100, 1, "make_leak", ctx.marker_line("leak_one.c", "malloc(100)"))],
                  "the leak, with its line", run)
    alone = subprocess.run([program], capture_output=True, text=True, check=False,
                           env=ctx.env(), cwd=ctx.tmp)
    ctx.expect("definitely lost: 100 bytes in 1 block" in alone.stderr,
               f"run alone, it prints the runtime's report: {alone.stderr}")


CXX_WITHOUT_NEW = r"""
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

// No new or delete of its own: libstdc++'s objects (iostream's locale, stable_sort's nothrow
// buffer) are the only callers of the operator new hooks.
static char* volatile g_sink;
__attribute__((noinline)) static void keep(const char* text) {
  g_sink = strdup(text);
  g_sink = nullptr;  // lost
}

int main() {
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  std::stable_sort(values, values + 64);
  std::cout << "sorted " << values[0] << ".." << values[63] << "\n";
  keep("forgotten");
  return 0;
}
"""


@cli_test
def test_static_link_cxx_without_new(ctx):
    """g++ -static with the link flags, for a C++ program with no new/delete of its own (the
    hooks are then called only from libstdc++, linked after the runtime's archive)."""
    flags = ctx.memtrack("link-flags").stdout.split()
    source = ctx.path("iostream_only.cpp")
    with open(source, "w") as f:
        f.write(CXX_WITHOUT_NEW)
    program = ctx.path("iostream_only")
    build = subprocess.run(["g++", "-O1", "-g", "-static", "-o", program, source, *flags],
                           capture_output=True, text=True, check=False)
    ctx.require_eq((build.returncode, build.stderr), (0, ""), "g++ -static ... $(link-flags)")
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", program)
    ctx.require_eq((run.exit, run.stdout), (0, "sorted 0..63\n"), "the program's output", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq([(g["kind"], g["bytes"], g["blocks"], g["stack"][1]["function"])
                   for g in process["leaks"] if g["kind"] == "definite"],
                  [("definite", 10, 1, "keep(char const*)")], "the strdup leak, with its caller",
                  run)


@cli_test
def test_static_link_stripped(ctx):
    """strip keeps the section that tells memtrack the program carries the runtime (its frames
    then have no names: no symbols, no debug info)."""
    program = ctx.path("cli_leak_one")
    shutil.copy(StaticPrograms(ctx).program("leak_one"), program)
    subprocess.run(["strip", program], check=True)
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", "--error-exitcode=9", program)
    ctx.require_eq(run.exit, 9, "exit status (--error-exitcode=9: one leak)", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq([(g["kind"], g["bytes"], g["blocks"], g["stack"][0]["function"])
                   for g in process["leaks"]], [("definite", 100, 1, "")],
                  "the leak of the stripped program", run)


@cli_test
def test_static_link_misuse_double_free(ctx):
    test_misuse.test_misuse_double_free(StaticPrograms(ctx))


@cli_test
def test_static_link_misuse_double_free_other_thread(ctx):
    test_misuse.test_misuse_double_free_other_thread(StaticPrograms(ctx))


@cli_test
def test_static_link_misuse_double_free_reused(ctx):
    test_misuse.test_misuse_double_free_reused(StaticPrograms(ctx))


@cli_test
def test_static_link_misuse_new_delete_array(ctx):
    test_misuse.test_misuse_new_delete_array(StaticPrograms(ctx))


@cli_test
def test_static_link_misuse_aligned_new_delete(ctx):
    test_misuse.test_misuse_aligned_new_delete(StaticPrograms(ctx))


@cli_test
def test_static_link_snapshot(ctx):
    test_live.test_snapshot(StaticPrograms(ctx))


@cli_test
def test_static_link_live_reports(ctx):
    test_live.test_live_reports(StaticPrograms(ctx))


@cli_test
def test_static_link_keep_results(ctx):
    test_result_files.test_keep_results(StaticPrograms(ctx))


@cli_test
def test_static_link_daemon_unscheduled(ctx):
    """fork is wrapped too: the parent writes the daemon's start marker."""
    test_edges.test_edge_daemon_unscheduled_still_running(StaticPrograms(ctx))


@cli_test
def test_static_link_dynamic_refused(ctx):
    """The archive linked into a dynamic program: memtrack run refuses it (it would preload a
    second runtime); run alone, the runtime warns that shared libraries are not seen."""
    flags = ctx.memtrack("link-flags").stdout.split()
    program = ctx.path("leak_one_dynamic")
    source = os.path.join(ctx.paths.source_dir, "tests", "cli", "programs", "leak_one.c")
    build = subprocess.run(["gcc", "-O2", "-g", "-o", program, source, *flags],
                           capture_output=True, text=True, check=False)
    ctx.require_eq((build.returncode, build.stderr), (0, ""), "gcc ... $(link-flags)")
    run = ctx.memtrack("run", program)
    ctx.expect_error(run, 125, f"{program} carries memtrack's link-time runtime but is "
                     "dynamically linked: memtrack run would preload a second one; link it with "
                     "-static, or without $(memtrack link-flags) (--error-for-no-data=no runs it "
                     "anyway)")
    alone = subprocess.run([program], capture_output=True, text=True, check=False,
                           env=ctx.env(), cwd=ctx.tmp)
    first = alone.stderr.splitlines()[0] if alone.stderr else ""
    ctx.expect(first.endswith("]: warning: libmemtrack_static.a is linked into a dynamically "
                              "linked program: allocations made inside shared libraries are not "
                              "seen; link with -static, or run the program under "
                              "LD_PRELOAD=libmemtrack.so instead"),
               f"run alone: the warning first: {alone.stderr}")
    ctx.expect("definitely lost: 100 bytes in 1 block" in alone.stderr,
               f"run alone: the program's own leak is seen: {alone.stderr}")
