"""Runs a program under valgrind's memcheck and under `memtrack run`, and reads both tools'
leak verdicts as totals per kind. Shared by run_memcheck.py and run_real_memcheck.py;
standard library only.

memcheck's side comes from two runs, because valgrind 3.19 writes either XML or text:
  - the XML run gives every loss record with its allocation stack (valgrind 3.19 writes no
    <leak_summary> element, so the totals are sums over the Leak_* error records);
  - the text run gives the LEAK SUMMARY block.
Both are parsed and must agree (agree_or_die): a parser bug or a non-deterministic program
then fails loudly instead of comparing wrong numbers.

In a Leak_DefinitelyLost record <leakedbytes> is direct + indirect bytes ("48 (16 direct, 32
indirect) bytes in 1 blocks"), and the indirect blocks also have Leak_IndirectlyLost
records of their own; so definite bytes are the direct part only.
"""

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

KINDS = ("definite", "indirect", "possible", "reachable")

VALGRIND_OPTIONS = [
    "--leak-check=full",
    "--show-leak-kinds=all",
    "--errors-for-leak-kinds=none",
    "--num-callers=64",  # deep enough that a program frame is never cut off (attribution)
    "--keep-debuginfo=yes",  # frames of dlclose'd libraries keep their names
]

_XML_KIND = {
    "Leak_DefinitelyLost": "definite",
    "Leak_IndirectlyLost": "indirect",
    "Leak_PossiblyLost": "possible",
    "Leak_StillReachable": "reachable",
}
_TEXT_KIND = {
    "definitely lost": "definite",
    "indirectly lost": "indirect",
    "possibly lost": "possible",
    "still reachable": "reachable",
}
_NUM = r"(\d{1,3}(?:,\d{3})*)"
_XWHAT = re.compile(rf"^{_NUM} (?:\({_NUM} direct, {_NUM} indirect\) )?bytes in {_NUM} blocks? "
                    r"(?:is|are) (definitely lost|indirectly lost|possibly lost|still reachable) "
                    r"in loss record [\d,]+ of [\d,]+$")
_SUMMARY_LINE = re.compile(rf"^==(\d+)== +(definitely lost|indirectly lost|possibly lost|"
                           rf"still reachable|suppressed): {_NUM} bytes in {_NUM} blocks$")
_NO_LEAKS = re.compile(r"^==(\d+)== All heap blocks were freed -- no leaks are possible$")
_HEURISTIC = re.compile(rf"^==(\d+)== +(\w+) +: {_NUM} bytes in {_NUM} blocks$")

# The C and C++ runtime libraries; must match runtime/output/report_text.cpp
# (is_system_runtime, is_dynamic_linker), which decides what memtrack counts as
# runtime_internal.
_SYSTEM_RUNTIME = ("libc.so", "ld-linux", "libstdc++.so", "libgcc_s.so", "libm.so")


class ToolError(Exception):
    """A tool did not run as it must, or its output is not what the parsers expect."""


def _int(text):
    return int(text.replace(",", ""))


@dataclass
class Totals:
    """Bytes and blocks per kind."""
    values: dict = field(default_factory=lambda: {k: [0, 0] for k in KINDS})

    def add(self, kind, size, blocks):
        self.values[kind][0] += size
        self.values[kind][1] += blocks

    def get(self, kind):
        return tuple(self.values[kind])


@dataclass
class Frame:
    obj: str
    fn: str
    file: str
    line: int

    def describe(self):
        where = f"{self.file}:{self.line}" if self.file else os.path.basename(self.obj or "?")
        return f"{self.fn or '??'} ({where})"


@dataclass
class LossRecord:
    kind: str
    bytes: int  # the record's own blocks (the direct part of a definitely lost record)
    blocks: int
    indirect_bytes: int  # definitely lost records: bytes of the blocks in their cliques
    frames: list  # allocation stack, allocator frames (vgpreload_*) removed

    def runtime_internal(self):
        """memtrack's rule for blocks the C/C++ runtime keeps for itself, applied to
        memcheck's stack: allocated by ld.so directly, a stdio buffer, or no frame outside
        the runtime libraries."""
        if not self.frames:
            return False
        top = self.frames[0]
        if os.path.basename(top.obj).startswith("ld-linux"):
            return True
        if top.fn == "_IO_file_doallocate":
            return True
        return all(os.path.basename(f.obj).startswith(_SYSTEM_RUNTIME) for f in self.frames)

    def describe(self):
        tag = " [runtime]" if self.runtime_internal() else ""
        extra = f" (+{self.indirect_bytes} indirect)" if self.indirect_bytes else ""
        where = next((f for f in self.frames
                      if not os.path.basename(f.obj).startswith(_SYSTEM_RUNTIME)),
                     self.frames[0] if self.frames else None)
        site = where.describe() if where else "(no stack)"
        return f"{self.kind:9} {self.bytes:>8} B {self.blocks:>4} blocks{extra}{tag} at {site}"


@dataclass
class MemcheckProcess:
    pid: int
    argv: list
    records: list = field(default_factory=list)
    exit_code: int | None = None

    def totals(self, program_only):
        """Totals per kind over all records, or over those memtrack would not count as
        runtime_internal (program_only)."""
        totals = Totals()
        for r in self.records:
            if not (program_only and r.runtime_internal()):
                totals.add(r.kind, r.bytes, r.blocks)
        return totals


def _text(node, tag):
    child = node.find(tag)
    return child.text if child is not None and child.text is not None else ""


_XML_DECLARATION = '<?xml version="1.0"?>'


def _drop_child_preambles(text):
    """With --trace-children=yes, a child made by vfork (posix_spawn) writes its own XML
    preamble, from the XML declaration to </args>, into its parent's file before it execs
    and opens a file of its own. Those fragments are cut out, leaving the parent's document."""
    start = text.find(_XML_DECLARATION)
    while (i := text.find(_XML_DECLARATION, start + 1)) != -1:
        end = text.find("</args>", i)
        if end == -1:
            raise ToolError("an XML preamble without </args>")
        text = text[:i] + text[end + len("</args>"):]
        start = i - 1
    return text


def parse_memcheck_xml(path):
    """One valgrind XML file -> MemcheckProcess with every loss record."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            root = ET.fromstring(_drop_child_preambles(f.read()))
    except (ET.ParseError, OSError, ToolError) as e:
        raise ToolError(f"{path}: cannot read valgrind's XML: {e}") from e
    argv = []
    argv_node = root.find("args/argv")
    if argv_node is not None:
        argv = [_text(argv_node, "exe")] + [a.text or "" for a in argv_node.findall("arg")]
    process = MemcheckProcess(pid=int(_text(root, "pid") or 0), argv=argv)
    for error in root.findall("error"):
        kind = _XML_KIND.get(_text(error, "kind"))
        if kind is None:
            continue  # not a leak (invalid read, uninitialised value, ...): not compared
        process.records.append(_parse_record(path, error, kind))
    if root.find("status/state") is None:
        raise ToolError(f"{path}: incomplete valgrind XML (no final status)")
    return process


def _parse_record(path, error, kind):
    text = _text(error, "xwhat/text")
    m = _XWHAT.match(text)
    if m is None or _TEXT_KIND[m.group(5)] != kind:
        raise ToolError(f"{path}: unexpected leak record text {text!r} for {kind}")
    total, direct, indirect, blocks = (_int(g) if g else None for g in m.groups()[:4])
    if direct is None:
        direct, indirect = total, 0
    leaked = (_int(_text(error, "xwhat/leakedbytes")), _int(_text(error, "xwhat/leakedblocks")))
    if direct + indirect != total or leaked != (total, blocks):
        raise ToolError(f"{path}: record {text!r} disagrees with leakedbytes/leakedblocks "
                        f"{leaked}")
    if indirect and kind != "definite":
        raise ToolError(f"{path}: a {kind} record with indirect bytes: {text!r}")
    frames = []
    for frame in error.findall("stack/frame"):
        obj = _text(frame, "obj")
        if not frames and os.path.basename(obj).startswith("vgpreload_"):
            continue  # valgrind's malloc/new replacement: memtrack's frame 0 is its caller
        line = _text(frame, "line")
        frames.append(Frame(obj, _text(frame, "fn"), _text(frame, "file"),
                            int(line) if line else 0))
    return LossRecord(kind, direct, blocks, indirect, frames)


@dataclass
class TextSummary:
    """What valgrind's text log says about one process."""
    command: str  # from "Command: ..."
    totals: Totals = field(default_factory=Totals)
    suppressed: tuple = (0, 0)
    heuristics: dict = field(default_factory=dict)  # name -> (bytes, blocks)
    complete: bool = False  # a LEAK SUMMARY or "no leaks are possible" was seen


def parse_memcheck_text(text):
    """valgrind's text log of one process -> TextSummary."""
    summary = TextSummary(command="")
    for line in text.splitlines():
        if m := re.match(r"^==\d+== Command: (.*)$", line):
            summary.command = m.group(1)
        elif _NO_LEAKS.match(line):
            summary.complete = True
        elif m := _SUMMARY_LINE.match(line):
            summary.complete = True
            size, blocks = _int(m.group(3)), _int(m.group(4))
            if m.group(2) == "suppressed":
                summary.suppressed = (size, blocks)
            else:
                summary.totals.add(_TEXT_KIND[m.group(2)], size, blocks)
        elif (m := _HEURISTIC.match(line)) and summary.complete:
            summary.heuristics[m.group(2)] = (_int(m.group(3)), _int(m.group(4)))
    return summary


def agree_or_die(process, text_totals, what):
    """The XML records of a process sum to the text LEAK SUMMARY, and the indirect bytes
    its definitely lost records carry equal its indirectly lost records."""
    xml_totals = process.totals(program_only=False)
    for kind in KINDS:
        if xml_totals.get(kind) != text_totals.get(kind):
            raise ToolError(f"{what}: memcheck's XML records give {kind} {xml_totals.get(kind)} "
                            f"(bytes, blocks) but its text LEAK SUMMARY says "
                            f"{text_totals.get(kind)}")
    carried = sum(r.indirect_bytes for r in process.records)
    if carried != xml_totals.get("indirect")[0]:
        raise ToolError(f"{what}: definitely lost records carry {carried} indirect bytes, "
                        f"indirectly lost records hold {xml_totals.get('indirect')[0]}")


def run(argv, cwd, timeout, env=None):
    """Runs argv; returns the CompletedProcess (stdout, stderr as bytes)."""
    try:
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"timed out after {timeout} s: {' '.join(argv)}") from e


def program_name(argv0):
    """How processes of the two runs are matched: the executable's base name."""
    return os.path.basename(argv0)


def run_memcheck(valgrind, argv, temp_dir, cwd, timeout, env=None, extra_options=()):
    """Runs argv under memcheck twice, once writing XML and once text (one file per process
    each, %p), with VALGRIND_OPTIONS. Returns (processes, summaries, XML run's result):
    processes are MemcheckProcess from the XML run, summaries TextSummary from the text
    run, each in pid order (the two runs have different pids)."""
    options = [valgrind, *VALGRIND_OPTIONS, *extra_options]
    results = []
    for mode in ("xml", "text"):
        out_dir = os.path.join(temp_dir, f"memcheck-{mode}")
        os.makedirs(out_dir, exist_ok=True)
        mode_options = [f"--log-file={out_dir}/%p.log"]
        if mode == "xml":
            mode_options += ["--xml=yes", f"--xml-file={out_dir}/%p.xml"]
        results.append(run([*options, *mode_options, *argv], cwd, timeout, env))
    if results[0].returncode != results[1].returncode:
        raise ToolError(f"the two memcheck runs exited {results[0].returncode} and "
                        f"{results[1].returncode}")

    def files(mode, suffix):
        out_dir = os.path.join(temp_dir, f"memcheck-{mode}")
        names = [n for n in os.listdir(out_dir) if n.endswith(suffix)]
        return [os.path.join(out_dir, n) for n in sorted(names, key=lambda n: int(n.split(".")[0]))]

    processes = [parse_memcheck_xml(path) for path in files("xml", ".xml")]
    summaries = []
    for path in files("text", ".log"):
        with open(path, encoding="utf-8", errors="replace") as f:
            summary = parse_memcheck_text(f.read())
        if not summary.complete:
            raise ToolError(f"{path}: no LEAK SUMMARY (did valgrind fail?)")
        summaries.append(summary)
    return processes, summaries, results[0]


def run_memtrack(memtrack, runtime, argv, temp_dir, cwd, timeout, env=None):
    """Runs argv as `memtrack run --show-leak-kinds=all --json=J -- argv`.
    Returns (JSON processes, CompletedProcess)."""
    report = os.path.join(temp_dir, "memtrack.json")
    env = dict(os.environ if env is None else env)
    if runtime:
        env["MEMTRACK_RUNTIME"] = os.path.abspath(runtime)
    env.pop("MEMTRACK_OPTIONS", None)
    result = run([memtrack, "run", "--show-leak-kinds=all", f"--json={report}", "--", *argv],
                 cwd, timeout, env)
    if not os.path.exists(report):
        raise ToolError(f"memtrack wrote no JSON report (exit status {result.returncode}); "
                        f"stderr:\n{result.stderr.decode(errors='replace')[-3000:]}")
    with open(report, encoding="utf-8") as f:
        try:
            return json.load(f)["processes"], result
        except (json.JSONDecodeError, KeyError) as e:
            raise ToolError(f"{report}: not a memtrack JSON report: {e}") from e


def memtrack_totals(process):
    """Totals per kind of one JSON process, not counting runtime_internal blocks (those are
    in summary.runtime_internal_* only). Takes summary.<kind>_bytes/_blocks where present,
    else sums leaks[] by kind. Returns (Totals, problems, notes): problems are failures
    (blocks left unclassified, a summary that disagrees with leaks[]), notes are not (a
    summary field that does not exist yet)."""
    summary = process.get("summary", {})
    from_leaks = Totals()
    unclassified = [0, 0]
    for group in process.get("leaks", []):
        if group.get("kind") in KINDS:
            from_leaks.add(group["kind"], group["bytes"], group["blocks"])
        else:
            unclassified[0] += group.get("bytes", 0)
            unclassified[1] += group.get("blocks", 0)
    problems, notes = [], []
    if unclassified[1]:
        problems.append(f"memtrack left {unclassified[0]} bytes in {unclassified[1]} blocks "
                     f"'unclassified' (no reachability scan)")
    totals = Totals()
    for kind in KINDS:
        b, n = summary.get(f"{kind}_bytes"), summary.get(f"{kind}_blocks")
        if b is None or n is None:
            notes.append(f"summary has no {kind}_bytes/{kind}_blocks; summed leaks[] instead")
            b, n = from_leaks.get(kind)
        elif (b, n) != from_leaks.get(kind):
            problems.append(f"summary {kind} ({b}, {n}) differs from the sum of leaks[] "
                         f"{from_leaks.get(kind)}")
        totals.add(kind, b, n)
    return totals, problems, notes


def finish(failures, temp_dir, keep_temp):
    """The end of both runners: keeps or removes the temporary directory, prints each
    failure (or PASS) and returns the exit status."""
    if keep_temp:
        print(f"temporary files kept in {temp_dir}")
    else:
        shutil.rmtree(temp_dir, ignore_errors=True)
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("PASS")
    return 1 if failures else 0
