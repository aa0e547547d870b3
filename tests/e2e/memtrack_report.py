"""Parses the leak reports libmemtrack.so prints at exit into structured data.

Shared by tests/e2e/run_e2e.py and tests/real/run_real.py; standard library only. The format
is the one runtime/output/report_text.cpp writes, every line prefixed with "==PID== ".
The parser is strict: a line inside a report that does not fit the format is an error.
"""

import re
import subprocess
import sys
from dataclasses import dataclass, field

_NUM = r"(\d{1,3}(?:,\d{3})*)"  # "81,536": thousands separated by commas, nothing else
_PREFIX = re.compile(r"^==(\d+)== (.*)$")
_DIAG = re.compile(r"^memtrack\[\d+\]: ")
_HEADER = re.compile(r"^memtrack (\S+) leak report: (.*) \(pid (\d+), (.+)\)$")
_HEAP = re.compile(rf"^HEAP SUMMARY: {_NUM} allocations?, {_NUM} frees?, {_NUM} bytes "
                   rf"allocated, {_NUM} bytes peak live$")
_GROUP = re.compile(rf"^{_NUM}(?: \({_NUM} direct, {_NUM} indirect\))? bytes in {_NUM} "
                    r"(block is|blocks are) (unfreed at exit|definitely lost|indirectly lost|"
                    r"possibly lost|still reachable) "
                    r"\(group (\d+) of (\d+)\)( \[kept by the C/C\+\+ runtime\])?, allocated at:$")
_FRAME = re.compile(r"^   #(\d+) 0x([0-9a-f]{16}) (\?\?|.+\+0x[0-9a-f]+) "
                    r"\((<unknown module>|.+\+0x[0-9a-f]+)\)$")
_NO_FRAMES = re.compile(r"^   \((no stack|no frames could be unwound).*\)$")
_HIDDEN = re.compile(rf"^\.\.\. {_NUM} more groups? \({_NUM} bytes in {_NUM} blocks?\) "
                     r"not shown; max_groups=\d+$")
_ERROR = re.compile(r"^ERROR: (.*), at:$")
_ERROR_PART = re.compile(r"^ (first freed|allocated) at:$")
_ERROR_SUMMARY = re.compile(r"^ERROR SUMMARY: ")
_FD_HEADER = re.compile(rf"^FILE DESCRIPTORS: {_NUM} open at exit, from {_NUM} sites?"
                        rf"(?: \({_NUM} more not tracked: .*\))?$")
_FD_SITE = re.compile(rf"^{_NUM} (descriptor|descriptors) open at exit \(site (\d+) of (\d+)\), "
                      r"opened at:$")
_FD_LINE = re.compile(r"^   fd (\d+): (.+)$")
_SUMMARY = re.compile(rf"^LEAK SUMMARY: {_NUM} bytes in {_NUM} blocks? (?:unfreed at exit|lost), "
                      rf"from {_NUM} allocation sites?$")


def _int(text):
    return int(text.replace(",", ""))


@dataclass
class Frame:
    index: int
    function: str | None  # as printed, without "+0xOFF"; None for "??"
    module: str


@dataclass(eq=False)  # groups compare by identity: two may print the same
class Group:
    bytes: int
    blocks: int
    runtime_internal: bool
    number: tuple  # (i, n) from "(group i of n)"
    frames: list = field(default_factory=list)
    kind: str = "unfreed at exit"  # or "definitely lost", "still reachable", ...
    indirect_bytes: int = 0

    def describe(self):
        names = " ".join(f.function or "??" for f in self.frames)
        plural = "" if self.blocks == 1 else "s"
        return f"{self.bytes} bytes in {self.blocks} block{plural} | {names}"


@dataclass(eq=False)
class OpenFd:
    """One descriptor open at exit: "fd 3: file /tmp/x, open(O_RDONLY)" -> fd, text (after
    "fd N: ") and the frames of its site."""
    fd: int
    text: str
    frames: list

    def describe(self):
        return f"fd {self.fd}: {self.text} | " + " ".join(f.function or "??" for f in self.frames)


@dataclass
class FdSite:
    count: int
    number: tuple  # (i, n) from "(site i of n)"
    frames: list = field(default_factory=list)
    fds: list = field(default_factory=list)  # OpenFd


@dataclass
class Report:
    pid: int
    program: str
    how: str
    groups: list = field(default_factory=list)
    hidden_groups: int = 0
    leaked: tuple | None = None  # (bytes, blocks, sites) from LEAK SUMMARY; None: cut off
    notes: list = field(default_factory=list)  # indented lines after LEAK SUMMARY
    lines: list = field(default_factory=list)  # the raw report text, for failure output
    errors: list = field(default_factory=list)  # allocator misuse: title and stacks
    in_error: str | None = None  # parsing state: which stack of the last error
    fds_open: int | None = None  # from "FILE DESCRIPTORS: N open at exit" (None: no section)
    fd_sites: list = field(default_factory=list)  # FdSite, in report order

    @property
    def resources(self):
        """Every descriptor open at exit, as OpenFd (the e2e checks' view)."""
        return [fd for site in self.fd_sites for fd in site.fds]


@dataclass
class Output:
    reports: list = field(default_factory=list)  # in the order their first lines appeared
    errors: list = field(default_factory=list)  # malformed or inconsistent report text
    diagnostics: list = field(default_factory=list)  # "memtrack[pid]: ..." lines
    other: str = ""  # everything else (the program's own stderr)


def parse(text):
    """Splits `text` (stderr, or a log file) into reports, diagnostics and other output."""
    out = Output()
    current = {}  # pid -> the report being read from that pid
    other = []
    for line in text.splitlines(keepends=True):
        m = _PREFIX.match(line.rstrip("\n"))
        if m is None:
            (out.diagnostics if _DIAG.match(line) else other).append(line)
            continue
        pid, body = int(m.group(1)), m.group(2)
        header = _HEADER.match(body)
        if header:
            report = Report(pid=pid, program=header.group(2), how=header.group(4))
            if int(header.group(3)) != pid:
                out.errors.append(f"pid {pid}: header names pid {header.group(3)}")
            current[pid] = report
            out.reports.append(report)
        elif pid not in current:
            out.errors.append(f"pid {pid}: report line before any header: {body!r}")
            continue
        report = current[pid]
        report.lines.append(line.rstrip("\n"))
        if not header:
            error = _parse_body_line(report, body)
            if error:
                out.errors.append(f"pid {pid}: {error}: {body!r}")
    out.other = "".join(other)
    for report in out.reports:
        out.errors.extend(f"pid {report.pid}: {e}" for e in check_consistency(report))
    return out


def _parse_body_line(report, body):
    """Adds one line to `report`; returns an error message if the line does not fit."""
    if body == "" or _HEAP.match(body):
        return None
    if m := _ERROR.match(body):  # allocator misuse: its stacks until the next block
        report.errors.append({"title": m.group(1), "stacks": {"at": []}})
        report.in_error = "at"
        return None
    if report.in_error and (m := _ERROR_PART.match(body)):
        report.in_error = m.group(1)
        report.errors[-1]["stacks"][report.in_error] = []
        return None
    if report.in_error and (m := _FRAME.match(body)):
        function = None if m.group(3) == "??" else m.group(3).rsplit("+0x", 1)[0]
        report.errors[-1]["stacks"][report.in_error].append(function)
        return None
    report.in_error = None
    if report.leaked is not None and _ERROR_SUMMARY.match(body):
        return None
    if report.leaked is not None:
        if body.startswith("  "):
            report.notes.append(body.strip())
            return None
        return "line after LEAK SUMMARY"
    if m := _FD_HEADER.match(body):
        if report.fds_open is not None:
            return "second FILE DESCRIPTORS line"
        report.fds_open = _int(m.group(1))
        return None
    if report.fds_open is not None and not _SUMMARY.match(body):
        return _parse_fd_line(report, body)  # after the descriptors header, only their sites
    if m := _GROUP.match(body):
        direct = _int(m.group(2)) if m.group(2) else _int(m.group(1))
        blocks = _int(m.group(4))
        if (blocks == 1) != (m.group(5) == "block is"):
            return "wrong singular/plural"
        number = (int(m.group(7)), int(m.group(8)))
        group = Group(direct, blocks, m.group(9) is not None, number)
        group.kind = m.group(6)
        group.indirect_bytes = _int(m.group(3)) if m.group(3) else 0
        report.groups.append(group)
        return None
    if m := _FRAME.match(body):
        if not report.groups:
            return "frame outside a group"
        function = None if m.group(3) == "??" else m.group(3).rsplit("+0x", 1)[0]
        report.groups[-1].frames.append(Frame(int(m.group(1)), function, m.group(4)))
        return None
    if _NO_FRAMES.match(body) and report.groups:
        return None
    if m := _HIDDEN.match(body):
        report.hidden_groups = _int(m.group(1))
        return None
    if m := _SUMMARY.match(body):
        report.leaked = (_int(m.group(1)), _int(m.group(2)), _int(m.group(3)))
        return None
    return "unexpected line"


def _parse_fd_line(report, body):
    if m := _FD_SITE.match(body):
        count = _int(m.group(1))
        if (count == 1) != (m.group(2) == "descriptor"):
            return "wrong singular/plural"
        report.fd_sites.append(FdSite(count, (int(m.group(3)), int(m.group(4)))))
        return None
    if body == "":
        return None
    if not report.fd_sites:
        return "unexpected line after FILE DESCRIPTORS"
    site = report.fd_sites[-1]
    if m := _FRAME.match(body):
        if site.fds:
            return "frame after the descriptors of a site"
        function = None if m.group(3) == "??" else m.group(3).rsplit("+0x", 1)[0]
        site.frames.append(Frame(int(m.group(1)), function, m.group(4)))
        return None
    if _NO_FRAMES.match(body) and not site.fds:
        return None
    if m := _FD_LINE.match(body):
        site.fds.append(OpenFd(int(m.group(1)), m.group(2), site.frames))
        return None
    return "unexpected line"


def check_consistency(report):
    """Checks that a report agrees with itself: frame numbering and summary totals."""
    errors = []
    if report.leaked is None:
        return ["report has no LEAK SUMMARY line (cut off?)"]
    total = len(report.groups) + report.hidden_groups
    numbers = [g.number for g in report.groups]
    if numbers != [(i + 1, total) for i in range(len(numbers))]:
        errors.append(f"groups numbered {numbers}, expected (1, {total}), (2, {total}), ...")
    for group in report.groups:
        if [f.index for f in group.frames] != list(range(len(group.frames))):
            errors.append(f"frames not numbered #0..#{len(group.frames) - 1}: {group.describe()}")
    if report.hidden_groups == 0:
        leaks = [g for g in report.groups
                 if not g.runtime_internal and g.kind != "still reachable"]
        totals = (sum(g.bytes for g in leaks), sum(g.blocks for g in leaks), len(leaks))
        if totals != report.leaked:
            errors.append(f"groups add up to {totals} (bytes, blocks, sites) but LEAK SUMMARY "
                          f"says {report.leaked}")
    sites = report.fd_sites
    if [s.number for s in sites] != [(i + 1, len(sites)) for i in range(len(sites))]:
        errors.append(f"descriptor sites numbered {[s.number for s in sites]}")
    for site in sites:
        if site.count != len(site.fds):
            errors.append(f"descriptor site {site.number} says {site.count}, lists "
                          f"{len(site.fds)}")
        if [f.index for f in site.frames] != list(range(len(site.frames))):
            errors.append(f"descriptor site {site.number}: frames not numbered from #0")
    if report.fds_open is not None and report.fds_open != len(report.resources):
        errors.append(f"FILE DESCRIPTORS says {report.fds_open}, sites list "
                      f"{len(report.resources)}")
    return errors


def _base_name(function):
    """The plain name of a printed function: without gcc clone suffixes (.constprop.0,
    .isra.0, .part.0, .cold), ABI tags, parameter list, return type or template arguments."""
    name = re.sub(r" \[clone [^\]]*\]|\[abi:[^\]]*\]", "", function)
    name = name.replace("(anonymous namespace)", "{anonymous}").split("(")[0]
    name = name.split(".")[0].rsplit(" ", 1)[-1]
    return re.sub(r"<.*>$", "", name)


def function_is(function, name):
    """True if the printed `function` is `name` (a plain or qualified C/C++ name)."""
    if function is None:
        return False
    if function.startswith("_Z"):  # not demangled: look for the <length><name> component
        return re.search(rf"(?<![0-9]){len(name)}{re.escape(name)}", function) is not None
    base = _base_name(function)
    return base == name or base.endswith("::" + name)


def run_process(argv, env, cwd, timeout, text):
    """Runs argv to completion (the runners' shared launcher); returns the CompletedProcess
    and the pid it had. Exits the test with a failure if it outlives `timeout` seconds."""
    with subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=text,
                          errors="replace" if text else None) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            sys.exit(f"FAIL: {' '.join(argv)[:200]} did not finish within {timeout} s")
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr), proc.pid
