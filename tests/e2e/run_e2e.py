#!/usr/bin/env python3
"""Runs one end-to-end test program under libmemtrack.so and checks its leak report(s)
against the expectations written in the program's source. Standard library only.

Usage: run_e2e.py --runtime libmemtrack.so --program ./prog --source prog.c
                  [--plain-program ./prog-dynamic]
                  [--cli path/to/memtrack [--emulator "qemu-aarch64 -L ROOT" [--emulated-cli]]
                   | --cli path/to/memtrack --sample SIZE]
                  [--keep-temp]

Three modes check the same directives:
  text (default)  The program runs with LD_PRELOAD=libmemtrack.so; the runtime's own text
                  report on stderr is parsed (memtrack_report.py). It has function names but
                  no source lines and no inlined frames.
  CLI (--cli)     The program runs as `memtrack run --json=%t/report.json -- PROG`, with
                  MEMTRACK_OPTIONS from RUN-OPTIONS in the environment (the CLI adds its own
                  after them) and MEMTRACK_RUNTIME set to --runtime; the JSON report is
                  checked. Its frames have file and line (so @markers are checked, see
                  EXPECT-GROUP) and inlined calls are frames of their own. The first process
                  in the JSON is the started program ("main"); the others are labelled in
                  the order the JSON lists them.
  emulated (--emulator with --cli)  The program and runtime were built for another
                  architecture: the program runs under the emulator (qemu-user) with the
                  runtime preloaded and result_dir set, and the host's `memtrack report
                  --json` reads its result files; the JSON is checked as in CLI mode
                  (e2e_emulated.py). --runtime linked: the program carries the runtime.
                  --emulated-cli: memtrack was built for the target too, and its `memtrack
                  report` runs under the emulator (a native reading on the target).
  sampled (--sample SIZE with --cli)  The CLI mode twice: in the full mode, then with
                  `--sample=SIZE --sample-seed=1` (docs/sampling.md). Both runs are checked
                  as in CLI mode, except that the sampled run ignores EXPECT-GROUP, -GROUPS and
                  -FRAMES (its groups are estimates by site); and every process's exact totals
                  in the JSON summary (leaked, definite, indirect, possible, reachable,
                  suppressed: bytes and blocks) must be equal in the two runs.

Every run also checks, without being asked: the runtime printed no "memtrack[pid]:"
diagnostic; stdout, the program's own stderr and the exit status equal a plain run without
memtrack; no two reports share a pid, and the started process has one. Text mode: each
report is well formed and agrees with itself (frames numbered #0.., groups add up to the
LEAK SUMMARY) and carries the started process's pid. CLI mode: the JSON has every field
docs/json-schema.md lists, with its type and in its order (json_schema.py reads the table),
and only those; the first process is a child of the CLI running PROG; leaks and suppressed
groups add up to the summary, are sorted largest first and are all of kind "unclassified";
an inlined frame carries the address of the frame after it; every JSON process has a text
report on stderr and the CLI printed no "memtrack: ..." message of its own.

Directives are `//` comment lines in the source, `// KEY: VALUE`:

  RUN-OPTIONS: a=1:b=2       MEMTRACK_OPTIONS for the run; several lines are joined with ':'.
                             %t stands for the test's own temporary directory.
  PLAIN-COMPARE: stdout exit What must equal the plain run: any of stdout, stderr, exit, or
                             "none". Default: stdout stderr exit.
  CLI: skip REASON           The case cannot run through the CLI: CLI mode skips it (exit
                             status 77) and CMakeLists.txt registers no cli.<name> test.
  EXPECT-EXIT: N             Exit status under the runtime (CLI mode: of the CLI, which passes
                             the program's on; and the JSON exit code of the program). Default 0.
  EXPECT-REPORTS: N          Number of process reports (default 1).
  EXPECT-REPORT-FILE: NAME   Reports go to %t/NAME, %p in NAME standing for the pid (and
                             matching the pid of the report inside); none may reach stderr.
                             Text mode only: the CLI writes the reports itself.
  EXPECT-DIAGNOSTIC: TEXT    The runtime prints exactly one "memtrack[pid]:" line containing
                             TEXT. Several lines may be given; any other diagnostic fails.

Any EXPECT-... directive written CLI-EXPECT-... or TEXT-EXPECT-... applies in that mode only
(it is still parsed in all, so mistakes fail either way), e.g. a group whose inlined frame
only the CLI can see: `// CLI-EXPECT-GROUP: 8 bytes in 1 block | inner@alloc outer@call`.
The emulated mode keeps the CLI-EXPECT lines and its own EMULATED-EXPECT-... ones.

Report expectations apply to every report; written EXPECT-PROCESS-<KEY>: LABEL VALUE they
apply to one process only, and override the general one for that process. LABEL is `main`
(the process the runner started) or `child`, `child2`, `child3`, ... (the other reports, in
the order they began). Example: `// EXPECT-PROCESS-LEAKED: child 300 bytes in 1 block`.

  EXPECT-HOW: _exit with status 3   How the process ended, as in the header (default "exit").
                             CLI mode: "exit" is a JSON exit {"code": N} (no "how", or
                             "how": "exit"); "_exit with status 3" and "_Exit with status 3"
                             are {"code": 3, "how": "_exit"}.
  EXPECT-LEAKED: B bytes in N blocks  The LEAK SUMMARY totals, exactly (CLI mode: the
                             summary's leaked_bytes and leaked_blocks).
  EXPECT-GROUPS: N           Number of groups shown (CLI mode: of `leaks`).
  EXPECT-FRAMES: N           Every shown group has exactly N frames up to and including main,
                             or N frames in all if main is not among them. (The text report
                             stops at main; the JSON goes on below it.)
  EXPECT-RESOURCES: N        Number of descriptors reported open at exit (CLI mode: elements of
                             `resources`). Default: the number of EXPECT-RESOURCE lines, so a
                             program that expects none gets none.
  EXPECT-RESOURCE: PATTERN | f g@open
                             A descriptor open at exit, as the reports print it after "fd N: "
                             (`file /tmp/x, open(O_WRONLY|O_CREAT)`, `file %t/y, fopen("w")`,
                             `socket TCP 127.0.0.1:* -> 127.0.0.1:*, accept(O_RDWR)`), matched
                             as a glob (`*`, `?`, `[...]`), and the stack of its site named as in
                             EXPECT-GROUP after " | ". Each line must match a different
                             descriptor.
  EXPECT-NOTE: TEXT          An indented line after the LEAK SUMMARY contains TEXT
                             (e.g. "untracked: 2 allocations"). CLI mode: a line of the
                             process's text report, which the CLI prints on stderr.
  EXPECT-GROUP: B bytes in N blocks | f g@alloc h@call
                             A shown group with exactly these numbers whose frames name the
                             functions f, g, h in this order, not necessarily adjacent (frames
                             below main, present in CLI mode, may follow). `f*3` stands for
                             f f f; `!f` means no frame is f. Each EXPECT-GROUP must match a
                             different group. Names match without gcc clone suffixes
                             (.constprop.0), parameter lists or namespaces.
                             `g@alloc`: in CLI mode the frame of g must also be in this source
                             file (same absolute path or same base name) at the line whose
                             comment is `// @alloc` (columns are not checked). A line may carry
                             several markers (`// @alloc @call`); each name is unique in the
                             file. `g@alloc[inlined]` also requires the frame to be marked
                             inlined. Text mode checks only the name.
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_case  # noqa: E402
import e2e_cli  # noqa: E402
import e2e_emulated  # noqa: E402
import memtrack_report  # noqa: E402

SKIPPED = 77  # exit status of a case that does not run in this mode (ctest SKIP_RETURN_CODE)


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


def check_text(case, args, temp_dir):
    """Returns (failures, the traced CompletedProcess, extra text to show on failure)."""
    program = os.path.abspath(args.program)
    env = e2e_case.plain_environment()
    plain, _ = e2e_case.run([os.path.abspath(args.plain_program or program)], env, temp_dir)
    env["LD_PRELOAD"] = os.path.abspath(args.runtime)
    if case.options:
        env["MEMTRACK_OPTIONS"] = ":".join(case.options)
    traced, main_pid = e2e_case.run([program], env, temp_dir)

    failures = []
    output = memtrack_report.parse(traced.stderr)
    if case.report_file:
        if output.reports:
            failures.append("report written to stderr although log_file is set")
        file_output = read_report_files(case, temp_dir, failures)
        output.reports, output.errors = file_output.reports, output.errors + file_output.errors
    failures += output.errors
    e2e_case.check_diagnostics(case, output.diagnostics, failures)
    e2e_case.check_exit(case, traced, failures)
    e2e_case.compare_plain(case, plain, traced, output.other, failures)
    e2e_case.check_processes(case, output.reports, main_pid, failures)
    extra = "".join(f"--- report of pid {r.pid} from its log file ---\n" + "\n".join(r.lines)
                    + "\n" for r in output.reports) if case.report_file else ""
    return failures, traced, extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runtime", required=True, help="path of libmemtrack.so")
    parser.add_argument("--program", required=True, help="the test program")
    parser.add_argument("--source", required=True, help="its source, holding the directives")
    parser.add_argument("--plain-program", metavar="PROG",
                        help="the program for the plain run (default: --program); the "
                        "dynamic build, when --program carries the runtime linked in")
    parser.add_argument("--cli", metavar="MEMTRACK",
                        help="run through this memtrack executable (CLI mode)")
    parser.add_argument("--emulator", metavar="COMMAND",
                        help="run the program under this emulator; --cli reads its results")
    parser.add_argument("--emulated-cli", action="store_true",
                        help="--cli is built for the emulated target too: its `memtrack "
                        "report` runs under the emulator")
    parser.add_argument("--sample", metavar="SIZE",
                        help="with --cli: run in the sampled mode too, and check that its "
                        "totals equal the full mode's (groups are not checked: estimates)")
    parser.add_argument("--keep-temp", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    name = os.path.basename(args.source)
    temp_dir = tempfile.mkdtemp(prefix="memtrack-e2e-")
    try:
        case_mode = "emulated" if args.emulator and args.cli else "cli" if args.cli else "text"
        case = e2e_case.Case(args.source, temp_dir, case_mode)
        if args.cli and case.cli_skip:
            print(f"SKIP {name} under the CLI: {case.cli_skip}")
            return SKIPPED
        check = e2e_cli.check_cli if args.cli else check_text
        if args.sample:
            if not args.cli:
                parser.error("--sample needs --cli")
            check = e2e_cli.check_sampled
        if args.emulator:
            if not args.cli:
                parser.error("--emulator needs --cli (the host memtrack that reads the results)")
            check = e2e_emulated.check_emulated
        try:
            failures, traced, extra = check(case, args, temp_dir)[:3]
        except e2e_emulated.EmulatorCannotRun as e:
            print(f"SKIP {name} (emulated): {e}")
            return SKIPPED
    finally:
        if args.keep_temp:
            print(f"temporary directory kept: {temp_dir}")
        else:
            shutil.rmtree(temp_dir, ignore_errors=True)
    mode = (" (emulated)" if args.emulator else " (sampled)" if args.sample
            else " (CLI)" if args.cli else "")
    if not failures:
        print(f"PASS {name}{mode}")
        return 0
    print(f"FAIL {name}{mode}: {len(failures)} problem(s)")
    for failure in failures:
        print("  - " + failure.replace("\n", "\n    "))
    print(f"--- stdout under memtrack (exit {traced.returncode}) ---\n{traced.stdout}", end="")
    print("--- stderr under memtrack ---\n" + traced.stderr, end="")
    print(extra, end="")
    return 1


if __name__ == "__main__":
    sys.exit(main())
