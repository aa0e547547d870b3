"""The directives of one end-to-end test program and the checks both modes of run_e2e.py share
(the directive syntax is documented at the top of run_e2e.py). Standard library only.

A report here is anything with pid, how, leaked (bytes, blocks, ...) or None, groups, notes
and resources; a group has bytes, blocks, frames and describe(); a resource (a descriptor
open at exit) has fd, text ("file /tmp/x, open(O_RDONLY)"), frames and describe(); a frame
has function and, in CLI mode, file, line and inlined. memtrack_report.Report (text mode) and e2e_cli.JsonReport
(CLI mode) both are.
"""

import copy
import difflib
import fnmatch
import os
import re
import sys
from dataclasses import dataclass

import memtrack_report

DIRECTIVE = re.compile(r"^\s*//\s*(RUN-OPTIONS|PLAIN-COMPARE|CLI|(?:CLI-|TEXT-|EMULATED-)?EXPECT-[A-Z-]+):"
                       r"\s*(.*?)\s*$")
# `// @name` (or `// @a @b`, maybe followed by words) marks the line it ends.
MARKER = re.compile(r"//\s*(@\w+(?:\s+@\w+)*)")
NAME_TOKEN = re.compile(r"(!?)([^!@*\[\]]+)(?:@(\w+))?(\[inlined\])?(?:\*(\d+))?")
TIMEOUT_SECONDS = 120


def parse_counts(text):
    """'1000 bytes in 10 blocks' -> (1000, 10)."""
    m = re.fullmatch(r"(\d+) bytes in (\d+) blocks?", text.strip())
    if m is None:
        raise ValueError(f"expected 'B bytes in N blocks', got {text!r}")
    return int(m.group(1)), int(m.group(2))


def format_counts(size, blocks):
    return f"{size} bytes in {blocks} block{'' if blocks == 1 else 's'}"


@dataclass(frozen=True)
class Name:
    """One name of an EXPECT-GROUP: `f`, `!f`, `f@marker`, `f@marker[inlined]`."""
    function: str
    absent: bool = False
    marker: str | None = None
    inlined: bool = False


def parse_names(text, markers):
    """'f@alloc g*2 !h' -> [Name(f, marker=alloc), Name(g), Name(g), Name(h, absent)]."""
    names = []
    for token in text.split():
        m = NAME_TOKEN.fullmatch(token)
        if m is None or (m.group(1) and (m.group(3) or m.group(4) or m.group(5))):
            raise ValueError(f"bad function name {token!r}")
        if m.group(3) and m.group(3) not in markers:
            raise ValueError(f"no line is marked // @{m.group(3)}")
        name = Name(m.group(2), bool(m.group(1)), m.group(3), bool(m.group(4)))
        names.extend([name] * (int(m.group(5)) if m.group(5) else 1))
    return names


def find_markers(lines, source):
    """{marker: line number} for every `// @marker` on a line that is not a directive."""
    markers = {}
    for number, line in enumerate(lines, 1):
        m = MARKER.search(line)
        if m is None or DIRECTIVE.match(line):
            continue
        for marker in m.group(1).replace("@", " ").split():
            if marker in markers:
                sys.exit(f"{source}:{number}: marker @{marker} also on line {markers[marker]}")
            markers[marker] = number
    return markers


# Report expectations: whether one process may have several.
# The mode prefixes of EXPECT directives each mode keeps.
MODE_PREFIXES = {"text": {"text"}, "cli": {"cli"}, "emulated": {"cli", "emulated"}}
REPORT_KEYS = ("HOW", "LEAKED", "GROUPS", "FRAMES", "GROUP", "NOTE", "RESOURCES", "RESOURCE")
REPEATABLE = {"GROUP", "NOTE", "RESOURCE"}


class Case:
    """The directives of one test program that apply in `mode` ("text", "cli" or "emulated":
    the JSON of the CLI mode, read back by `memtrack report`, so CLI-EXPECT lines apply too)."""

    def __init__(self, source, temp_dir, mode):
        self.source, self.mode = os.path.abspath(source), mode
        self.options, self.compare = [], ["stdout", "stderr", "exit"]
        self.exit, self.reports, self.report_file = 0, 1, None
        self.cli_skip = None  # the reason, if the case cannot run under the CLI
        self.diagnostics = []  # substrings, each expected in exactly one diagnostic line
        self.expect = {}  # label ("*" for every process) -> list of (key, parsed value, text)
        with open(source, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.markers = find_markers(lines, source)
        for number, line in enumerate(lines, 1):
            if m := DIRECTIVE.match(line):
                try:
                    self.add(m.group(1), m.group(2).replace("%t", temp_dir))
                except ValueError as e:
                    sys.exit(f"{source}:{number}: {m.group(1)}: {e}")

    def add(self, key, value):
        mode, _, rest = key.partition("-EXPECT-")
        if rest:  # CLI-, TEXT-, EMULATED-EXPECT-...: parsed in every mode, kept in theirs
            key = "EXPECT-" + rest
            if mode.lower() not in MODE_PREFIXES[self.mode]:
                copy.deepcopy(self).add(key, value)  # only to report errors in both modes
                return
        if key == "RUN-OPTIONS":
            self.options.append(value)
        elif key == "PLAIN-COMPARE":
            self.compare = [] if value == "none" else value.split()
        elif key == "CLI":
            if not value.startswith("skip "):
                raise ValueError("expected 'skip <reason>'")
            self.cli_skip = value.removeprefix("skip ").strip()
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
            self.add_expectation(label, key.removeprefix("EXPECT-PROCESS-"), rest)
        elif key.removeprefix("EXPECT-") in REPORT_KEYS:
            self.add_expectation("*", key.removeprefix("EXPECT-"), value)
        else:
            raise ValueError("unknown directive")

    def drop_expectations(self, *keys):
        """Forgets the expectations of these kinds ("GROUP", "LEAKED", ...): the sampled mode
        estimates groups, and with suppressions its leaked total differs (e2e_cli.py)."""
        for label, expectations in self.expect.items():
            self.expect[label] = [e for e in expectations if e[0] not in keys]

    def add_expectation(self, label, kind, text):
        if kind == "GROUP":
            counts, _, names = text.partition("|")
            value = (parse_counts(counts), parse_names(names, self.markers))
        elif kind == "RESOURCE":
            pattern, _, names = text.partition(" | ")  # flags contain '|' without spaces
            value = (pattern.strip(), parse_names(names, self.markers))
        else:
            value = {"LEAKED": parse_counts, "GROUPS": int, "FRAMES": int,
                     "RESOURCES": int}.get(kind, str)(text)
        self.expect.setdefault(label, []).append((kind, value, text))

    def expectations(self, label):
        """The expectations for one process; its own single-valued ones override the general."""
        own = self.expect.get(label, [])
        overridden = {e[0] for e in own if e[0] not in REPEATABLE}
        merged = [e for e in self.expect.get("*", []) if e[0] not in overridden] + own
        if not any(e[0] == "HOW" for e in merged):
            merged.append(("HOW", "exit", "exit"))
        if not any(e[0] == "RESOURCES" for e in merged):  # no descriptor unless expected
            count = sum(e[0] == "RESOURCE" for e in merged)
            merged.append(("RESOURCES", count, str(count)))
        return merged

    def is_own_file(self, path):
        return path == self.source or os.path.basename(path) == os.path.basename(self.source)

    def frame_is(self, frame, name):
        """True if `frame` is the one `name` asks for. The text mode knows functions only."""
        if not memtrack_report.function_is(frame.function, name.function):
            return False
        if self.mode == "text":
            return True
        if name.marker and not (self.is_own_file(frame.file)
                                and frame.line == self.markers[name.marker]):
            return False
        return frame.inlined or not name.inlined

    def group_matches(self, group, counts, names):
        """True if the group has these (bytes, blocks) and its frames are `names`."""
        return (group.bytes, group.blocks) == counts and self.frames_match(group.frames, names)

    def resource_matches(self, resource, pattern, names):
        """True if the descriptor's text matches the glob `pattern` and its frames `names`."""
        return fnmatch.fnmatchcase(resource.text, pattern) and self.frames_match(resource.frames,
                                                                                  names)

    def frames_match(self, frames, names):
        """True if `frames` are `names` in order, not necessarily adjacent; an absent name (!f)
        must name no frame at all."""
        if any(memtrack_report.function_is(f.function, n.function)
               for n in names if n.absent for f in frames):
            return False
        position = 0
        for name in (n for n in names if not n.absent):
            while position < len(frames) and not self.frame_is(frames[position], name):
                position += 1
            if position == len(frames):
                return False
            position += 1
        return True


def frames_to_main(frames):
    """The frames up to and including main (main.cold too); all of them if main is not there."""
    for i, frame in enumerate(frames):
        if memtrack_report.function_is(frame.function, "main"):
            return frames[:i + 1]
    return frames


def check_report(case, report, expectations, failures):
    """Appends a message to `failures` for every expectation the report does not meet."""
    def fail(what, expected, actual):
        failures.append(f"pid {report.pid}: {what}\n    expected: {expected}\n"
                        f"    actual:   {actual}")

    unmatched = list(report.groups)
    unmatched_fds = list(report.resources)
    for key, value, text in expectations:
        if key == "HOW" and report.how != value:
            fail("how the process ended", value, report.how)
        elif key == "LEAKED" and report.leaked and value != report.leaked[:2]:
            fail("LEAK SUMMARY", text, format_counts(*report.leaked[:2]))
        elif key == "GROUPS" and len(report.groups) != value:
            fail("number of groups shown", value, len(report.groups))
        elif key == "FRAMES":
            for group in report.groups:
                if len(frames_to_main(group.frames)) != value:
                    fail("frames in group (up to main)", value,
                         f"{len(frames_to_main(group.frames))}: {group.describe()}")
        elif key == "GROUP":
            match = next((g for g in unmatched if case.group_matches(g, *value)), None)
            if match is None:
                listing = "".join(f"\n      {g.describe()}"
                                  + ("" if g in unmatched else "  (taken by an earlier line)")
                                  for g in report.groups)
                fail("group", text, f"no such group among:{listing or ' (none)'}")
            else:
                unmatched.remove(match)
        elif key == "RESOURCES" and len(report.resources) != value:
            fail("number of descriptors open at exit", value,
                 f"{len(report.resources)}:" + "".join(f"\n      {r.describe()}"
                                                      for r in report.resources))
        elif key == "RESOURCE":
            match = next((r for r in unmatched_fds if case.resource_matches(r, *value)), None)
            if match is None:
                listing = "".join(f"\n      {r.describe()}"
                                  + ("" if r in unmatched_fds else "  (taken by an earlier line)")
                                  for r in report.resources)
                fail("descriptor open at exit", text, f"no such descriptor among:"
                     f"{listing or ' (none)'}")
            else:
                unmatched_fds.remove(match)
        elif key == "NOTE" and not any(value in note for note in report.notes):
            fail("report line", f"a line containing {value!r}",
                 "\n              ".join(report.notes) or "(none)")


def check_processes(case, reports, main_pid, failures):
    """Checks the number of reports, their pids and each one's expectations. Labels: main is
    the process with main_pid, the others are child, child2, ... in the order given."""
    pids = [r.pid for r in reports]
    if len(reports) != case.reports:
        failures.append(f"number of reports\n    expected: {case.reports}\n"
                        f"    actual:   {len(reports)} (pids {pids})")
    if len(set(pids)) != len(pids):
        failures.append(f"several reports from one pid: {pids}")
    if case.reports > 0 and main_pid not in pids:
        failures.append(f"no report from the started process (pid {main_pid}); pids {pids}")
    labels, children = [], 0
    for report in reports:
        children += report.pid != main_pid
        labels.append("main" if report.pid == main_pid else
                      "child" if children == 1 else f"child{children}")
    for label in case.expect.keys() - {"*"} - set(labels):
        failures.append(f"no report for process {label!r} (have {sorted(labels)})")
    for report, label in zip(reports, labels):
        check_report(case, report, case.expectations(label), failures)


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


def check_exit(case, traced, failures):
    if traced.returncode != case.exit:
        failures.append(f"exit status\n    expected: {case.exit}\n"
                        f"    actual:   {traced.returncode}")


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


def run(argv, env, cwd):
    return memtrack_report.run_process(argv, env, cwd, TIMEOUT_SECONDS, text=True)


def plain_environment():
    """This process's environment without the runtime's variables."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MEMTRACK_OPTIONS")}
