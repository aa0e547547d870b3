"""Where memtrack finds libmemtrack.so: ../lib/memtrack/ in an installed tree, ../runtime/
in the build tree, MEMTRACK_RUNTIME first; 125 with one clear line when it is missing. What
an install holds beside the binaries (header, man page, bash completion, pkg-config files),
stripped; and the Debian package CPack makes, unpacked into an empty root and run from there."""

import glob
import os
import shutil
import subprocess

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


LEAKY_C = """#include <stdlib.h>
#include <memtrack/memtrack.h>
static void* volatile g_sink;
int main(void) {
  g_sink = malloc(64);
  g_sink = 0;
  memtrack_do_leak_check();
  return 0;
}
"""


@cli_test
def test_installed_extras(ctx):
    """cmake --install --strip: the cooperation header, a man page groff reads without a
    warning, a bash completion that completes commands and options, pkg-config files whose
    static link flags build a program memtrack reports on, and binaries without debug info."""
    prefix = ctx.path("inst")
    install = ctx.run([ctx.paths.cmake, "--install", ctx.paths.build_dir, "--prefix", prefix,
                       "--strip"])
    ctx.require_eq(install.exit, 0, "cmake --install --strip: exit status", install)
    header = os.path.join(prefix, "include", "memtrack", "memtrack.h")
    man = os.path.join(prefix, "share", "man", "man1", "memtrack.1")
    completion = os.path.join(prefix, "share", "bash-completion", "completions", "memtrack")
    compat = os.path.join(prefix, "include", "memtrack", "compat", "valgrind", "valgrind.h")
    for path in (header, compat, man, completion,
                 os.path.join(prefix, "share", "doc", "memtrack", "README.md")):
        ctx.require(os.path.isfile(path), f"the install lacks {os.path.relpath(path, prefix)}",
                    install)
    groff = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", man], capture_output=True,
                           text=True, check=False)
    ctx.expect_eq((groff.returncode, groff.stderr), (0, ""), "groff -ww on the man page")
    with open(man, encoding="utf-8") as f:
        page = f.read()
    for text in ("memtrack run", "\\fB\\-\\-error\\-exitcode\\fR", "memtrack link\\-flags"):
        ctx.expect(text in page, f"the man page lacks {text!r}")
    script = (f"source {completion}; "
              "COMP_WORDS=(memtrack ru); COMP_CWORD=1; _memtrack; echo \"${COMPREPLY[*]}\"; "
              "COMP_WORDS=(memtrack run --error-e); COMP_CWORD=2; _memtrack; "
              "echo \"${COMPREPLY[*]}\"; "
              "COMP_WORDS=(memtrack run --gen-suppressions ''); COMP_CWORD=3; _memtrack; "
              "echo \"${COMPREPLY[*]}\"")
    bash = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    ctx.expect_eq(bash.stdout.splitlines(), ["run", "--error-exitcode", "no yes lsan"],
                  f"bash completion of commands, options and values ({bash.stderr})")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "memtrack-static"],
                           capture_output=True, text=True, env=env, check=False)
    ctx.require_eq(flags.returncode, 0, f"pkg-config memtrack-static ({flags.stderr})")
    source = ctx.path("leaky.c")
    with open(source, "w") as f:
        f.write(LEAKY_C)
    program = ctx.path("leaky")
    build = subprocess.run(["gcc", "-g", "-static", "-o", program, source,
                            *flags.stdout.split()], capture_output=True, text=True, check=False)
    ctx.require_eq((build.returncode, build.stderr), (0, ""),
                   "gcc -static ... $(pkg-config --cflags --libs memtrack-static)")
    memtrack = os.path.join(prefix, "bin", "memtrack")
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", program, memtrack=memtrack)
    ctx.require_eq(run.exit, 0, "memtrack run of the pkg-config build", run)
    leaks = [(g["kind"], g["bytes"]) for g in ctx.read_json(json_path, run)["processes"][0]["leaks"]]
    ctx.expect(("definite", 64) in leaks, f"the static program's leak: {leaks}", run)
    flags = subprocess.run(["pkg-config", "--cflags", "memtrack"], capture_output=True,
                           text=True, env=env, check=False)
    ctx.expect_eq(os.path.normpath(flags.stdout.strip().removeprefix("-I")),
                  os.path.join(prefix, "include"), "pkg-config --cflags memtrack")
    for binary in (memtrack, os.path.join(prefix, "lib", "memtrack", "memtrack-ui"),
                   os.path.join(prefix, "lib", "memtrack", "libmemtrack.so")):
        sections = subprocess.run(["readelf", "-S", "-W", binary], capture_output=True,
                                  text=True, check=False).stdout
        ctx.expect(".debug_info" not in sections and ".symtab" not in sections,
                   f"{os.path.relpath(binary, prefix)} is stripped")


@cli_test
def test_debian_package(ctx):
    """CPack's Debian package: dependencies found by dpkg-shlibdeps, and, unpacked into an
    empty root, a memtrack that finds its runtime there and reports the example's leaks."""
    out = ctx.mkdir("packages")
    cpack = ctx.run(["cpack", "-G", "DEB", "--config",
                     os.path.join(ctx.paths.build_dir, "CPackConfig.cmake"), "-B", out],
                    timeout=600)
    ctx.require_eq(cpack.exit, 0, "cpack -G DEB", cpack)
    debs = glob.glob(os.path.join(out, "memtrack_*.deb"))
    ctx.require_eq(len(debs), 1, f"one package in {out}", cpack)
    depends = subprocess.run(["dpkg-deb", "-f", debs[0], "Depends"], capture_output=True,
                             text=True, check=False).stdout
    for library in ("libc6", "libdw1", "libunwind8"):
        ctx.expect(library in depends, f"the package depends on {library}: {depends!r}")
    root = ctx.mkdir("root")
    subprocess.run(["dpkg-deb", "-x", debs[0], root], check=True)
    found = glob.glob(os.path.join(root, "**", "bin", "memtrack"), recursive=True)
    ctx.require_eq(len(found), 1, "bin/memtrack in the package")
    json_path = ctx.path("report.json")
    leaky = os.path.join(ctx.paths.build_dir, "examples", "leaky")
    run = ctx.memtrack("run", f"--json={json_path}", leaky, memtrack=found[0])
    ctx.require_eq(run.exit, 0, "the packaged memtrack run of examples/leaky", run)
    lost = sum(g["bytes"] for g in ctx.read_json(json_path, run)["processes"][0]["leaks"]
               if g["kind"] == "definite")
    ctx.expect_eq(lost, 4496, "the example's definitely lost bytes", run)


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
