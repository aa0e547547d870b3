"""CTest's `ctest -T memcheck` with memtrack-valgrind as the memory checker
(docs/ci-recipes.md): CTest takes it for valgrind by its name, runs it with valgrind's
command line, and counts the defects its parser finds in memcheck's wording. The counts must
equal those CTest finds with valgrind itself on the same project."""

import os
import re
import shutil
import subprocess

from cli_harness import TIMEOUT_SECONDS, Run, cli_test, exit_status

PROJECT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctest_project")


def ctest_memcheck(ctx, name, checker_option):
    """Configures and builds the sample project with `checker_option` (a -D option that makes
    CTest find its memory checker), runs `ctest -T memcheck`; returns (run, {test: defects},
    {defect kind: count})."""
    build = ctx.path(name)
    ctest = os.path.join(os.path.dirname(ctx.paths.cmake), "ctest")
    if not os.path.exists(ctest):
        ctest = shutil.which("ctest") or "ctest"
    for argv in ([ctx.paths.cmake, "-S", PROJECT, "-B", build, checker_option],
                 [ctx.paths.cmake, "--build", build]):
        result = subprocess.run(argv, capture_output=True, text=True, cwd=ctx.tmp, env=ctx.env(),
                                timeout=TIMEOUT_SECONDS, check=False)
        if result.returncode != 0:
            return Run(argv, 0, result.returncode, result.stdout, result.stderr), None, None
    argv = [ctest, "-T", "memcheck"]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=build, env=ctx.env(),
                            timeout=TIMEOUT_SECONDS, check=False)
    run = Run(argv, 0, exit_status(result.returncode), result.stdout, result.stderr)
    per_test = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"MemCheck: #\d+: (\S+) \.+ +Defects: (\d+)", run.stdout)}
    results = run.stdout.split("Memory checking results:", 1)
    kinds = {}
    if len(results) == 2:
        for line in results[1].splitlines():
            m = re.fullmatch(r"(.+?) - (\d+)", line.strip())
            if m:
                kinds[m.group(1)] = int(m.group(2))
    return run, per_test, kinds


def recipe_lines(ctx):
    """The CMake lines of docs/ci-recipes.md's CTest recipe, without comments."""
    with open(os.path.join(ctx.paths.source_dir, "docs", "ci-recipes.md"), encoding="utf-8") as f:
        doc = f.read()
    block = re.search(r"```cmake\n(.*?)```", doc, re.DOTALL)
    if block is None:
        return []
    return [line.strip() for line in block.group(1).splitlines()
            if line.strip() and not line.strip().startswith("#")]


@cli_test
def test_ctest_memcheck(ctx):
    """ctest -T memcheck: two leaks and a still reachable block (CTest asks for
    --show-reachable=yes) in `leaks`, an invalid free in `double_free`, nothing in `no_leaks`
    (setenv's copies are glibc's own), as CTest counts them with valgrind."""
    recipe = recipe_lines(ctx)
    with open(os.path.join(PROJECT, "CMakeLists.txt"), encoding="utf-8") as f:
        project = [line.strip() for line in f]
    ctx.expect(recipe and all(line in project for line in recipe),
               f"the recipe's lines {recipe} are the sample project's", None)
    # The recipe's find_program finds memtrack-valgrind where memtrack is, as on a PATH.
    program_path = f"-DCMAKE_PROGRAM_PATH={os.path.dirname(ctx.paths.memtrack)}"
    run, per_test, kinds = ctest_memcheck(ctx, "with_memtrack", program_path)
    ctx.require(per_test is not None, "the sample project configures and builds", run)
    ctx.expect_eq(per_test, {"leaks": 3, "double_free": 1}, "defects per test", run)
    ctx.expect_eq(kinds, {"Memory Leak": 2, "Potential Memory Leak": 1,
                          "FIM": 1},
                  "CTest's memory checking results", run)
    ctx.expect("Do not understand memory checker" not in run.stdout + run.stderr,
               "CTest takes memtrack-valgrind for valgrind", run)
    # CTest itself under memtrack (its setenv calls leave glibc state, which is no leak).
    ctest = run.argv[0]
    gate = ctx.memtrack("run", "--error-exitcode=9", "--", ctest, "-R", "no_leaks",
                        "--test-dir", ctx.path("with_memtrack"))
    ctx.expect_eq(gate.exit, 0, "memtrack run --error-exitcode=9 -- ctest: exit status", gate)
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return
    oracle, oracle_tests, oracle_kinds = ctest_memcheck(ctx, "with_valgrind",
                                                        f"-DMEMORYCHECK_COMMAND={valgrind}")
    ctx.require(oracle_tests is not None, "the sample project builds for valgrind", oracle)
    ctx.expect_eq(per_test, oracle_tests, "defects per test, as with valgrind", run)
    ctx.expect_eq(kinds, oracle_kinds, "memory checking results, as with valgrind", run)
