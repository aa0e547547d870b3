"""The profile formats, read by their consumers: --pprof (gzipped profile.proto) by
`go tool pprof` itself (Debian's golang-go; offline, with its caches in the test's directory)
and --speedscope validated against the file-format schema of the speedscope npm package
(web/node_modules, scripts/install-web-deps.sh) with Python's jsonschema. Then the property
every format keeps: for one run, JSON, collapsed stacks, JUnit, pprof and speedscope list
every leak group and total, per process and kind, what the text report's LEAK SUMMARY says."""

import json
import os
import pty
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

from cli_harness import (STDOUT_CONFLICT, TIMEOUT_SECONDS, Failure, cli_test, format_expected,
                         junit_pid, program_names)

SPEEDSCOPE_SCHEMA = os.path.join("web", "node_modules", "speedscope", "dist", "release",
                                 "file-format-schema.json")
PHRASES = {"definite": "definitely lost", "indirect": "indirectly lost",
           "possible": "possibly lost", "reachable": "still reachable",
           "unclassified": "unfreed at exit"}


# --- the consumers ------------------------------------------------------------------------------

def go_pprof(ctx, *args, run=None):
    """`go tool pprof ARGS...`, offline, with GOPATH, GOCACHE and pprof's own directories in
    the test's directory. Returns its stdout; fails the test on a non-zero exit."""
    go = shutil.which("go")
    if go is None:
        raise Failure("go is not installed (Debian's golang-go, scripts/install-deps.sh): "
                      "go tool pprof reads the pprof profiles in this test")
    env = ctx.env(GOPATH=ctx.mkdir("go", "path"), GOCACHE=ctx.mkdir("go", "cache"), GOFLAGS="",
                  GOPROXY="off", GOTOOLCHAIN="local", PPROF_TMPDIR=ctx.mkdir("go", "pprof"),
                  HOME=ctx.mkdir("go", "home"))
    result = ctx.run([go, "tool", "pprof", *args], env=env)
    ctx.require_eq(result.exit, 0, f"go tool pprof {' '.join(args)}: exit status", result)
    return result.stdout


def top_rows(text):
    """{name: (flat, cum)} of `pprof -top` rows; name includes " (inline)" and, with -lines,
    " FILE:LINE"."""
    rows = {}
    for m in re.finditer(r"^\s*(\d\S*)\s+[\d.]+%\s+[\d.]+%\s+(\d\S*)\s+[\d.]+%\s+(.+?)\s*$",
                         text, re.M):
        rows[m.group(3)] = (m.group(1), m.group(2))
    return rows


def raw_samples(text):
    """[(values, {label: value})] of `pprof -raw`'s Samples section."""
    samples = []
    section = text.split("Samples:", 1)[1].split("Locations", 1)[0]
    for line in section.splitlines()[2:]:
        m = re.fullmatch(r"\s+([\d ]+):[\d ]*", line)
        if m:
            samples.append(([int(v) for v in m.group(1).split()], {}))
            continue
        m = re.fullmatch(r"\s+(\w+):\[(.*)\]", line)
        if m and samples:
            samples[-1][1][m.group(1)] = m.group(2)
    return samples


def trace_samples(text):
    """[(kind label, value, (function, ...))] of `pprof -traces`, leaf first."""
    samples = []
    for block in text.split("-----------+")[1:]:
        kind, value, names = None, None, []
        for line in block.splitlines()[1:]:
            label = re.fullmatch(r"\s*(\w+):\s+(.*)", line)
            if label and value is None:
                kind = label.group(2) if label.group(1) == "kind" else kind
            elif value is None and re.fullmatch(r"\s*\S+\s{3}\S.*", line):
                value, name = line.split(None, 1)
                names.append(name.strip())
            elif line.strip():
                names.append(line.strip())
        if value is not None:
            samples.append((kind, value, tuple(names)))
    return samples


def python_with_jsonschema():
    """An interpreter that can import jsonschema: this one, or Debian's (python3-jsonschema)."""
    for python in (shutil.which("python3"), "/usr/bin/python3"):
        if python and subprocess.run([python, "-c", "import jsonschema"],
                                     capture_output=True).returncode == 0:
            return python
    raise Failure("no python3 with the jsonschema module (Debian's python3-jsonschema, "
                  "scripts/install-deps.sh): the speedscope file cannot be validated")


def validate_speedscope(ctx, path, run):
    schema = os.path.join(ctx.paths.source_dir, SPEEDSCOPE_SCHEMA)
    ctx.require(os.path.exists(schema), f"{schema} is missing: run scripts/install-web-deps.sh")
    check = ctx.run([python_with_jsonschema(), "-c",
                     "import json, sys, jsonschema\n"
                     "jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))",
                     path, schema])
    ctx.require_eq(check.exit, 0, "the speedscope file is valid against the schema",
                   check if check.exit else run)


def memtrack_binary(ctx, *args, stdout_tty=False):
    """memtrack ARGS... with stdout kept as bytes (or on a pseudo-terminal): (exit, bytes,
    stderr)."""
    argv = [ctx.paths.memtrack, *args]
    if stdout_tty:
        master, slave = pty.openpty()
        with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave,
                              stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp) as process:
            os.close(slave)
            stderr = process.stderr.read()
            process.wait(timeout=TIMEOUT_SECONDS)
        os.close(master)
        return process.returncode, b"", stderr.decode(errors="replace")
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=ctx.env(),
                            cwd=ctx.tmp, timeout=TIMEOUT_SECONDS)
    return result.returncode, result.stdout, result.stderr.decode(errors="replace")


def text_totals(stderr):
    """{(pid, phrase): (bytes, blocks)} of the text reports' LEAK SUMMARY lines, zeros left
    out."""
    totals = {}
    for pid, phrase, size, blocks in re.findall(
            r"^==(\d+)==\s+(definitely lost|indirectly lost|possibly lost|still reachable|"
            r"unfreed at exit): ([\d,]+) bytes? in ([\d,]+) blocks?", stderr, re.M):
        value = (int(size.replace(",", "")), int(blocks.replace(",", "")))
        if value != (0, 0):
            totals[(int(pid), phrase)] = value
    return totals


def add(totals, key, size, blocks):
    old = totals.get(key, (0, 0))
    totals[key] = (old[0] + size, old[1] + blocks)


# --- pprof ----------------------------------------------------------------------------------------

@cli_test
def test_pprof_go_tool(ctx):
    """profile_leaks.c under go tool pprof: totals, functions, inlined frames, file:line,
    labels, the mapping's build-id; memtrack report --format=pprof writes the same profile."""
    profile, results = ctx.path("leaks.pb.gz"), ctx.path("results")
    run = ctx.memtrack("run", f"--pprof={profile}", f"--keep-results={results}",
                       ctx.program("profile_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --pprof: exit status", run)
    with open(profile, "rb") as f:
        ctx.expect_eq(f.read(2), b"\x1f\x8b", "the profile is gzip-compressed", run)

    space = go_pprof(ctx, "-top", "-sample_index=leaked_space", profile)
    ctx.expect_line(space, "Type: leaked_space", "pprof -top header", run)
    ctx.expect_line(space, "Showing nodes accounting for 1596B, 100% of 1596B total",
                    "pprof -top total", run)
    ctx.expect_eq(top_rows(space), {"leak_buffer": ("1000B", "1000B"),
                                    "leak_loop": ("500B", "500B"),
                                    "new_node (inline)": ("96B", "96B"),
                                    "build_list": ("0", "96B"), "main": ("0", "1596B")},
                  "pprof -top -sample_index=leaked_space rows", run)
    build_id = re.search(r"Build ID: ([0-9a-f]+)",
                         ctx.run(["readelf", "-n", ctx.program("profile_leaks")]).stdout)
    ctx.expect(build_id and f"Build ID: {build_id.group(1)}" in space.splitlines(),
               "pprof shows the program's build-id", run)

    source = ctx.source("profile_leaks.c")

    def at(marker):
        return f"{source}:{ctx.marker_line('profile_leaks.c', marker)}"
    objects = go_pprof(ctx, "-top", "-lines", "-sample_index=leaked_objects", profile)
    ctx.expect_line(objects, "Showing nodes accounting for 9, 100% of 9 total",
                    "pprof -top leaked_objects total", run)
    rows = top_rows(objects)
    ctx.expect_eq({name: rows.get(name) for name in (
        f"leak_loop {at('malloc(100)')}", f"new_node {at('malloc(sizeof')} (inline)",
        f"leak_buffer {at('malloc(1000)')}", f"build_list {at('head = new_node')}",
        f"main {at('a = leak_buffer();')}", f"main {at('  leak_loop();')}",
        f"main {at('build_list(3);')}")},
        {f"leak_loop {at('malloc(100)')}": ("5", "5"),
         f"new_node {at('malloc(sizeof')} (inline)": ("3", "3"),
         f"leak_buffer {at('malloc(1000)')}": ("1", "1"),
         f"build_list {at('head = new_node')}": ("0", "3"),
         f"main {at('a = leak_buffer();')}": ("0", "1"), f"main {at('  leak_loop();')}": ("0", "5"),
         f"main {at('build_list(3);')}": ("0", "3")},
        "pprof -top -lines -sample_index=leaked_objects rows (file:line)", run)

    traces = go_pprof(ctx, "-traces", profile)
    ctx.expect_eq(sorted(trace_samples(traces)), sorted([
        ("definite", "1000B", ("leak_buffer", "main")),
        ("definite", "500B", ("leak_loop", "main")),
        ("definite", "32B", ("new_node (inline)", "build_list", "main")),
        ("indirect", "64B", ("new_node (inline)", "build_list", "main"))]),
        "pprof -traces: kind, bytes and stack of each sample", run)

    indirect = go_pprof(ctx, "-top", "-tagfocus=kind=indirect", profile)
    ctx.expect(re.search(r"^Showing nodes accounting for 64B, [\d.]+% of 1596B total$", indirect,
                         re.M), "pprof -tagfocus=kind=indirect keeps the 64 indirect bytes", run)

    status, again, stderr = memtrack_binary(ctx, "report", "--format=pprof", results)
    ctx.expect_eq(status, 0, f"memtrack report --format=pprof: exit status ({stderr})", run)
    ctx.expect_eq(stderr, "", "memtrack report --format=pprof: nothing on stderr", run)
    with open(profile, "rb") as f:
        ctx.expect(again == f.read(), "report --format=pprof writes the run's --pprof profile",
                   run)
    status, _, stderr = memtrack_binary(ctx, "report", "--format=pprof", results,
                                        stdout_tty=True)
    ctx.expect_eq((status, stderr), (125, "memtrack: error: the pprof profile is binary and "
                                     "stdout is a terminal: redirect stdout to a file, or name "
                                     "one with --pprof=FILE\n"),
                  "report --format=pprof on a terminal", run)


@cli_test
def test_pprof_processes(ctx):
    """A program and the one it executes: pprof -raw's samples carry pid and kind labels, and
    per pid and kind they add up to the text report's LEAK SUMMARY."""
    profile = ctx.path("leaks.pb.gz")
    run = ctx.memtrack("run", f"--pprof={profile}", "--show-leak-kinds=all",
                       ctx.program("fork_exec"), ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --pprof: exit status", run)
    totals = {}
    for values, labels in raw_samples(go_pprof(ctx, "-raw", profile)):
        add(totals, (int(labels["pid"]), PHRASES[labels["kind"]]), values[1], values[0])
    ctx.require(len({pid for pid, _ in totals}) == 2, "samples of two processes", run)
    ctx.expect_eq(totals, text_totals(run.stderr), "pprof totals per pid and kind vs text", run)


# --- speedscope -------------------------------------------------------------------------------------

@cli_test
def test_speedscope_schema(ctx):
    """--speedscope is valid against speedscope's own schema; one profile per process and
    kind, each group a sample whose frames are its printed stack (root first)."""
    path, json_path, results = (ctx.path("leaks.speedscope.json"), ctx.path("leaks.json"),
                                ctx.path("results"))
    run = ctx.memtrack("run", f"--speedscope={path}", f"--json={json_path}",
                       f"--keep-results={results}", ctx.program("fork_exec"),
                       ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --speedscope: exit status", run)
    validate_speedscope(ctx, path, run)
    doc = ctx.read_json(path, run)
    report = ctx.read_json(json_path, run)
    frames = doc["shared"]["frames"]
    profiles = {p["name"]: p for p in doc["profiles"]}
    for process in report["processes"]:
        program = {pid: name for name, pid in program_names(report["processes"]).items()}[
            process["pid"]]
        for group in process["leaks"]:
            name = f"{program} {PHRASES[group['kind']]}"
            ctx.require(name in profiles, f"a profile named {name!r}", run)
            leaf = group["stack"][0]
            found = [s for s, w in zip(profiles[name]["samples"], profiles[name]["weights"])
                     if w == group["bytes"]
                     and frames[s[-1]]["name"] == (leaf["function"] or frames[s[-1]]["name"])
                     and frames[s[-1]].get("line", 0) == leaf.get("line", 0)]
            ctx.expect(found, f"{name}: a sample of {group['bytes']} bytes ending in "
                       f"{leaf['function']}", run)
    ctx.expect_eq(doc["profiles"][0]["name"],
                  "cli_fork_exec definitely lost",
                  "the first profile: the program's definitely lost bytes", run)
    again = ctx.memtrack("report", "--format=speedscope", results)
    with open(path, encoding="utf-8") as f:
        ctx.expect_eq(again.stdout, f.read(), "report --format=speedscope vs run --speedscope",
                      again)


@cli_test
def test_format_option(ctx):
    """memtrack report --format=FORMAT: that format on stdout and no text; a bad name or two
    outputs on stdout are one clear error."""
    results, json_path = ctx.path("results"), ctx.path("leaks.json")
    run = ctx.memtrack("run", f"--keep-results={results}", f"--json={json_path}",
                       ctx.program("three_sites"))
    ctx.require_eq(run.exit, 0, "memtrack run: exit status", run)
    as_json = ctx.memtrack("report", "--format=json", results)
    ctx.expect_eq((as_json.exit, as_json.stderr), (0, ""), "--format=json: exit, stderr", as_json)
    ctx.expect_eq([p["leaks"] for p in json.loads(as_json.stdout)["processes"]],
                  [p["leaks"] for p in ctx.read_json(json_path, run)["processes"]],
                  "--format=json vs --json: the leak groups", as_json)
    as_text = ctx.memtrack("report", "--format=text", results)
    ctx.expect(as_text.stderr == "" and "LEAK SUMMARY:" in as_text.stdout,
               "--format=text: the text on stdout", as_text)
    junit = ctx.memtrack("report", "--format=junit", results)
    ctx.expect_eq(ET.fromstring(junit.stdout).get("failures"), "1", "--format=junit", junit)
    folded = ctx.memtrack("report", "--format=collapsed", results)
    ctx.expect_eq(sum(int(line.rsplit(" ", 1)[1]) for line in folded.stdout.splitlines()), 66,
                  "--format=collapsed: 11 + 22 + 33 bytes", folded)
    ctx.expect_error(ctx.memtrack("report", "--format=svg", results), 125,
                     format_expected("svg"))
    ctx.expect_error(ctx.memtrack("report", "--format=speedscope", "--json=-", results), 125,
                     STDOUT_CONFLICT)


# --- every format against the text report ----------------------------------------------------

@cli_test
def test_formats_agree(ctx):
    """One run, every output: each lists every leak group of the JSON report and totals, per
    process and kind, what the text report's LEAK SUMMARY says (collapsed and speedscope
    weigh bytes only; JUnit lists the failing kinds)."""
    paths = {name: ctx.path(f"leaks.{name}") for name in
             ("json", "junit", "collapsed", "pprof", "speedscope")}
    run = ctx.memtrack("run", "--show-leak-kinds=all",
                       *(f"--{name}={path}" for name, path in paths.items()),
                       ctx.program("fork_exec"), ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run with every format: exit status", run)
    expected = text_totals(run.stderr)
    ctx.require(len({pid for pid, _ in expected}) == 2, "two processes leak", run)
    bytes_only = {key: (size, 0) for key, (size, _) in expected.items()}
    report = ctx.read_json(paths["json"], run)

    from_json = {}
    for process in report["processes"]:
        for group in process["leaks"]:
            add(from_json, (process["pid"], PHRASES[group["kind"]]), group["bytes"],
                group["blocks"])
    ctx.expect_eq(from_json, expected, "JSON groups vs text totals", run)

    folded = {}
    with open(paths["collapsed"], encoding="utf-8") as f:
        for line in f.read().splitlines():
            stack, size = line.rsplit(" ", 1)
            pid = program_names(report["processes"])[stack.split(";", 1)[0]]
            folded[pid] = folded.get(pid, 0) + int(size)
    per_pid = {}
    for (pid, _), (size, _) in expected.items():
        per_pid[pid] = per_pid.get(pid, 0) + size
    ctx.expect_eq(folded, per_pid, "collapsed bytes per pid vs text totals", run)

    failing = {}
    junit = ET.parse(paths["junit"]).getroot()
    for case in junit.iter("testcase"):
        pid = junit_pid(case)
        failure = case.find("failure")
        for size, blocks, kind in re.findall(r"^([\d,]+) bytes? in ([\d,]+) blocks? (\w+)$",
                                             failure.text if failure is not None else "", re.M):
            add(failing, (pid, PHRASES[kind]), int(size.replace(",", "")),
                int(blocks.replace(",", "")))
    ctx.expect_eq(failing, {key: value for key, value in expected.items()
                            if key[1] in ("definitely lost", "possibly lost")},
                  "JUnit failing groups vs text totals of the failing kinds", run)

    from_pprof = {}
    for values, labels in raw_samples(go_pprof(ctx, "-raw", paths["pprof"])):
        add(from_pprof, (int(labels["pid"]), PHRASES[labels["kind"]]), values[1], values[0])
    ctx.expect_eq(from_pprof, expected, "pprof samples vs text totals", run)

    validate_speedscope(ctx, paths["speedscope"], run)
    from_speedscope = {}
    for profile in ctx.read_json(paths["speedscope"], run)["profiles"]:
        name, kind = next((n, profile["name"][len(n) + 1:]) for n in program_names(
            report["processes"]) if profile["name"].startswith(n + " "))
        ctx.expect_eq(sum(profile["weights"]), profile["endValue"],
                      f"{profile['name']}: weights add up to endValue", run)
        add(from_speedscope, (program_names(report["processes"])[name], kind),
            sum(profile["weights"]), 0)
    ctx.expect_eq(from_speedscope, bytes_only, "speedscope profiles vs text totals", run)
