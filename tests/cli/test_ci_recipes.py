"""docs/ci-recipes.md, checked as far as it runs offline: each YAML block parses (PyYAML, as
the CI systems read it) and names the files its memtrack commands write; the Jenkinsfile's sh
and junit steps agree; and every memtrack command of every block runs against a program
built here (its source under the working directory, as in a checkout), with ./build/tests
standing for it, and its outputs are read as the CI system would: SARIF through the SARIF
multitool, JUnit and valgrind XML through xml.etree, the baseline gate's exit statuses."""

import os
import re
import shlex
import shutil
import xml.etree.ElementTree as ET

from cli_harness import Failure, cli_test
from test_diff import PROGRAM_V1, PROGRAM_V2, build
from test_sarif import validate

try:
    import yaml
except ImportError:  # scripts/install-deps.sh installs python3-yaml
    yaml = None


def recipe_blocks(ctx, language):
    """The fenced blocks of docs/ci-recipes.md whose info string is `language`."""
    with open(os.path.join(ctx.paths.source_dir, "docs", "ci-recipes.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def load_yaml(ctx, marker):
    """The parsed YAML block that contains `marker`."""
    if yaml is None:
        raise Failure("PyYAML is missing (python3-yaml; scripts/install-deps.sh installs it)")
    for block in recipe_blocks(ctx, "yaml"):
        if marker in block:
            return yaml.safe_load(block)
    raise Failure(f"docs/ci-recipes.md has no YAML block containing {marker!r}")


def install_tests_program(ctx, version, source):
    """Builds the program (test_diff.py) and puts it at ./build/tests."""
    program = build(ctx, version, source)
    os.makedirs(ctx.path("build"), exist_ok=True)
    shutil.copy(program, ctx.path("build", "tests"))


def run_recipe_command(ctx, command):
    """Runs one command line of a recipe with the build's memtrack first on PATH."""
    path = os.path.dirname(ctx.paths.memtrack) + os.pathsep + os.environ.get("PATH", "")
    return ctx.run(["bash", "-c", command], env=ctx.env(PATH=path))


def memtrack_commands(lines):
    return [line.strip() for line in lines if line.strip().startswith("memtrack ")]


def option_value(command, option):
    for word in shlex.split(command):
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


@cli_test
def test_ci_recipes_github_sarif(ctx):
    workflow = load_yaml(ctx, "upload-sarif")
    ctx.expect_eq(workflow["permissions"].get("security-events"), "write",
                  "GitHub workflow: permissions.security-events")
    steps = workflow["jobs"]["leaks"]["steps"]
    upload = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    ctx.require_eq(len(upload), 1, "GitHub workflow: one upload-sarif step")
    ctx.expect_eq(upload[0].get("if"), "always()", "upload-sarif runs after a failing step")
    commands = memtrack_commands(s.get("run", "") for s in steps)
    ctx.require_eq(len(commands), 1, "GitHub workflow: one memtrack step")
    sarif = option_value(commands[0], "--sarif")
    ctx.expect_eq(upload[0]["with"]["sarif_file"], sarif, "the uploaded file is memtrack's")
    install_tests_program(ctx, "v1", PROGRAM_V1)
    run = run_recipe_command(ctx, commands[0])
    ctx.require_eq(run.exit, 0, "the SARIF step passes when the tests pass", run)
    validate(ctx, ctx.path(sarif), run)
    results = ctx.read_json(ctx.path(sarif), run)["runs"][0]["results"]
    ctx.expect_eq([r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results],
                  [{"uri": "v1/leak.c", "uriBaseId": "SRCROOT"}],
                  "one alert, at the checkout-relative source file", run)


@cli_test
def test_ci_recipes_gitlab_junit(ctx):
    job = load_yaml(ctx, "reports:")["memtrack"]
    artifacts = job["artifacts"]
    commands = memtrack_commands(job["script"])
    ctx.require_eq(len(commands), 1, "GitLab job: one memtrack command")
    junit = option_value(commands[0], "--junit")
    ctx.expect_eq(artifacts["reports"]["junit"], junit, "reports:junit is memtrack's file")
    ctx.expect_eq(artifacts.get("when"), "always", "artifacts kept when the job fails")
    install_tests_program(ctx, "v1", PROGRAM_V1)
    run = run_recipe_command(ctx, commands[0])
    ctx.expect_eq(run.exit, 1, "the job fails on the leak (--error-exitcode=1)", run)
    suites = ET.parse(ctx.path(junit)).getroot()
    ctx.expect_eq((suites.get("tests"), suites.get("failures")), ("1", "1"),
                  "JUnit: one failing test case", run)


@cli_test
def test_ci_recipes_jenkins(ctx):
    blocks = [b for b in recipe_blocks(ctx, "groovy") if "node {" in b]
    ctx.require_eq(len(blocks), 1, "one Jenkinsfile block")
    steps = re.findall(r"^\s*sh '([^']*)'$", blocks[0], re.MULTILINE)
    junit = re.findall(r"^\s*junit '([^']*)'$", blocks[0], re.MULTILINE)
    commands = memtrack_commands(steps)
    ctx.require_eq(len(commands), 1, "Jenkinsfile: one memtrack sh step")
    ctx.expect_eq(junit, [option_value(commands[0], "--junit")], "junit step reads memtrack's file")
    ctx.expect_eq(blocks[0].count("{"), blocks[0].count("}"), "Jenkinsfile: braces balance")
    install_tests_program(ctx, "v1", PROGRAM_V1)
    run = run_recipe_command(ctx, commands[0])
    ctx.require_eq(run.exit, 0, "the sh step passes when the tests pass", run)
    ctx.expect_eq(ET.parse(ctx.path(junit[0])).getroot().get("failures"), "1",
                  "JUnit: the leak fails its test case", run)
    pattern = option_value(commands[0], "--xml-file")
    files = [f for f in os.listdir(ctx.tmp)
             if re.fullmatch(re.escape(pattern).replace("%p", r"\d+"), f)]
    ctx.require_eq(len(files), 1, f"one valgrind XML file for {pattern}", run)
    root = ET.parse(ctx.path(files[0])).getroot()
    ctx.expect_eq([e.findtext("kind") for e in root.findall("error")], ["Leak_DefinitelyLost"],
                  "valgrind XML: the leak", run)


@cli_test
def test_ci_recipes_baseline_gate(ctx):
    """The shell block in order: with the accepted program every command passes; after a
    change that adds a leak site, the --fail-on commands exit 1. The GitHub gate's step does
    the same with its committed baseline."""
    blocks = [b for b in recipe_blocks(ctx, "sh") if "--baseline=" in b]
    ctx.require_eq(len(blocks), 1, "one baseline shell block")
    commands = memtrack_commands(blocks[0].splitlines())
    ctx.require_eq(len(commands), 4, "baseline block: four memtrack commands")
    install_tests_program(ctx, "v1", PROGRAM_V1)
    for command in commands:
        run = run_recipe_command(ctx, command)
        ctx.expect_eq(run.exit, 0, f"accepted program: {command}", run)
    install_tests_program(ctx, "v2", PROGRAM_V2)
    expected = [0, 1, 0, 1]  # the baseline again, the gate, a kept report, the diff
    for command, status in zip(commands[1:], expected[1:]):
        run = run_recipe_command(ctx, command)
        ctx.expect_eq(run.exit, status, f"after a new leak: {command}", run)
    gate = load_yaml(ctx, "--fail-on=new -- ")
    steps = gate["jobs"]["new-leaks"]["steps"]
    step = memtrack_commands(s.get("run", "") for s in steps)
    ctx.require_eq(len(step), 1, "gate workflow: one memtrack step")
    baseline = option_value(step[0], "--baseline")
    os.makedirs(os.path.dirname(ctx.path(baseline)), exist_ok=True)
    shutil.copy(ctx.path(option_value(commands[0], "--json")), ctx.path(baseline))
    run = run_recipe_command(ctx, step[0])
    ctx.expect_eq(run.exit, 1, "gate workflow: the new leak fails the step", run)
