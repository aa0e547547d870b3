"""Result files (docs/format.md): --keep-results=DIR keeps memtrack.PID.mtr, `memtrack
report FILE...` renders them again; a truncated, corrupt or foreign file is one
"memtrack: error: PATH: ..." line and exit status 125, and the good files given in the same
call are still reported."""

import os
import re
import struct

from cli_harness import cli_test, text_by_pid

SECTION_PROCESS = 1


def keep_results(ctx):
    """Runs cli_fork_exec (exec'ing cli_leak_one) with --keep-results and --json:
    (run, results directory, JSON report, {pid: result file})."""
    results = ctx.path("results")
    json_path = ctx.path("run.json")
    run = ctx.memtrack("run", f"--keep-results={results}", f"--json={json_path}",
                       ctx.program("fork_exec"), ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "memtrack run: exit status", run)
    report = ctx.read_json(json_path, run)
    pids = [p["pid"] for p in report["processes"]]
    ctx.require_eq(len(pids), 2, "memtrack run: number of processes", run)
    files = {pid: os.path.join(results, f"memtrack.{pid}.mtr") for pid in pids}
    ctx.require_eq(sorted(os.listdir(results)), sorted(os.path.basename(f) for f in files.values()),
                   "result files kept", run)
    return run, results, report, files


def by_pid(report):
    return {p["pid"]: p for p in report["processes"]}


@cli_test
def test_keep_results(ctx):
    run, results, report, files = keep_results(ctx)
    ctx.expect_eq(os.listdir(ctx.tmpdir), [], "$TMPDIR after memtrack run (no temporary "
                  "result directory may remain)", run)
    again = ctx.memtrack("report", *sorted(files.values()))
    ctx.expect_run(again, exit=0, stdout="", what="memtrack report")
    # The same text per process (memtrack report lists them by pid; run, the program first).
    ctx.expect_eq(text_by_pid(again.stderr), text_by_pid(run.stderr),
                  "memtrack report's text vs memtrack run's, per pid", again)
    leaky = ctx.memtrack("report", "--error-exitcode=9", *files.values())
    ctx.expect_eq(leaky.exit, 9, "memtrack report --error-exitcode=9: exit status", leaky)


@cli_test
def test_report_json(ctx):
    run, results, report, files = keep_results(ctx)
    json_path = ctx.path("report.json")
    again = ctx.memtrack("report", f"--json={json_path}", *files.values())
    ctx.expect_run(again, exit=0, stdout="", what="memtrack report --json=FILE")
    ctx.expect_eq(by_pid(ctx.read_json(json_path, again)), by_pid(report),
                  "memtrack report's JSON vs memtrack run's, per pid", again)
    to_stdout = ctx.memtrack("report", "--json=-", *files.values())
    ctx.expect_eq(to_stdout.exit, 0, "memtrack report --json=-: exit status", to_stdout)
    with open(json_path, encoding="utf-8") as f:
        ctx.expect_eq(to_stdout.stdout, f.read(), "memtrack report --json=- vs --json=FILE",
                      to_stdout)


def good_report(ctx, files):
    """memtrack report's stderr for the good files alone."""
    run = ctx.memtrack("report", *files)
    ctx.require_eq(run.exit, 0, "memtrack report of the good files: exit status", run)
    return run.stderr


def check_bad_file(ctx, bad, message, good_files):
    """`memtrack report BAD GOOD...`: one error line for BAD, then the good files' report."""
    run = ctx.memtrack("report", bad, *good_files)
    ctx.expect_run(run, exit=125, stdout="",
                   stderr=f"memtrack: error: {bad}: {message}\n" + good_report(ctx, good_files),
                   what=f"memtrack report {os.path.basename(bad)} GOOD...")
    alone = ctx.memtrack("report", bad)
    ctx.expect_error(alone, 125, f"{bad}: {message}",
                     what=f"memtrack report {os.path.basename(bad)}")


@cli_test
def test_report_truncated(ctx):
    run, results, report, files = keep_results(ctx)
    parent, child = files.values()
    truncated = ctx.path("truncated.mtr")
    with open(parent, "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    bad = ctx.memtrack("report", truncated)
    # Where the cut falls decides the detail ("modules section is cut off", "no end marker").
    message = bad.stderr.removeprefix(f"memtrack: error: {truncated}: ").rstrip("\n")
    ctx.expect(message.startswith("truncated result file ("), "expected 'truncated result "
               "file (...)'", bad)
    check_bad_file(ctx, truncated, message, [child])


def process_section_payload(data):
    """(offset, size) of the process section's payload in a result file."""
    pos = 16  # magic[8], version, header_size
    while pos + 16 <= len(data):
        section_type, _, size = struct.unpack_from("<IIQ", data, pos)
        if section_type == SECTION_PROCESS:
            return pos + 16, size
        pos += 16 + size
    raise ValueError("no process section")


@cli_test
def test_report_checksum(ctx):
    """One flipped bit in the command line (a field no other check covers)."""
    run, results, report, files = keep_results(ctx)
    parent, child = files.values()
    with open(parent, "rb") as f:
        data = bytearray(f.read())
    payload, _ = process_section_payload(data)
    command_size = struct.unpack_from("<I", data, payload + 16)[0]
    ctx.require(command_size > 0, "empty command in the process section")
    data[payload + 20] ^= 0x01  # first byte of the command
    corrupt = ctx.path("corrupt.mtr")
    with open(corrupt, "wb") as f:
        f.write(data)
    check_bad_file(ctx, corrupt, "corrupt result file (checksum mismatch)", [child])


@cli_test
def test_report_not_result_files(ctx):
    run, results, report, files = keep_results(ctx)
    parent, child = files.values()
    empty = ctx.write("empty.mtr", "")
    text = ctx.write("text.mtr", "this is not a result file\n" * 4)
    for bad in (empty, text):
        check_bad_file(ctx, bad, "not a memtrack result file", [parent, child])
    # Several bad files: one line each, in order, then the good one.
    both = ctx.memtrack("report", empty, child, text)
    ctx.expect_run(both, exit=125, stdout="", stderr=(
        f"memtrack: error: {empty}: not a memtrack result file\n"
        f"memtrack: error: {text}: not a memtrack result file\n" + good_report(ctx, [child])),
        what="memtrack report EMPTY GOOD TEXT")
    missing = ctx.path("missing.mtr")
    run = ctx.memtrack("report", missing)
    ctx.expect_error(run, 125, f"{missing}: cannot open result file: No such file or directory")


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return h


def with_pids(data, pid, ppid):
    """A result file's bytes with the process section's pid and ppid replaced (and the
    checksum of the end section, the file's last 8 bytes, recomputed)."""
    data = bytearray(data)
    payload, _ = process_section_payload(data)
    struct.pack_into("<II", data, payload, pid, ppid)
    struct.pack_into("<Q", data, len(data) - 8, fnv1a64(data[:len(data) - 24]))
    return data


@cli_test
def test_report_dir_after_pid_wrap(ctx):
    """memtrack report DIR after the pids wrapped around: the parent (40000) is listed before
    its child (300, exec'd cli_leak_one), and a grandchild without a result file (200, only
    its start marker) after the child, though their pids are lower."""
    run, results, report, files = keep_results(ctx)
    parent, child = files.values()
    wrapped = ctx.mkdir("wrapped")
    for path, pid, ppid in ((parent, 40000, 4000), (child, 300, 40000)):
        with open(path, "rb") as f:
            data = with_pids(f.read(), pid, ppid)
        with open(os.path.join(wrapped, f"memtrack.{pid}.mtr"), "wb") as f:
            f.write(data)
    ctx.write("wrapped/memtrack.200.started", "300\n/bin/grandchild\0")
    again = ctx.memtrack("report", wrapped)
    listed = []
    for line in again.stderr.splitlines():
        m = re.match(r"==(\d+)== ", line)
        if m and int(m.group(1)) not in listed:
            listed.append(int(m.group(1)))
    ctx.expect_eq(listed, [40000, 300, 200], "processes in the order they started", again)
