#!/usr/bin/env python3
"""Runs one test program under valgrind's memcheck and under `memtrack run`, and checks that
both tools put the same bytes and blocks into each leak kind (definite, indirect, possible,
reachable). memcheck is the oracle. Standard library only.

Usage: run_memcheck.py --program PROG --source SRC [--memtrack CLI --runtime SO]
                       [--memcheck-only] [--valgrind PATH] [--keep-temp]

  --memcheck-only   Run memcheck alone and check its numbers against the source's MEMCHECK
                    lines (validates the case itself; needs no memtrack).

Directives are `//` comment lines in the source:

  MEMCHECK: KIND BYTES BLOCKS   What memcheck says about the program's own blocks (see
                                "runtime blocks" below); a kind without a line must be 0 0.
                                Checked on every run: if valgrind changes its mind, the case
                                no longer tests what it says, and fails.
  REACHABLE: compare            Required, one of the two. Whether memtrack's reachable
  REACHABLE: ignore (REASON)    totals must equal memcheck's.
  DIFFERS: KIND REASON          A deliberate difference: memtrack's KIND totals are checked
  MEMTRACK-EXPECT: KIND B N     against its MEMTRACK-EXPECT line instead of memcheck's, and
                                the difference is printed. Each DIFFERS needs one
                                MEMTRACK-EXPECT of the same kind and vice versa.
  EXIT: N                       The program's exit status (default 0), the same under both;
                                -SIG: it dies of signal SIG (memcheck dies of it, `memtrack
                                run` exits with 128 + SIG, as a shell reports it).

Runtime blocks. memtrack counts blocks that the C/C++ runtime keeps for itself (allocated by
ld.so, stdio buffers, or with no frame outside libc/ld.so/libstdc++/libgcc_s/libm) in
summary.runtime_internal_* and in no kind. The same rule is applied to memcheck's allocation
stacks, and only the remaining ("program") records are compared, for every kind. The rule
cannot be dropped for reachable blocks: valgrind runs __libc_freeres and
__gnu_cxx::__freeres at exit and replaces malloc, so glibc's and libstdc++'s own blocks
differ between a native and a valgrind run anyway. All records are printed, runtime ones
marked, with both sets of totals.
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import leak_kinds  # noqa: E402
from leak_kinds import KINDS, ToolError  # noqa: E402

TIMEOUT_SECONDS = 300
SKIP = 77  # ctest's SKIP_RETURN_CODE: valgrind is not installed

_DIRECTIVE = re.compile(r"^//\s*([A-Z][A-Z-]*):\s*(.*?)\s*$")
_KIND_NUMBERS = re.compile(rf"^({'|'.join(KINDS)})\s+(\d+)\s+(\d+)$")


class CaseError(Exception):
    """The source's directives are malformed."""


class Case:
    """The directives of one test program."""

    def __init__(self, path):
        self.memcheck = {}  # kind -> (bytes, blocks)
        self.reachable = None  # "compare" or the reason it is ignored
        self.differs = {}  # kind -> reason
        self.memtrack_expect = {}  # kind -> (bytes, blocks)
        self.exit = 0
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = _DIRECTIVE.match(line)
                if m:
                    try:
                        self._add(m.group(1), m.group(2))
                    except CaseError as e:
                        raise CaseError(f"{path}:{number}: {e}") from e
        if self.reachable is None:
            raise CaseError(f"{path}: no 'REACHABLE: compare' or 'REACHABLE: ignore (reason)'")
        if set(self.differs) != set(self.memtrack_expect):
            raise CaseError(f"{path}: DIFFERS kinds {sorted(self.differs)} and MEMTRACK-EXPECT "
                            f"kinds {sorted(self.memtrack_expect)} must be the same")

    def _add(self, key, value):
        if key in ("MEMCHECK", "MEMTRACK-EXPECT"):
            m = _KIND_NUMBERS.match(value)
            if m is None:
                raise CaseError(f"{key}: expected 'KIND BYTES BLOCKS', got {value!r}")
            table = self.memcheck if key == "MEMCHECK" else self.memtrack_expect
            if m.group(1) in table:
                raise CaseError(f"{key}: {m.group(1)} given twice")
            table[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        elif key == "REACHABLE":
            m = re.fullmatch(r"compare|ignore \((.+)\)", value)
            if m is None or self.reachable is not None:
                raise CaseError(f"REACHABLE: expected one 'compare' or 'ignore (reason)'")
            self.reachable = m.group(1) or "compare"
        elif key == "DIFFERS":
            m = re.fullmatch(rf"({'|'.join(KINDS)})\s+(\S.*)", value)
            if m is None or m.group(1) in self.differs:
                raise CaseError(f"DIFFERS: expected 'KIND REASON', once per kind")
            self.differs[m.group(1)] = m.group(2)
        elif key == "EXIT":
            self.exit = int(value)
        else:
            raise CaseError(f"unknown directive {key}")

    def compares(self, kind):
        return kind != "reachable" or self.reachable == "compare"


def fmt(numbers):
    return f"{numbers[0]} B / {numbers[1]}"


def memcheck_side(args, case, temp_dir, failures):
    """Runs memcheck; returns (all totals, program totals)."""
    processes, summaries, result = leak_kinds.run_memcheck(
        args.valgrind, [os.path.abspath(args.program)], temp_dir, temp_dir, TIMEOUT_SECONDS)
    if len(processes) != 1 or len(summaries) != 1:
        raise ToolError(f"memcheck reported {len(processes)} (XML) and {len(summaries)} (text) "
                        f"processes, expected 1")
    process, summary = processes[0], summaries[0]
    leak_kinds.agree_or_die(process, summary.totals, "memcheck")
    if result.returncode != case.exit:
        failures.append(f"under memcheck the program exited {result.returncode}, "
                        f"expected {case.exit}; stderr:\n"
                        f"{result.stderr.decode(errors='replace')[-2000:]}")
    print(f"memcheck loss records (pid {process.pid}):")
    for record in process.records:
        print(f"  {record.describe()}")
    if summary.suppressed[1]:
        print(f"  suppressed by valgrind's default suppressions: {fmt(summary.suppressed)}")
    for name, numbers in summary.heuristics.items():
        # memcheck's text counts a heuristic match under "reachable via heuristic" even
        # when the block is possibly lost after all (reached through a possibly lost block).
        print(f"  memcheck heuristic {name} matched: {fmt(numbers)}")
    program = process.totals(program_only=True)
    for kind in KINDS:
        if not case.compares(kind):
            continue
        expected = case.memcheck.get(kind, (0, 0))
        if program.get(kind) != expected:
            failures.append(f"memcheck: {kind} is {fmt(program.get(kind))}, the case's MEMCHECK "
                            f"line says {fmt(expected)}: fix the program or the line")
    return process.totals(program_only=False), program


def memtrack_side(args, case, temp_dir, failures):
    """Runs memtrack; returns (totals, runtime_internal (bytes, blocks)) or None."""
    processes, result = leak_kinds.run_memtrack(
        args.memtrack, args.runtime, [os.path.abspath(args.program)], temp_dir, temp_dir,
        TIMEOUT_SECONDS)
    expected_exit = case.exit if case.exit >= 0 else 128 - case.exit
    if result.returncode != expected_exit:
        failures.append(f"under memtrack the program exited {result.returncode}, "
                        f"expected {expected_exit}; stderr:\n"
                        f"{result.stderr.decode(errors='replace')[-2000:]}")
    if len(processes) != 1:
        failures.append(f"memtrack reported {len(processes)} processes, expected 1")
        return None
    totals, problems, notes = leak_kinds.memtrack_totals(processes[0])
    failures.extend(f"memtrack: {p}" for p in problems)
    for note in notes:
        print(f"note: memtrack: {note}")
    summary = processes[0].get("summary", {})
    internal = (summary.get("runtime_internal_bytes", 0), summary.get("runtime_internal_blocks", 0))
    return totals, internal


def compare(case, memcheck_all, memcheck_program, memtrack, failures):
    print(f"\n{'kind':10} {'memcheck (all)':>16} {'memcheck (program)':>18} {'memtrack':>16}  "
          f"verdict")
    for kind in KINDS:
        mine = memtrack.get(kind) if memtrack else None
        oracle = memcheck_program.get(kind)
        if not case.compares(kind):
            verdict = f"not compared: {case.reachable}"
        elif kind in case.differs:
            expected = case.memtrack_expect[kind]
            verdict = (f"differs on purpose ({case.differs[kind]}): memtrack must say "
                       f"{fmt(expected)}, memcheck says {fmt(oracle)}")
            if expected == oracle:
                verdict += " (no longer a difference: drop the DIFFERS line?)"
            if mine is not None and mine != expected:
                failures.append(f"{kind}: memtrack says {fmt(mine)}, its MEMTRACK-EXPECT line "
                                f"says {fmt(expected)}")
                verdict = "FAIL, " + verdict
        elif mine is None:
            verdict = "memtrack not run"
        elif mine == oracle:
            verdict = "ok"
        else:
            verdict = "FAIL"
            failures.append(f"{kind}: memtrack says {fmt(mine)}, memcheck says {fmt(oracle)}")
        shown = fmt(mine) if mine is not None else "-"
        print(f"{kind:10} {fmt(memcheck_all.get(kind)):>16} {fmt(oracle):>18} {shown:>16}  "
              f"{verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--program", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--memtrack", help="the memtrack CLI")
    parser.add_argument("--runtime", help="libmemtrack.so (MEMTRACK_RUNTIME for the CLI)")
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("--memcheck-only", action="store_true")
    parser.add_argument("--keep-temp", action="store_true")
    args = parser.parse_args()
    if not args.memcheck_only and not args.memtrack:
        parser.error("--memtrack is required unless --memcheck-only")
    if shutil.which(args.valgrind) is None:
        print(f"SKIP: {args.valgrind} not found")
        return SKIP
    try:
        case = Case(args.source)
    except CaseError as e:
        print(f"FAIL: {e}")
        return 1

    temp_dir = tempfile.mkdtemp(prefix="memtrack-memcheck-")
    failures = []
    try:
        memcheck_all, memcheck_program = memcheck_side(args, case, temp_dir, failures)
        memtrack = None
        if not args.memcheck_only:
            side = memtrack_side(args, case, temp_dir, failures)
            if side:
                memtrack, internal = side
                print(f"memtrack runtime_internal (not compared): {fmt(internal)}")
        compare(case, memcheck_all, memcheck_program, memtrack, failures)
    except ToolError as e:
        failures.append(str(e))
    return leak_kinds.finish(failures, temp_dir, args.keep_temp)


if __name__ == "__main__":
    sys.exit(main())
