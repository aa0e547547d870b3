"""The other report formats, parsed by their consumers: --collapsed (flamegraph.pl's
folded lines, checked line by line: flamegraph.pl itself does not install offline) and --junit (JUnit XML, read with Python's
xml.etree as CI test views read it): one test case per process, failing when it has leaks of
the --errors-for-leak-kinds kinds, allocator misuse errors or a crash; every failing group
listed; counts and bytes equal to the JSON and text reports'."""

import re
import xml.etree.ElementTree as ET

from cli_harness import Failure, cli_test, junit_pid, program_names, STDOUT_CONFLICT


def read_junit(ctx, path, run):
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Failure(f"cannot parse the JUnit report {path}: {e}\n{run.describe()}")


def failing_kinds(group):
    return group["kind"] in ("definite", "possible", "unclassified")


def check_junit_against_json(ctx, junit, report, run):
    """The JUnit report says what the JSON report says, process by process."""
    ctx.require_eq(junit.tag, "testsuites", "JUnit root element", run)
    suites = junit.findall("testsuite")
    ctx.require_eq(len(suites), 1, "JUnit: number of testsuite elements", run)
    cases = suites[0].findall("testcase")
    processes = report["processes"]
    ctx.require_eq(len(cases), len(processes), "JUnit: one testcase per process", run)
    failures = 0
    for case, process in zip(cases, processes):
        ctx.expect_eq(junit_pid(case), process["pid"], f"testcase {case.get('name')!r}: pid", run)
        ctx.expect(case.get("name").startswith(process["command"][0]) and
                   str(process["pid"]) not in case.get("name"),
                   f"testcase name {case.get('name')!r}: its command, without the pid", run)
        groups = [g for g in process["leaks"] if failing_kinds(g)]
        failure = case.find("failure")
        fails = bool(groups or process["errors"] or "crash" in process)
        ctx.expect_eq(failure is not None, fails,
                      f"JUnit testcase {case.get('name')!r} fails", run)
        if failure is None:
            continue
        failures += 1
        if groups:
            summary = process["summary"]
            expected = (f"{summary['leaked_bytes']:,} byte{'s' * (summary['leaked_bytes'] != 1)}"
                        f" leaked in {summary['leaked_blocks']:,} "
                        f"block{'s' * (summary['leaked_blocks'] != 1)}")
            ctx.expect(failure.get("message").startswith(expected),
                       f"failure message {failure.get('message')!r} starts with {expected!r}",
                       run)
        listed = re.findall(r"^([\d,]+) bytes? in ([\d,]+) blocks? (\w+)$", failure.text or "",
                            re.M)
        ctx.expect_eq(sorted((int(b.replace(",", "")), int(n.replace(",", "")), k)
                             for b, n, k in listed),
                      sorted((g["bytes"], g["blocks"], g["kind"]) for g in groups),
                      f"groups listed in the failure of {case.get('name')!r}", run)
    for element in (junit, suites[0]):
        ctx.expect_eq((element.get("tests"), element.get("failures"), element.get("errors")),
                      (str(len(processes)), str(failures), "0"),
                      f"JUnit <{element.tag}> tests/failures/errors", run)


@cli_test
def test_junit_leaks(ctx):
    junit_path, json_path = ctx.path("leaks.xml"), ctx.path("leaks.json")
    run = ctx.memtrack("run", f"--junit={junit_path}", f"--json={json_path}",
                       ctx.program("fork_exec"), ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --junit: exit status", run)
    report = ctx.read_json(json_path, run)
    junit = read_junit(ctx, junit_path, run)
    check_junit_against_json(ctx, junit, report, run)
    ctx.expect(junit.find("testsuite").get("failures") != "0", "some test case fails", run)
    text_total = sum(int(m.replace(",", "")) for m in
                     re.findall(r"definitely lost: ([\d,]+) bytes", run.stderr))
    json_total = sum(p["summary"]["definite_bytes"] for p in report["processes"])
    ctx.expect_eq(text_total, json_total, "definitely lost bytes: text vs JSON", run)


@cli_test
def test_junit_clean_misuse_and_stdout(ctx):
    run = ctx.memtrack("run", "--junit=-", ctx.program("no_leak"))
    ctx.require_eq(run.exit, 0, "memtrack run --junit=- no_leak: exit status", run)
    junit = ET.fromstring(run.stdout)
    case = junit.find("testsuite/testcase")
    ctx.expect(case is not None and case.find("failure") is None and case.find("error") is None,
               "no_leak: a passing testcase", run)
    ctx.expect_eq(junit.get("failures"), "0", "no_leak: failures", run)
    xml_path, json_path = ctx.path("misuse.xml"), ctx.path("misuse.json")
    misuse = ctx.memtrack("run", f"--junit={xml_path}", f"--json={json_path}",
                          ctx.program("misuse"), "double_free")
    junit = read_junit(ctx, xml_path, misuse)
    check_junit_against_json(ctx, junit, ctx.read_json(json_path, misuse), misuse)
    ctx.expect_eq(junit.find("testsuite/testcase/failure") is not None, True,
                  "misuse: the testcase fails", misuse)
    both = ctx.memtrack("run", "--junit=-", "--json=-", ctx.program("no_leak"))
    ctx.expect_error(both, 125, STDOUT_CONFLICT)


COLLAPSED_LINE = re.compile(r"^([^ ;][^;]*(?:;[^;]+)*) (\d+)$")


def text_leaked_bytes(text):
    """{pid: definitely + indirectly + possibly lost bytes} from the text reports' summaries."""
    totals = {}
    for pid, what, number in re.findall(
            r"^==(\d+)==\s+(definitely lost|indirectly lost|possibly lost): ([\d,]+) bytes",
            text, re.M):
        totals[int(pid)] = totals.get(int(pid), 0) + int(number.replace(",", ""))
    return totals


@cli_test
def test_collapsed_stacks(ctx):
    """--collapsed: flamegraph.pl's input ("frame;frame;frame bytes", root first). Every
    leak group of the JSON report is a line (its printed frames reversed under the process's
    root frame), and each process's bytes add up to its leaked bytes in the text and JSON."""
    path, json_path = ctx.path("leaks.folded"), ctx.path("leaks.json")
    run = ctx.memtrack("run", f"--collapsed={path}", f"--json={json_path}",
                       ctx.program("fork_exec"), ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --collapsed: exit status", run)
    report = ctx.read_json(json_path, run)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    ctx.require(lines, "--collapsed wrote no lines", run)
    stacks = {}
    pid_of = program_names(report["processes"])
    for line in lines:
        match = COLLAPSED_LINE.match(line)
        ctx.require(match is not None, f"not a collapsed-stack line: {line!r}", run)
        frames = match.group(1).split(";")
        ctx.require(frames[0] in pid_of, f"root frame {frames[0]!r} names a process", run)
        pid = pid_of[frames[0]]
        ctx.expect(tuple(frames) not in stacks, f"stack listed twice: {line!r}", run)
        stacks[tuple(frames)] = (pid, int(match.group(2)))
    totals = {}
    for pid, size in stacks.values():
        totals[pid] = totals.get(pid, 0) + size
    ctx.expect_eq(totals, {p["pid"]: p["summary"]["leaked_bytes"] for p in report["processes"]},
                  "collapsed bytes per pid vs JSON leaked_bytes", run)
    ctx.expect_eq(totals, text_leaked_bytes(run.stderr),
                  "collapsed bytes per pid vs the text LEAK SUMMARY", run)
    for process in report["processes"]:
        for group in process["leaks"]:
            leaf = group["stack"][0]["function"]
            ctx.expect(any(pid == process["pid"] and frames[-1] == leaf
                           for frames, (pid, _) in stacks.items()),
                       f"pid {process['pid']}: no line ends in {leaf!r}", run)
    ctx.expect(any(frames[1] == "main" for frames in stacks), "root first: main after the "
               "process frame", run)
