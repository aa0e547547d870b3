"""README.md's example outputs are what memtrack prints: the `make demo` report and the
suppressions example are run here (with README's own known.supp) and compared, pids and
source directories aside, so the page cannot drift from the program again."""

import os
import re
import subprocess

from cli_harness import TIMEOUT_SECONDS, Run, cli_test, exit_status

# make demo builds in build/demo; the test runs the same example from this build tree.
DEMO = "$ build/demo/cli/memtrack run -- build/demo/examples/leaky"
CRASH = "$ build/release/cli/memtrack run -- build/release/examples/crash"
SUPPRESSED = ("$ memtrack run --suppressions=known.supp --error-exitcode=23 -- "
              "build/release/examples/leaky")


def readme_blocks(ctx):
    """The fenced blocks of README.md, each as a list of lines."""
    with open(os.path.join(ctx.paths.source_dir, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return [block.splitlines() for block in re.findall(r"^```[a-z]*\n(.*?)^```$", text,
                                                       re.MULTILINE | re.DOTALL)]


def block_starting(ctx, first):
    for block in readme_blocks(ctx):
        if block and block[0] == first:
            return block
    ctx.fail(f"README.md has no block starting with {first!r}")
    return None


def normalize(lines):
    out = []
    for line in lines:
        line = re.sub(r"^==\d+==", "==PID==", line)
        line = re.sub(r"\(pid \d+, parent \d+\)", "(pid PID, parent PID)", line)
        line = re.sub(r"\(\S*/examples/(leaky|crash)\.c", r"(examples/\1.c", line)
        line = re.sub(r"in thread \d+", "in thread TID", line)
        line = re.sub(r"\bbuild/(release|demo)/", "build/TREE/", line)
        out.append(line)
    return out


def run_from_source_parent(ctx, *args):
    """memtrack ARGS, in the directory where build/release/ is the build tree (the README's
    relative paths), or None when the build tree is elsewhere."""
    build = os.path.realpath(ctx.paths.build_dir)
    suffix = os.path.join("build", "release")
    if not build.endswith(suffix):
        print("skipped: the build tree is not build/release")
        return None
    ctx.require(os.path.exists(os.path.join(build, "examples", "leaky")),
                "build/release/examples/leaky is not built")
    argv = [ctx.paths.memtrack, *args]
    process = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             env=ctx.env(), cwd=build[:-len(suffix)], timeout=TIMEOUT_SECONDS)
    return Run(argv, 0, exit_status(process.returncode), process.stdout, process.stderr)


@cli_test
def test_readme_demo(ctx):
    block = block_starting(ctx, DEMO)
    if block is None:
        return
    run = run_from_source_parent(ctx, "run", "--", "build/release/examples/leaky")
    if run is None:
        return
    ctx.expect_eq(run.exit, 0, "exit status", run)
    ctx.expect_eq("\n".join(normalize(run.stderr.splitlines())) + "\n",
                  "\n".join(normalize(block[1:])) + "\n", "README's make demo output", run)


@cli_test
def test_readme_suppressions(ctx):
    block = block_starting(ctx, SUPPRESSED)
    supp = block_starting(ctx, "# third-party code we do not own")
    if block is None or supp is None:
        return
    known = ctx.write("known.supp", "\n".join(supp) + "\n")
    run = run_from_source_parent(ctx, "run", f"--suppressions={known}", "--error-exitcode=23",
                                 "--", "build/release/examples/leaky")
    if run is None:
        return
    ctx.require(block[1] == "..." and block[-2] == "$ echo $?",
                "README's block: command, '...', output tail, '$ echo $?', status")
    tail = block[2:-2]
    ctx.expect_eq("\n".join(normalize(run.stderr.splitlines()[-len(tail):])) + "\n",
                  "\n".join(normalize(tail)) + "\n", "README's suppressed output", run)
    ctx.expect_eq(str(run.exit), block[-1], "README's exit status", run)


@cli_test
def test_readme_crash(ctx):
    block = block_starting(ctx, CRASH)
    if block is None:
        return
    run = run_from_source_parent(ctx, "run", "--", "build/release/examples/crash")
    if run is None:
        return
    ctx.expect_eq(run.exit, 128 + 11, "exit status (killed by SIGSEGV)", run)
    ctx.expect_eq("\n".join(normalize(run.stderr.splitlines())) + "\n",
                  "\n".join(normalize(block[1:])) + "\n", "README's crash report", run)
