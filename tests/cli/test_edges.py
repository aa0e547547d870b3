"""Trust at the edges (docs/cli.md, "Processes without leak data" and "Where the report
goes"): programs memtrack cannot track are refused before they run, every process without
leak data is listed with its reason and fails --error-exitcode, output paths are checked
first, daemons are waited for or listed, and no temporary directory survives memtrack."""

import os
import re
import shutil
import signal
import stat
import subprocess
import time

from cli_harness import TIMEOUT_SECONDS, Failure, Run, cli_test, exit_status, leak_groups


def run_json(ctx, *args, env=None):
    """memtrack run --json=report.json ARGS...: (run, the JSON processes or None)."""
    json_path = ctx.path("report.json")
    if os.path.exists(json_path):
        os.unlink(json_path)
    run = ctx.memtrack("run", f"--json={json_path}", *args, env=env)
    processes = ctx.read_json(json_path, run)["processes"] if os.path.exists(json_path) else None
    return run, processes


def expect_no_temp_dir(ctx, run, what):
    ctx.expect_eq(os.listdir(ctx.tmpdir), [], f"$TMPDIR after {what} (no temporary result "
                  "directory may remain)", run)


def no_data_lines(stderr, pid):
    return [line for line in stderr.splitlines() if line.startswith(f"=={pid}==")]


@cli_test
def test_edge_static_refused(ctx):
    """A static program: LD_PRELOAD cannot reach it. memtrack refuses it before running, in
    one line that says what to do; --error-for-no-data=no runs it with that line as a
    warning and lists it without leak data, which then does not fail --error-exitcode."""
    program = ctx.program("static_no_leak")
    reason = (f"{program} is statically linked: LD_PRELOAD cannot reach it, so memtrack would "
              "see nothing; run a dynamically linked build, or link the runtime in: gcc -static "
              "... $(memtrack link-flags)")
    run = ctx.memtrack("run", "--error-exitcode=9", program, "3")
    ctx.expect_error(run, 125, reason + " (--error-for-no-data=no runs it anyway)")
    expect_no_temp_dir(ctx, run, "a refused program")
    run, processes = run_json(ctx, "--error-exitcode=9", "--error-for-no-data=no", program, "3")
    ctx.expect_eq(run.exit, 3, "exit status (the program's: no data accepted)", run)
    ctx.expect(run.stderr.startswith(f"memtrack: warning: {reason}\n"), "warning first", run)
    ctx.require(processes, "no JSON report", run)
    ctx.expect_eq((processes[0]["no_data"], processes[0]["exit"]), ("not_trackable", {"code": 3}),
                  "JSON no_data and exit", run)


@cli_test
def test_edge_setuid_refused(ctx):
    """A set-user-ID program owned by another user: the kernel sets AT_SECURE and the loader
    drops LD_PRELOAD paths with a '/'. Needs root to give the copy to another owner (as root,
    a set-user-ID root program changes no id and is tracked)."""
    if os.geteuid() != 0:
        print("skipped: needs root to make a set-user-ID copy owned by another user")
        return
    copy = ctx.path("leak_one_setuid")
    shutil.copy(ctx.program("leak_one"), copy)
    os.chown(copy, 65534, 65534)
    os.chmod(copy, 0o4755)
    if os.statvfs(copy).f_flag & os.ST_NOSUID:
        print("skipped: the test directory is on a nosuid mount")
        return
    os.chmod(ctx.tmp, 0o755)
    run = ctx.memtrack("run", copy)
    ctx.expect_error(run, 125, f"{copy} is set-user-ID (uid 65534): the loader ignores "
                     f"LD_PRELOAD for it, so memtrack would see nothing; run a copy without "
                     f"that bit (cp {copy} copy; chmod u-s,g-s copy) or run memtrack as that "
                     "user, or link the runtime in: gcc -static ... $(memtrack link-flags) "
                     "(--error-for-no-data=no runs it anyway)")
    # What the check predicts is what the loader does: run anyway, no result file.
    run, processes = run_json(ctx, "--error-exitcode=9", "--error-for-no-data=no", copy)
    ctx.require(processes, "no JSON report", run)
    ctx.expect_eq(processes[0]["no_data"], "not_trackable", "JSON no_data", run)
    # As root, a set-user-ID root copy is tracked.
    os.chown(copy, 0, 0)
    os.chmod(copy, 0o4755)
    run, processes = run_json(ctx, copy)
    ctx.expect(processes and leak_groups(processes[0]) == [(100, 1, "make_leak")],
               "a set-user-ID root program run by root is tracked", run)


@cli_test
def test_edge_env_cleared_child(ctx):
    """A child exec'd with an empty environment: either the runtime follows it (a report) or
    it is listed without leak data with the reason; never silence. No data fails
    --error-exitcode."""
    child = [ctx.program("exec_empty_env"), ctx.program("no_leak")]
    run, processes = run_json(ctx, "--error-exitcode=9", "--errors-for-leak-kinds=none",
                              ctx.program("fork_exec"), *child)
    ctx.require(processes and len(processes) == 2, "two processes expected", run)
    parent, exec_child = processes
    ctx.expect_eq(exec_child["ppid"], parent["pid"], "child's ppid", run)
    if "no_data" in exec_child:
        ctx.expect_eq(exec_child["no_data"], "no_result_file", "child's no_data", run)
        lines = no_data_lines(run.stderr, exec_child["pid"])
        ctx.expect(len(lines) == 2 and lines[0].endswith(": no leak data") and
                   "it exec'd a program LD_PRELOAD cannot reach" in lines[1],
                   "the child's two text lines (no leak data, note with the reason)", run)
        ctx.expect_eq(run.exit, 9, "exit status (no data is an error)", run)
    else:
        ctx.expect_eq(exec_child["command"], [ctx.program("no_leak")], "child's command", run)
        ctx.expect_eq(run.exit, 0, "exit status (everything tracked)", run)


@cli_test
def test_edge_report_at_exit_off(ctx):
    """MEMTRACK_OPTIONS=report_at_exit=0: a warning before the run, the reason in the
    report, and --error-exitcode applies."""
    env = ctx.env(MEMTRACK_OPTIONS="report_at_exit=0")
    run, processes = run_json(ctx, "--error-exitcode=9", ctx.program("no_leak"), env=env)
    ctx.expect_eq(run.exit, 9, "exit status", run)
    ctx.expect(run.stderr.startswith(
        "memtrack: warning: MEMTRACK_OPTIONS sets report_at_exit=0: the program will write no "
        "leak report (remove report_at_exit=0 to get one)\n"), "the warning comes first", run)
    ctx.require(processes, "no JSON report", run)
    ctx.expect_eq(processes[0]["no_data"], "report_at_exit_off", "JSON no_data", run)
    ctx.expect_eq(processes[0]["notes"],
                  ["no leak data: MEMTRACK_OPTIONS sets report_at_exit=0, so it wrote no report"],
                  "JSON notes", run)


@cli_test
def test_edge_unwritable_outputs(ctx):
    """--log-file, --json and --live-json are checked before the program runs (show_env
    prints its environment: nothing on stdout means it did not run)."""
    for option, name in (("--log-file", "x.txt"), ("--json", "x.json"), ("--live-json", "x")):
        path = f"/nonexistent/{name}"
        extra = ["--expire=1s"] if option == "--live-json" else []
        run = ctx.memtrack("run", f"{option}={path}", *extra, ctx.program("show_env"))
        ctx.expect_error(run, 125, f"cannot write {option}={path}: No such file or directory",
                         what=option)
    run = ctx.memtrack("run", "--log-file=/nonexistent/%p.txt", ctx.program("show_env"))
    ctx.expect_error(run, 125, "cannot write --log-file=/nonexistent/%p.txt: directory "
                     "/nonexistent: No such file or directory", what="--log-file with %p")
    expect_no_temp_dir(ctx, run, "a refused output path")


@cli_test
def test_edge_report_falls_back_to_stderr(ctx):
    """A log file that fails while the report is written (/dev/full): one line saying why,
    then the report on stderr; the exit status is 125 (the report was not written where it
    was asked for, so a CI job must not pass on it), and the same for the JSON report."""
    run = ctx.memtrack("run", "--log-file=/dev/full", ctx.program("leak_one"), "3")
    ctx.expect_eq(run.exit, 125, "exit status", run)
    lines = run.stderr.splitlines()
    ctx.expect(lines and lines[0] == "memtrack: error: cannot write the log file /dev/full: No "
               "space left on device; the log file follows on stderr", "the first line", run)
    ctx.expect("   definitely lost: 100 bytes in 1 block" in [re.sub(r"^==\d+== ?", "", line)
                                                             for line in lines],
               "the report on stderr", run)
    run = ctx.memtrack("run", "--json=/dev/full", ctx.program("leak_one"), "3")
    ctx.expect_eq(run.exit, 125, "exit status with --json=/dev/full", run)
    ctx.expect("memtrack: error: cannot write the JSON report /dev/full: No space left on "
               "device; the JSON report follows on stderr" in run.stderr.splitlines(),
               "the line for the JSON report", run)
    ctx.expect('"definite_bytes": 100' in run.stderr, "the JSON report on stderr", run)
    stdout_full = ["sh", "-c", f"exec '{ctx.paths.memtrack}' run --json=- "
                   f"'{ctx.program('leak_one')}' >/dev/full"]
    run = ctx.run(stdout_full)
    ctx.expect_eq(run.exit, 125, "exit status with --json=- on a full stdout", run)
    ctx.expect("memtrack: error: cannot write the JSON report to stdout" in
               run.stderr.splitlines(), "the line for stdout", run)


@cli_test
def test_edge_binary_output_falls_back_to_a_temp_file(ctx):
    """A pprof profile or an HTML page that fails at the end goes to a file in TMPDIR named in
    one line, not to stderr as bytes a terminal cannot show; the exit status is 125."""
    run = ctx.memtrack("run", "--pprof=/dev/full", "--html=/dev/full", ctx.program("leak_one"), "3")
    ctx.expect_eq(run.exit, 125, "exit status", run)
    for what, tag, magic in (("pprof profile", "pprof", b"\x1f\x8b"),
                             ("HTML report", "html", b"<!DOCTYPE html>")):
        instead = os.path.join(ctx.tmpdir, f"memtrack-{run.pid}-{tag}-full")
        line = (f"memtrack: error: cannot write the {what} /dev/full: No space left on device; "
                f"it was written to {instead} instead")
        ctx.expect(line in run.stderr.splitlines(), f"the line for the {what}", run)
        ctx.expect(os.path.exists(instead), f"{instead} exists", run)
        if os.path.exists(instead):
            with open(instead, "rb") as f:
                ctx.expect(f.read(len(magic)) == magic, f"{instead} starts with {magic!r}", run)
    ctx.expect("\x1f" not in run.stderr, "no binary data on stderr", run)


@cli_test
def test_edge_log_file_stdout(ctx):
    """--log-file=- is stdout, as --json=- is; both at once is an error."""
    run = ctx.memtrack("run", "--log-file=-", ctx.program("leak_one"))
    ctx.expect_eq((run.exit, run.stderr), (0, ""), "exit status and stderr", run)
    ctx.expect("definitely lost: 100 bytes in 1 block" in run.stdout, "report on stdout", run)
    ctx.expect(not os.path.exists(ctx.path("-")), "no file named '-'", run)
    run = ctx.memtrack("run", "--log-file=-", "--json=-", ctx.program("leak_one"))
    ctx.expect_error(run, 125, "--log-file=- and --json=- cannot both write to stdout")


@cli_test
def test_edge_sigpipe_no_temp_dir(ctx):
    """memtrack run ... 2>&1 | head -1: memtrack's writes fail with EPIPE, it still removes
    its temporary directory."""
    command = f"'{ctx.paths.memtrack}' run '{ctx.program('leak_one')}' 2>&1 | head -1"
    process = subprocess.run(["sh", "-c", command], env=ctx.env(), cwd=ctx.tmp,
                             capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    run = Run(["sh", "-c", command], 0, process.returncode, process.stdout, process.stderr)
    ctx.expect_eq(len(run.stdout.splitlines()), 1, "lines through head -1", run)
    expect_no_temp_dir(ctx, run, "SIGPIPE")


def start_daemonize(ctx, ms, *options):
    """memtrack run OPTIONS cli_daemonize MS, until the daemon printed its pid: (process,
    argv, daemon pid)."""
    argv = [ctx.paths.memtrack, "run", *options, ctx.program("daemonize"), str(ms)]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True)
    line = process.stdout.readline()
    m = re.fullmatch(r"daemon (\d+)\n", line)
    if not m:
        process.kill()
        process.communicate()
        raise Failure(f"cli_daemonize printed {line!r}, not its pid")
    return process, argv, int(m.group(1))


def finish(process, argv, daemon=None):
    """Waits for memtrack, then (the daemon holds memtrack's stdout open) kills `daemon`."""
    try:
        process.wait(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    if daemon is not None:
        kill_quietly(daemon)
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise Failure(f"timed out: {' '.join(argv)}")
    return Run(argv, process.pid, exit_status(process.returncode), stdout, stderr)


def kill_quietly(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@cli_test
def test_edge_signals_no_temp_dir(ctx):
    """SIGINT or SIGTERM to memtrack while it waits for a daemon: it removes its temporary
    directory and ends by that signal."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        process, argv, daemon = start_daemonize(ctx, 20000, "--wait-children=60s")
        time.sleep(0.5)  # the program has ended: memtrack waits for the daemon
        process.send_signal(sig)
        run = finish(process, argv, daemon)
        ctx.expect_eq(run.exit, 128 + sig, f"exit status after {sig.name}", run)
        expect_no_temp_dir(ctx, run, sig.name)


@cli_test
def test_edge_stale_temp_dir_removed(ctx):
    """A memtrack killed by SIGKILL cannot clean up; the next run removes its directory
    (its owner file names a process that is gone) and leaves other directories alone."""
    process, argv, daemon = start_daemonize(ctx, 20000, "--wait-children=60s")
    process.kill()
    finish(process, argv, daemon)
    stale = os.listdir(ctx.tmpdir)
    ctx.require_eq(len(stale), 1, "directories after SIGKILL")
    foreign = ctx.mkdir("tmpdir", "memtrack.keepme")
    run = ctx.memtrack("run", ctx.program("no_leak"))
    ctx.expect_eq(run.exit, 0, "exit status", run)
    ctx.expect_eq(os.listdir(ctx.tmpdir), [os.path.basename(foreign)],
                  "$TMPDIR: the stale directory removed, the other kept", run)


@cli_test
def test_edge_daemon_reported(ctx):
    """A daemon (double fork, setsid) is memtrack's child (subreaper): memtrack waits for it
    and reports its leak."""
    run, processes = run_json(ctx, "--error-exitcode=9", ctx.program("daemonize"), "300")
    ctx.require(processes and len(processes) == 3, "three processes expected", run)
    daemon = processes[2]
    ctx.expect_eq(leak_groups(daemon), [(64, 1, "daemon_leak")], "the daemon's leaks", run)
    ctx.expect_eq(run.exit, 9, "exit status", run)
    expect_no_temp_dir(ctx, run, "the run")


@cli_test
def test_edge_daemon_still_running(ctx):
    """--wait-children=0: the daemon is listed as still running, with where its report will
    go; the directory is kept, and memtrack report DIR renders it once it has ended."""
    process, argv, daemon = start_daemonize(ctx, 1500, "--wait-children=0")
    run = finish(process, argv)
    dirs = os.listdir(ctx.tmpdir)
    ctx.require_eq(len(dirs), 1, "the kept directory", run)
    kept = os.path.join(ctx.tmpdir, dirs[0])
    lines = no_data_lines(run.stderr, daemon)
    ctx.expect_eq(lines[1:], [
        f"=={daemon}==   note: no leak data yet: it is still running; its report will be "
        f"written to {kept}/memtrack.{daemon}.mtr when it ends (render it with: memtrack "
        f"report {kept})"], "the daemon's note", run)
    ctx.expect(lines and lines[0].endswith(" is running: no leak data"), "daemon's line", run)
    ctx.expect("cannot create result file" not in run.stderr, "no stray runtime error", run)
    deadline = time.monotonic() + 30
    result = os.path.join(kept, f"memtrack.{daemon}.mtr")
    while not os.path.exists(result) and time.monotonic() < deadline:
        time.sleep(0.05)
    later = ctx.memtrack("report", kept)
    ctx.expect_eq(later.exit, 0, "memtrack report DIR: exit status", later)
    ctx.expect("64 bytes in 1 block is definitely lost" in later.stderr,
               "memtrack report DIR shows the daemon's leak", later)
    shutil.rmtree(kept)


@cli_test
def test_edge_daemon_unscheduled_still_running(ctx):
    """--wait-children=0 and a daemon that has not run an instruction when the program ends
    (held stopped from its birth; its middle process exited as soon as fork returned): the
    daemon is listed as still running, with its parent and command line, from the start
    marker its parent wrote at fork."""
    program = ctx.program("daemon_unscheduled")
    argv = [ctx.paths.memtrack, "run", "--wait-children=0", program]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True)
    line = process.stdout.readline()
    m = re.fullmatch(r"daemon (\d+) parent (\d+)\n", line)
    daemon = int(m.group(1)) if m else None
    run = finish(process, argv, daemon)
    ctx.require(m is not None, f"cli_daemon_unscheduled printed {line!r}, not its daemon's pid "
                "(exit status 3: ptrace is not permitted here)", run)
    middle = int(m.group(2))
    lines = no_data_lines(run.stderr, daemon)
    ctx.expect_eq(lines[:1], [f"=={daemon}== memtrack: {program} (pid {daemon}, parent {middle}) "
                              "is running: no leak data"], "the daemon's line", run)
    for kept in os.listdir(ctx.tmpdir):
        shutil.rmtree(os.path.join(ctx.tmpdir, kept))


@cli_test
def test_edge_forked_child_killed(ctx):
    """A forked child that never exec'd and was killed by SIGKILL is listed in one line, and
    is no failure for --error-exitcode (nothing of its own was found lost; memcheck reports
    nothing for it either); JUnit skips it."""
    junit = ctx.path("report.xml")
    run, processes = run_json(ctx, "--error-exitcode=9", f"--junit={junit}",
                              ctx.program("fork_kill"))
    ctx.require(processes and len(processes) == 2, "two processes expected", run)
    child = processes[1]
    ctx.expect_eq(child["no_data"], "forked_copy", "child's no_data", run)
    ctx.expect_eq(child["notes"], [
        f"no leak data: a fork of process {processes[0]['pid']} that never exec'd ended "
        "without its report (killed by SIGKILL, as debuggers kill their probes); not counted "
        "as a failure"], "child's notes", run)
    ctx.expect_eq(run.exit, 0, "exit status (a forked copy is no failure)", run)
    lines = [line for line in run.stderr.splitlines() if line.startswith(f"=={child['pid']}==")]
    ctx.expect_eq(len(lines), 1, "the child's one line", run)
    with open(junit, encoding="utf-8") as f:
        xml = f.read()
    ctx.expect('errors="0"' in xml and 'skipped="1"' in xml and "<skipped " in xml,
               "JUnit: skipped, not an error", run)


@cli_test
def test_edge_untrackable_child_every_way(ctx):
    """A child that runs a static program is listed without leak data, named by its own
    command line, and fails --error-exitcode, however it was started: fork and exec,
    posix_spawn, system(), a shell's child."""
    static = ctx.program("static_no_leak")
    for how in ("fork", "spawn", "system", "shell"):
        run, processes = run_json(ctx, "--error-exitcode=9", ctx.program("start_child"), how,
                                  static)
        listed = [p for p in processes or [] if p.get("command", [None])[0] == static]
        ctx.expect_eq(len(listed), 1, f"{how}: the static child listed once", run)
        if listed:
            ctx.expect_eq(listed[0].get("no_data"), "not_trackable", f"{how}: its no_data", run)
            ctx.expect(any("is statically linked" in n for n in listed[0].get("notes", [])),
                       f"{how}: the note says it is static", run)
        ctx.expect_eq(run.exit, 9, f"{how}: exit status", run)


@cli_test
def test_edge_live_options_need_expire(ctx):
    for option in ("--report-interval=1s", "--live-json=live.jsonl"):
        name = option.split("=")[0]
        run = ctx.memtrack("run", option, ctx.program("no_leak"))
        ctx.expect_error(run, 125, f"{name} needs --expire (live mode is off without it)",
                         what=option)


@cli_test
def test_edge_messages(ctx):
    """Where a user obviously meant something else, the error says so."""
    run = ctx.memtrack("./prog", "a")
    ctx.expect_error(run, 125, "unknown command './prog' (to run a program under memtrack: "
                     "memtrack run [OPTIONS] [--] ./prog [ARGS...])")
    empty = ctx.mkdir("empty")
    run = ctx.memtrack("report", empty)
    ctx.expect_error(run, 125, f"{empty} is a directory without result files "
                     "(memtrack.PID.mtr)")
    run = ctx.memtrack("run", "--help")
    ctx.expect(run.stdout.splitlines()[1:2] == ["Usage: memtrack run [OPTIONS] [--] PROG "
                                                "[ARGS...]"], "run --help's usage line", run)
    ctx.expect("(1-255; 0 turns it off)" in run.stdout, "--error-exitcode's range", run)
    run = ctx.memtrack("run", "--error-exitcode=256", ctx.program("no_leak"))
    ctx.expect_error(run, 125, "--error-exitcode expects a number from 0 to 255, not '256'")


@cli_test
def test_edge_stripped_program(ctx):
    """A stripped program: its frames are addresses ('??'), the C library's start-up frames
    below its unnamed main are cut as below a named one, and the note says what is shown."""
    program = ctx.path("cli_leak_one")
    shutil.copy(ctx.program("leak_one"), program)
    subprocess.run(["strip", program], check=True)
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", program)
    ctx.require_eq(run.exit, 0, "exit status", run)
    lines = [line.split("== ", 1)[1] for line in run.stderr.splitlines() if "#" in line]
    ctx.expect(len(lines) == 2 and all(re.fullmatch(r"   #\d \?\? \(cli_leak_one\+0x[0-9a-f]+\)",
                                                    line) for line in lines),
               "two frames, make_leak and main, as module offsets", run)
    ctx.expect(f"note: no debug info for {program}: no symbols either (stripped): its frames "
               "show addresses only" in run.stderr, "the note says addresses", run)
