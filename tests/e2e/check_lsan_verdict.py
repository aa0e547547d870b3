#!/usr/bin/env python3
"""A program written for LeakSanitizer gets the same verdict under memtrack: the same leaked
bytes and blocks per allocation site (function and file:line of the allocator's caller) and
the same exit status, with LSAN_OPTIONS=exitcode=23 given to both. Standard library only.

Usage: check_lsan_verdict.py --cli memtrack --runtime libmemtrack.so
           --memtrack-program PROG --lsan-program PROG_BUILT_WITH_FSANITIZE_LEAK

Runs the pair with no argument and, for lsan_interface, with "recoverable" (a recoverable
check first: LSan prints two reports and memtrack one on-demand check before the report; the
last report of each is compared, and the check must have found the same leaks), and with
use_globals=0 added to LSAN_OPTIONS (the block a global holds becomes a leak in both).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

LSAN_OPTIONS = "exitcode=23:fast_unwind_on_malloc=0"
# "Direct leak of 48 byte(s) in 1 object(s) allocated from:"
LSAN_TITLE = re.compile(r"^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\)")
# "    #1 0x5555 in lose_direct /src/tests/e2e/lsan_interface.c:56"
LSAN_FRAME = re.compile(r"^\s+#\d+ 0x[0-9a-f]+ in (\S+) (\S+?):(\d+)(?::\d+)?$")
# LSan's own frames (its malloc interceptors); the first other frame is the site.
LSAN_RUNTIME = re.compile(r"/libsanitizer/|/compiler-rt/")


def lsan_reports(stderr):
    """Every LSan report in `stderr` as {(function, file:line): [bytes, blocks]}."""
    reports, current, title = [], None, None
    for line in stderr.splitlines():
        if "ERROR: LeakSanitizer: detected memory leaks" in line:
            current = collections.defaultdict(lambda: [0, 0])
            reports.append(current)
            continue
        m = LSAN_TITLE.match(line)
        if m and current is not None:
            title = (int(m.group(2)), int(m.group(3)))
            continue
        m = LSAN_FRAME.match(line)
        if m and title is not None and not LSAN_RUNTIME.search(m.group(2)):
            site = (m.group(1), f"{os.path.basename(m.group(2))}:{m.group(3)}")
            current[site][0] += title[0]
            current[site][1] += title[1]
            title = None
    return [dict(r) for r in reports]


def memtrack_sites(process):
    """A JSON process as {(function, file:line): [bytes, blocks]} over the leaked kinds."""
    sites = collections.defaultdict(lambda: [0, 0])
    for group in process["leaks"]:
        if group["kind"] not in ("definite", "indirect", "possible", "unclassified"):
            continue
        frame = group["stack"][0]
        site = (frame["function"], f"{os.path.basename(frame['file'])}:{frame['line']}")
        sites[site][0] += group["bytes"]
        sites[site][1] += group["blocks"]
    return dict(sites)


def describe(sites):
    return "\n".join(f"    {f} {where}: {b} bytes in {n} blocks"
                     for (f, where), (b, n) in sorted(sites.items())) or "    (none)"


def compare(args, extra_args, problems, extra_options=""):
    env = dict(os.environ, LSAN_OPTIONS=LSAN_OPTIONS + extra_options)
    for name in ("MEMTRACK_OPTIONS", "LD_PRELOAD", "ASAN_OPTIONS"):
        env.pop(name, None)
    lsan = subprocess.run([args.lsan_program, *extra_args], capture_output=True, text=True,
                          env=env, timeout=120)
    with tempfile.TemporaryDirectory() as temp:
        json_path = os.path.join(temp, "report.json")
        env["MEMTRACK_RUNTIME"] = os.path.abspath(args.runtime)
        traced = subprocess.run([args.cli, "run", f"--json={json_path}", "--",
                                 args.memtrack_program, *extra_args],
                                capture_output=True, text=True, env=env, timeout=120)
        try:
            with open(json_path, encoding="utf-8") as f:
                document = json.load(f)
        except (OSError, ValueError) as e:
            problems.append(f"{extra_args}: no JSON report ({e}); stderr:\n{traced.stderr}")
            return
    label = " ".join([os.path.basename(args.memtrack_program), *extra_args, extra_options])
    reports = lsan_reports(lsan.stderr)
    expected = reports[-1] if reports else {}
    got = memtrack_sites(document["processes"][0])
    if got != expected:
        problems.append(f"{label}: leak sites differ\n  LeakSanitizer:\n{describe(expected)}\n"
                        f"  memtrack:\n{describe(got)}\n--- LSan stderr ---\n{lsan.stderr}")
    if lsan.returncode != traced.returncode:
        problems.append(f"{label}: exit status {traced.returncode} under memtrack, "
                        f"{lsan.returncode} under LeakSanitizer\n{traced.stderr}")
    checks = document.get("checks", [])
    if len(reports) > 1:
        if len(checks) != 1 or memtrack_sites(checks[0]) != reports[0]:
            problems.append(f"{label}: the recoverable check differs from LSan's first report")
        if "recoverable check: 1" not in traced.stdout:
            problems.append(f"{label}: __lsan_do_recoverable_leak_check did not return 1 "
                            f"(stdout {traced.stdout!r})")
    print(f"{label}: LeakSanitizer exit {lsan.returncode}, memtrack exit {traced.returncode}")
    print(describe(got))


def main():
    parser = argparse.ArgumentParser()
    for name in ("--cli", "--runtime", "--memtrack-program", "--lsan-program"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    problems = []
    compare(args, [], problems)
    if os.path.basename(args.memtrack_program).endswith("lsan_interface"):
        compare(args, ["recoverable"], problems)
        compare(args, [], problems, ":use_globals=0")
    if problems:
        print("FAIL\n" + "\n".join(problems))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
