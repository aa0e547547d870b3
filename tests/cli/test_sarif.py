"""SARIF 2.1.0 (--sarif=FILE, report --format=sarif) for code scanning: validated with
Microsoft's SARIF multitool (web/node_modules, scripts/install-web-deps.sh); one result per
leak group, misuse error and descriptor left open, whose totals equal the text and JSON
reports'; locations relative to SRCROOT (--source-root, the working directory by default);
fingerprints that stay when the source is edited, as memtrack diff matches groups."""

import json
import os
import re
import subprocess

from cli_harness import Failure, cli_test, STDOUT_CONFLICT, format_expected
from test_diff import PROGRAM_V1, PROGRAM_V2, build
from test_formats import text_leaked_bytes

# Multitool findings memtrack's logs may keep: none.
ACCEPTED_WARNINGS = set()
RULE_OF_KIND = {"definite": "definite-leak", "indirect": "indirect-leak",
                "possible": "possible-leak", "reachable": "reachable-block",
                "unclassified": "unclassified-leak"}


def multitool(ctx):
    path = os.path.join(ctx.paths.source_dir, "web", "node_modules", ".bin", "sarif-multitool")
    if not os.path.exists(path):
        raise Failure(f"{path} is missing: run scripts/install-web-deps.sh")
    return path


def validate(ctx, path, run):
    """Runs `sarif-multitool validate PATH`: no errors, no warnings but the accepted ones."""
    result = subprocess.run([multitool(ctx), "validate", path], capture_output=True, text=True,
                            timeout=300, check=False)
    output = result.stdout + result.stderr
    ctx.expect_eq(result.returncode, 0, f"sarif-multitool validate {path}: exit status\n{output}",
                  run)
    findings = re.findall(r": (error|warning) (\w+):", output)
    ctx.expect_eq(sorted({code for level, code in findings if level == "error"}), [],
                  f"multitool errors in {path}\n{output}", run)
    ctx.expect_eq(sorted({code for level, code in findings if level == "warning"}
                         - ACCEPTED_WARNINGS), [], f"multitool warnings in {path}\n{output}", run)
    ctx.expect("Analysis completed successfully" in output,
               f"multitool did not complete\n{output}", run)


def results_of(log):
    return log["runs"][0]["results"]


def fingerprint(result):
    return result["partialFingerprints"]["memtrackStack/v1"]


@cli_test
def test_sarif_valid_and_complete(ctx):
    """A program with leaks of several kinds in two processes, a thread, a shared library and
    descriptors left open, and one with a misuse error: the multitool accepts both logs; every
    leak group of the JSON report is one result with its bytes and blocks, per-kind totals
    equal the text LEAK SUMMARY, every descriptor and error is a result."""
    sarif_path, json_path = ctx.path("leaks.sarif"), ctx.path("leaks.json")
    run = ctx.memtrack("run", f"--sarif={sarif_path}", f"--json={json_path}",
                       "--show-leak-kinds=all", ctx.program("fork_exec"),
                       ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --sarif: exit status", run)
    validate(ctx, sarif_path, run)
    log = ctx.read_json(sarif_path, run)
    report = ctx.read_json(json_path, run)
    ctx.expect_eq(log["version"], "2.1.0", "SARIF version", run)
    results = results_of(log)
    for process in report["processes"]:
        pid = process["pid"]
        ours = sorted((r["properties"]["kind"], r["properties"]["bytes"],
                       r["properties"]["blocks"], r["ruleId"]) for r in results
                      if r["properties"]["pid"] == pid and "bytes" in r["properties"])
        expected = sorted((g["kind"], g["bytes"], g["blocks"], RULE_OF_KIND[g["kind"]])
                          for g in process["leaks"])
        ctx.expect_eq(ours, expected, f"pid {pid}: leak results vs JSON groups", run)
        fds = [r for r in results
               if r["properties"]["pid"] == pid and r["ruleId"] == "descriptor-left-open"]
        ctx.expect_eq(len(fds), process["summary"]["open_descriptors"],
                      f"pid {pid}: one result per descriptor left open", run)
    totals = {}
    for r in results:
        if r["properties"].get("kind") in ("definite", "indirect", "possible"):
            pid = r["properties"]["pid"]
            totals[pid] = totals.get(pid, 0) + r["properties"]["bytes"]
    ctx.expect_eq(totals, text_leaked_bytes(run.stderr),
                  "definite + indirect + possible bytes per pid: SARIF vs text", run)
    ctx.expect(len(results) > 0 and all(r["locations"][0].get("physicalLocation")
                                        for r in results),
               "every result has a physical location", run)
    misuse_path = ctx.path("misuse.sarif")
    misuse = ctx.memtrack("run", f"--sarif={misuse_path}", ctx.program("misuse"), "double_free")
    validate(ctx, misuse_path, misuse)
    errors = [r for r in results_of(ctx.read_json(misuse_path, misuse))
              if r["ruleId"] == "double-free"]
    ctx.require_eq(len(errors), 1, "misuse double_free: one double-free result", misuse)
    region = errors[0]["locations"][0]["physicalLocation"]["region"]
    ctx.expect_eq(region["startLine"], ctx.marker_line("misuse.c", "BAD-double_free"),
                  "double free: the bad call's line", misuse)
    ctx.expect_eq([s["message"]["text"] for s in errors[0]["stacks"]],
                  ["Bad call", "First freed at", "Allocated at"], "double free: stacks", misuse)


@cli_test
def test_sarif_fingerprints_follow_edits(ctx):
    """The program built twice (test_diff.py: the second version moves the leak down and adds
    another): the moved leak keeps its fingerprint while its line changes, the new one has a
    new fingerprint; files under the working directory are relative to SRCROOT; report
    --format=sarif of the kept result files prints what run wrote."""
    logs = {}
    for version, source in (("v1", PROGRAM_V1), ("v2", PROGRAM_V2)):
        program = build(ctx, version, source)
        path = ctx.path(f"{version}.sarif")
        results = ctx.mkdir(f"results-{version}")
        run = ctx.memtrack("run", f"--sarif={path}", f"--keep-results={results}", program)
        ctx.require_eq(run.exit, 0, f"{version}: exit status", run)
        validate(ctx, path, run)
        logs[version] = ctx.read_json(path, run)
        again = ctx.memtrack("report", "--format=sarif", results)
        ctx.expect_eq(again.stdout, open(path, encoding="utf-8").read(),
                      f"{version}: report --format=sarif vs run --sarif", again)
    root = logs["v1"]["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"]
    ctx.expect_eq(root, "file://" + os.path.realpath(ctx.tmp) + "/", "SRCROOT", None)
    by_function = {}
    for version, log in logs.items():
        for r in results_of(log):
            function = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
            physical = r["locations"][0]["physicalLocation"]
            by_function[(version, function)] = (fingerprint(r), physical["artifactLocation"],
                                                 physical["region"]["startLine"])
    keep1, keep2 = by_function[("v1", "keep")], by_function[("v2", "keep")]
    ctx.expect_eq(keep1[1], {"uri": "v1/leak.c", "uriBaseId": "SRCROOT"}, "v1 keep: location")
    ctx.expect_eq((keep1[2], keep2[2]), (4, 9), "keep: lines in v1 and v2")
    ctx.expect_eq(keep2[0], keep1[0], "keep: the same fingerprint after the edit")
    fresh = by_function.get(("v2", "fresh"))
    ctx.expect(fresh is not None and fresh[0] != keep1[0], f"fresh: a new fingerprint {fresh}")
    ctx.expect_eq(len(results_of(logs["v1"])), 1, "v1: one result")


@cli_test
def test_sarif_source_root(ctx):
    """Run from a build directory (here the test's own, outside the source tree), files are
    absolute file:// URIs; --source-root=CHECKOUT makes them relative to SRCROOT, which names
    the checkout. The tool names its documentation (informationUri, an absolute URI)."""
    source = os.path.join(ctx.paths.source_dir, "tests", "cli", "programs", "leak_one.c")
    plain = ctx.memtrack("run", "--sarif=-", ctx.program("leak_one"))
    log = json.loads(plain.stdout)
    location = results_of(log)[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    ctx.expect_eq(location, {"uri": "file://" + source}, "without --source-root: absolute",
                  plain)
    driver = log["runs"][0]["tool"]["driver"]
    ctx.expect(re.match(r"^(file|https?)://", driver.get("informationUri", "")),
               f"informationUri {driver.get('informationUri')!r} is an absolute URI", plain)
    rooted = ctx.memtrack("run", "--sarif=-", f"--source-root={ctx.paths.source_dir}",
                          ctx.program("leak_one"))
    log = json.loads(rooted.stdout)
    location = results_of(log)[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    ctx.expect_eq(location, {"uri": "tests/cli/programs/leak_one.c", "uriBaseId": "SRCROOT"},
                  "with --source-root: relative to SRCROOT", rooted)
    root = os.path.normpath(ctx.paths.source_dir)
    ctx.expect_eq(log["runs"][0].get("originalUriBaseIds"),
                  {"SRCROOT": {"uri": f"file://{root}/"}}, "SRCROOT names the checkout", rooted)
    path = ctx.path("rooted.sarif")
    with open(path, "w", encoding="utf-8") as f:
        f.write(rooted.stdout)
    validate(ctx, path, rooted)


@cli_test
def test_sarif_options(ctx):
    """--sarif=- writes to stdout; a file that cannot be written is refused before the program
    runs; report --format rejects an unknown format; leak kinds follow --show-leak-kinds."""
    run = ctx.memtrack("run", "--sarif=-", ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "--sarif=-: exit status", run)
    results = results_of(json.loads(run.stdout))
    ctx.expect_eq([(r["ruleId"], r["level"], r["message"]["text"]) for r in results],
                  [("definite-leak", "error",
                    "100 bytes in 1 block definitely lost, allocated in make_leak "
                    "(leak_one.c:6)")], "leak_one: the one result", run)
    ctx.expect_error(ctx.memtrack("run", "--sarif=/nonexistent/x.sarif", ctx.program("leak_one")),
                     125, "cannot write --sarif=/nonexistent/x.sarif: No such file or directory")
    ctx.expect_error(ctx.memtrack("run", "--sarif=-", "--junit=-", ctx.program("leak_one")), 125,
                     STDOUT_CONFLICT)
    ctx.expect_error(ctx.memtrack("report", "--format=yaml", ctx.tmp), 125,
                     format_expected("yaml"))
    none = ctx.memtrack("run", "--sarif=-", "--show-leak-kinds=none", ctx.program("leak_one"))
    ctx.expect_eq(results_of(json.loads(none.stdout)), [], "--show-leak-kinds=none: no results",
                  none)
