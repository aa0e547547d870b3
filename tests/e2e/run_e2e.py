#!/usr/bin/env python3
"""Runs one end-to-end test program under libmemtrack.so and checks its leak report(s)
against the expectations written in the program's source. Standard library only.

Usage: run_e2e.py --runtime libmemtrack.so --program ./prog --source prog.c [--keep-temp]

Every run also checks, without being asked: each report is well formed and agrees with
itself (frames numbered #0.., groups add up to the LEAK SUMMARY), no two reports share a pid,
the started process's report carries its pid, the runtime printed no "memtrack[pid]:"
diagnostic, and stdout, the program's own stderr and the exit status equal a plain run
without LD_PRELOAD.

Directives are `//` comment lines in the source, `// KEY: VALUE`:

  RUN-OPTIONS: a=1:b=2       MEMTRACK_OPTIONS for the run; several lines are joined with ':'.
                             %t stands for the test's own temporary directory.
  PLAIN-COMPARE: stdout exit What must equal the plain run: any of stdout, stderr, exit, or
                             "none". Default: stdout stderr exit.
  EXPECT-EXIT: N             Exit status under the runtime (default 0).
  EXPECT-REPORTS: N          Number of process reports (default 1).
  EXPECT-REPORT-FILE: NAME   Reports go to %t/NAME, %p in NAME standing for the pid (and
                             matching the pid of the report inside); none may reach stderr.
  EXPECT-DIAGNOSTIC: TEXT    The runtime prints exactly one "memtrack[pid]:" line containing
                             TEXT. Several lines may be given; any other diagnostic fails.

Report expectations apply to every report; written EXPECT-PROCESS-<KEY>: LABEL VALUE they
apply to one process only, and override the general one for that process. LABEL is `main`
(the process the runner started) or `child`, `child2`, `child3`, ... (the other reports, in
the order they began). Example: `// EXPECT-PROCESS-LEAKED: child 300 bytes in 1 block`.

  EXPECT-HOW: _exit with status 3   How the process ended, as in the header (default "exit").
  EXPECT-LEAKED: B bytes in N blocks  The LEAK SUMMARY totals, exactly.
  EXPECT-GROUPS: N           Number of groups shown.
  EXPECT-FRAMES: N           Every shown group has exactly N frames.
  EXPECT-NOTE: TEXT          An indented line after the LEAK SUMMARY contains TEXT
                             (e.g. "untracked: 2 allocations").
  EXPECT-GROUP: B bytes in N blocks | f g h
                             A shown group with exactly these numbers whose frames name the
                             functions f, g, h in this order, not necessarily adjacent. `f*3`
                             stands for f f f; `!f` means no frame is f. Each EXPECT-GROUP must
                             match a different group. Names match without gcc clone suffixes
                             (.constprop.0), parameter lists or namespaces.
"""

import argparse
import difflib
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memtrack_report  # noqa: E402

DIRECTIVE = re.compile(r"^\s*//\s*(RUN-OPTIONS|PLAIN-COMPARE|EXPECT-[A-Z-]+):\s*(.*?)\s*$")
TIMEOUT_SECONDS = 120


def parse_counts(text):
    """'1000 bytes in 10 blocks' -> (1000, 10)."""
    m = re.fullmatch(r"(\d+) bytes in (\d+) blocks?", text.strip())
    if m is None:
        raise ValueError(f"expected 'B bytes in N blocks', got {text!r}")
    return int(m.group(1)), int(m.group(2))


def format_counts(size, blocks):
    return f"{size} bytes in {blocks} block{'' if blocks == 1 else 's'}"


def parse_group(text):
    """'100 bytes in 1 block | f g*2 !h' -> ((100, 1), ['f', 'g', 'g', '!h'])."""
    counts, _, names = text.partition("|")
    expanded = []
    for token in names.split():
        name, _, repeat = token.partition("*")
        expanded.extend([name] * (int(repeat) if repeat else 1))
    return parse_counts(counts), expanded


# Report expectations: how each value is read, and whether one process may have several.
REPORT_KEYS = {"HOW": str, "LEAKED": parse_counts, "GROUPS": int, "FRAMES": int,
               "GROUP": parse_group, "NOTE": str}
REPEATABLE = {"GROUP", "NOTE"}


class Case:
    """The directives of one test program."""

    def __init__(self, source, temp_dir):
        self.options, self.compare = [], ["stdout", "stderr", "exit"]
        self.exit, self.reports, self.report_file = 0, 1, None
        self.diagnostics = []  # substrings, each expected in exactly one diagnostic line
        self.expect = {}  # label ("*" for every process) -> list of (key, parsed value, text)
        with open(source, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if m := DIRECTIVE.match(line):
                    try:
                        self.add(m.group(1), m.group(2).replace("%t", temp_dir))
                    except ValueError as e:
                        sys.exit(f"{source}:{number}: {m.group(1)}: {e}")

    def add(self, key, value):
        if key == "RUN-OPTIONS":
            self.options.append(value)
        elif key == "PLAIN-COMPARE":
            self.compare = [] if value == "none" else value.split()
        elif key == "EXPECT-EXIT":
            self.exit = int(value)
        elif key == "EXPECT-REPORTS":
            self.reports = int(value)
        elif key == "EXPECT-REPORT-FILE":
            self.report_file = value
        elif key == "EXPECT-DIAGNOSTIC":
            self.diagnostics.append(value)
        elif key.removeprefix("EXPECT-PROCESS-") in REPORT_KEYS:
            label, _, rest = value.partition(" ")
            kind = key.removeprefix("EXPECT-PROCESS-")
            self.expect.setdefault(label, []).append((kind, REPORT_KEYS[kind](rest), rest))
        elif key.removeprefix("EXPECT-") in REPORT_KEYS:
            kind = key.removeprefix("EXPECT-")
            self.expect.setdefault("*", []).append((kind, REPORT_KEYS[kind](value), value))
        else:
            raise ValueError("unknown directive")

    def expectations(self, label):
        """The expectations for one process; its own single-valued ones override the general."""
        own = self.expect.get(label, [])
        overridden = {e[0] for e in own if e[0] not in REPEATABLE}
        merged = [e for e in self.expect.get("*", []) if e[0] not in overridden] + own
        if not any(e[0] == "HOW" for e in merged):
            merged.append(("HOW", "exit", "exit"))
        return merged


def run(argv, env, cwd):
    return memtrack_report.run_process(argv, env, cwd, TIMEOUT_SECONDS, text=True)


def group_matches(group, counts, names):
    """True if the group has these (bytes, blocks) and its frames name `names` in order;
    a name starting with '!' must name no frame at all."""
    if (group.bytes, group.blocks) != counts:
        return False
    functions = [f.function for f in group.frames]
    for absent in (n[1:] for n in names if n.startswith("!")):
        if any(memtrack_report.function_is(f, absent) for f in functions):
            return False
    position = 0
    for name in (n for n in names if not n.startswith("!")):
        while position < len(functions) and \
                not memtrack_report.function_is(functions[position], name):
            position += 1
        if position == len(functions):
            return False
        position += 1
    return True


def check_report(report, expectations, failures):
    """Appends a message to `failures` for every expectation the report does not meet."""
    def fail(what, expected, actual):
        failures.append(f"pid {report.pid}: {what}\n    expected: {expected}\n"
                        f"    actual:   {actual}")

    unmatched = list(report.groups)
    for key, value, text in expectations:
        if key == "HOW" and report.how != value:
            fail("how the process ended", value, report.how)
        elif key == "LEAKED" and report.leaked and value != report.leaked[:2]:
            fail("LEAK SUMMARY", text, format_counts(*report.leaked[:2]))
        elif key == "GROUPS" and len(report.groups) != value:
            fail("number of groups shown", value, len(report.groups))
        elif key == "FRAMES":
            for group in report.groups:
                if len(group.frames) != value:
                    fail("frames in group", value, f"{len(group.frames)}: {group.describe()}")
        elif key == "GROUP":
            match = next((g for g in unmatched if group_matches(g, *value)), None)
            if match is None:
                listing = "".join(f"\n      {g.describe()}"
                                  + ("" if g in unmatched else "  (taken by an earlier line)")
                                  for g in report.groups)
                fail("group", text, f"no such group among:{listing or ' (none)'}")
            else:
                unmatched.remove(match)
        elif key == "NOTE" and not any(value in note for note in report.notes):
            fail("note after the LEAK SUMMARY", f"a line containing {value!r}",
                 "; ".join(report.notes) or "(none)")


def label_reports(reports, main_pid):
    """Maps each report to its label: main, child, child2, ..."""
    labels, children = {}, 0
    for report in reports:
        if report.pid == main_pid:
            labels[id(report)] = "main"
        else:
            children += 1
            labels[id(report)] = "child" if children == 1 else f"child{children}"
    return labels


def read_report_files(case, temp_dir, failures):
    pattern = re.compile(re.escape(case.report_file).replace("%p", r"(\d+)") + "$")
    text = ""
    for name in sorted(os.listdir(temp_dir)):
        if m := pattern.match(name):
            with open(os.path.join(temp_dir, name), encoding="utf-8", errors="replace") as f:
                content = f.read()
            pids = set(re.findall(r"^==(\d+)== ", content, re.M))
            if pids != {m.group(1)}:
                failures.append(f"{name}: holds reports of pids {sorted(pids)}")
            text += content
    return memtrack_report.parse(text)


def compare_plain(case, plain, traced, other_stderr, failures):
    def diff(what, expected, actual):
        lines = difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                     "plain run", "under memtrack")
        failures.append(f"{what} differs from the plain run:\n" + "".join(lines))

    if "exit" in case.compare and plain.returncode != traced.returncode:
        failures.append(f"exit status {traced.returncode}, plain run {plain.returncode}")
    if "stdout" in case.compare and plain.stdout != traced.stdout:
        diff("stdout", plain.stdout, traced.stdout)
    if "stderr" in case.compare and plain.stderr != other_stderr:
        diff("stderr (without the report)", plain.stderr, other_stderr)


def check_diagnostics(case, diagnostics, failures):
    """Each expected text must be in exactly one diagnostic line; no other line may appear."""
    unexpected = list(diagnostics)
    for text in case.diagnostics:
        matching = [d for d in diagnostics if text in d]
        if len(matching) != 1:
            failures.append(f"diagnostic containing {text!r}\n    expected: exactly one line\n"
                            f"    actual:   {len(matching)}")
        unexpected = [d for d in unexpected if text not in d]
    failures += [f"runtime diagnostic: {d.rstrip()}" for d in unexpected]


def check(args, temp_dir):
    case = Case(args.source, temp_dir)
    program = os.path.abspath(args.program)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MEMTRACK_OPTIONS")}
    plain, _ = run([program], env, temp_dir)
    env["LD_PRELOAD"] = os.path.abspath(args.runtime)
    if case.options:
        env["MEMTRACK_OPTIONS"] = ":".join(case.options)
    traced, main_pid = run([program], env, temp_dir)

    failures = []
    output = memtrack_report.parse(traced.stderr)
    if case.report_file:
        if output.reports:
            failures.append("report written to stderr although log_file is set")
        file_output = read_report_files(case, temp_dir, failures)
        output.reports, output.errors = file_output.reports, output.errors + file_output.errors
    failures += output.errors
    check_diagnostics(case, output.diagnostics, failures)
    if traced.returncode != case.exit:
        failures.append(f"exit status\n    expected: {case.exit}\n"
                        f"    actual:   {traced.returncode}")
    compare_plain(case, plain, traced, output.other, failures)

    reports = output.reports
    pids = [r.pid for r in reports]
    if len(reports) != case.reports:
        failures.append(f"number of reports\n    expected: {case.reports}\n"
                        f"    actual:   {len(reports)} (pids {pids})")
    if len(set(pids)) != len(pids):
        failures.append(f"several reports from one pid: {pids}")
    if case.reports > 0 and main_pid not in pids:
        failures.append(f"no report from the started process (pid {main_pid}); pids {pids}")
    labels = label_reports(reports, main_pid)
    for label in case.expect.keys() - {"*"} - set(labels.values()):
        failures.append(f"no report for process {label!r} (have {sorted(labels.values())})")
    for report in reports:
        check_report(report, case.expectations(labels[id(report)]), failures)
    return failures, traced, reports if case.report_file else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runtime", required=True, help="path of libmemtrack.so")
    parser.add_argument("--program", required=True, help="the test program")
    parser.add_argument("--source", required=True, help="its source, holding the directives")
    parser.add_argument("--keep-temp", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    temp_dir = tempfile.mkdtemp(prefix="memtrack-e2e-")
    try:
        failures, traced, file_reports = check(args, temp_dir)
    finally:
        if args.keep_temp:
            print(f"temporary directory kept: {temp_dir}")
        else:
            shutil.rmtree(temp_dir, ignore_errors=True)
    name = os.path.basename(args.source)
    if not failures:
        print(f"PASS {name}")
        return 0
    print(f"FAIL {name}: {len(failures)} problem(s)")
    for failure in failures:
        print("  - " + failure.replace("\n", "\n    "))
    print(f"--- stdout under memtrack (exit {traced.returncode}) ---\n{traced.stdout}", end="")
    print("--- stderr under memtrack ---\n" + traced.stderr, end="")
    for report in file_reports:
        print(f"--- report of pid {report.pid} from its log file ---\n" + "\n".join(report.lines))
    return 1


if __name__ == "__main__":
    sys.exit(main())
