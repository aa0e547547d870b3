"""Where memtrack finds libmemtrack.so: ../lib/memtrack/ in an installed tree, ../runtime/
in the build tree, MEMTRACK_RUNTIME first; 125 with one clear line when it is missing."""

import os
import shutil

from cli_harness import cli_test, leak_groups


def preload_seen(run):
    """The LD_PRELOAD value cli_show_env printed."""
    for line in run.stdout.splitlines():
        if line.startswith("LD_PRELOAD="):
            return line.removeprefix("LD_PRELOAD=")
    return None


@cli_test
def test_installed_tree(ctx):
    prefix = ctx.path("inst")
    install = ctx.run([ctx.paths.cmake, "--install", ctx.paths.build_dir, "--prefix", prefix])
    ctx.require_eq(install.exit, 0, "cmake --install: exit status", install)
    memtrack = os.path.join(prefix, "bin", "memtrack")
    runtime = os.path.join(prefix, "lib", "memtrack", "libmemtrack.so")
    ctx.require(os.access(memtrack, os.X_OK) and os.path.isfile(runtime),
                "the installed tree lacks bin/memtrack or lib/memtrack/libmemtrack.so", install)
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", "--error-exitcode=7", f"--json={json_path}", ctx.program("show_env"),
                       memtrack=memtrack)
    ctx.expect_eq(run.exit, 7, "installed memtrack run: exit status (leaks found)", run)
    ctx.expect_eq(preload_seen(run), runtime, "the program's LD_PRELOAD", run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.expect_eq([leak_groups(p) for p in processes], [[(100, 1, "make_leak")]],
                  "leak groups", run)
    ctx.expect("definitely lost: 100 bytes in 1 block" in run.stderr,
               "text report", run)
    # The link-time runtime is installed beside it (docs/static-link.md).
    libdir = os.path.join(prefix, "lib", "memtrack")
    flags = ctx.memtrack("link-flags", memtrack=memtrack)
    ctx.expect_run(flags, exit=0, stderr="", what="installed memtrack link-flags",
                   stdout=f"-Wl,--eh-frame-hdr -Wl,@{libdir}/libmemtrack_static.wrap "
                   f"-Wl,--start-group {libdir}/libmemtrack_static.a -lstdc++ "
                   "-Wl,--end-group\n")


@cli_test
def test_runtime_missing(ctx):
    # MEMTRACK_RUNTIME names a file that does not exist: the program is not started.
    run = ctx.memtrack("run", ctx.program("echo_args"), "ran",
                       env=ctx.env(MEMTRACK_RUNTIME="/nonexistent"))
    ctx.expect_error(run, 125, "MEMTRACK_RUNTIME=/nonexistent is not a readable file")
    # memtrack copied alone: nothing at ../runtime/ or ../lib/memtrack/.
    lonely = os.path.join(ctx.mkdir("lonely", "bin"), "memtrack")
    shutil.copy2(ctx.paths.memtrack, lonely)
    run = ctx.memtrack("run", ctx.program("echo_args"), "ran", memtrack=lonely)
    ctx.expect_error(run, 125, f"cannot find libmemtrack.so next to {lonely} (looked in "
                     "../runtime/ and ../lib/memtrack/; set MEMTRACK_RUNTIME to its path)")
    # ... and MEMTRACK_RUNTIME makes it work.
    runtime = os.path.normpath(os.path.join(os.path.dirname(ctx.paths.memtrack), "..", "runtime",
                                            "libmemtrack.so"))
    run = ctx.memtrack("run", ctx.program("show_env"), memtrack=lonely,
                       env=ctx.env(MEMTRACK_RUNTIME=runtime))
    ctx.expect_eq(run.exit, 0, "with MEMTRACK_RUNTIME: exit status", run)
    ctx.expect_eq(preload_seen(run), runtime, "with MEMTRACK_RUNTIME: the program's LD_PRELOAD",
                  run)
