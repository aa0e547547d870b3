"""Signals sent to memtrack reach the program; the user's own LD_PRELOAD and MEMTRACK_OPTIONS
are kept (memtrack's runtime first in LD_PRELOAD, memtrack's options last, so they win)."""

import os
import re
import signal
import subprocess
import time

from cli_harness import TIMEOUT_SECONDS, Failure, Run, cli_test, exit_status, leak_groups


def wait_for_file(path, process, timeout=60):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if process.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@cli_test
def test_sigterm_forwarded(ctx):
    """SIGTERM to memtrack while cli_sleeper sleeps: the program dies by SIGTERM (after its
    runtime wrote the report), memtrack exits 143 and the report says so."""
    ready = ctx.path("ready")
    json_path = ctx.path("report.json")
    argv = [ctx.paths.memtrack, "run", f"--json={json_path}", ctx.program("sleeper"), ready]
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp,
                          text=True) as process:
        started = wait_for_file(ready, process)
        if started:
            process.send_signal(signal.SIGTERM)
        else:
            process.kill()
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            raise Failure("memtrack did not exit after SIGTERM: not forwarded?")
    run = Run(argv, process.pid, exit_status(process.returncode), stdout, stderr)
    ctx.require(started, "cli_sleeper never created its ready file", run)
    ctx.expect_run(run, exit=143, stdout="")
    ctx.expect(re.search(rf"^==\d+== memtrack( \S+)?: .*cli_sleeper {re.escape(ready)} "
                         rf"\(pid \d+, parent {run.pid}\) was killed by signal 15 \(SIGTERM\)$",
                         run.stderr, re.MULTILINE), "text: 'was killed by signal 15 (SIGTERM)'",
               run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    ctx.expect_eq(processes[0]["exit"], {"signal": 15}, "JSON exit", run)
    ctx.expect_eq(leak_groups(processes[0]), [(100, 1, "leak_then_sleep")],
                  "leak groups (the runtime reports on SIGTERM)", run)


def stack_functions(ctx, *options, env):
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program("deep_stack"), env=env)
    ctx.require_eq(run.exit, 0, "exit status", run)
    leaks = ctx.read_json(json_path, run)["processes"][0]["leaks"]
    ctx.require_eq(len(leaks), 1, "number of leak groups", run)
    return [frame["function"] for frame in leaks[0]["stack"]], run


@cli_test
def test_user_memtrack_options(ctx):
    """MEMTRACK_OPTIONS=max_frames=2 from the user cuts the stack to 2 frames; --num-callers,
    which memtrack passes after the user's options, wins over it."""
    env = ctx.env(MEMTRACK_OPTIONS="max_frames=2")
    functions, run = stack_functions(ctx, env=env)
    ctx.expect_eq(functions, ["level4", "level3"], "stack with max_frames=2", run)
    functions, run = stack_functions(ctx, "--num-callers=3", env=env)
    ctx.expect_eq(functions, ["level4", "level3", "level2"],
                  "stack with max_frames=2 and --num-callers=3", run)
    functions, run = stack_functions(ctx, env=ctx.env())
    ctx.expect_eq(functions[:5], ["level4", "level3", "level2", "level1", "main"],
                  "stack without a limit", run)
    run = ctx.memtrack("run", ctx.program("show_env"), env=env)
    options = [line for line in run.stdout.splitlines() if line.startswith("MEMTRACK_OPTIONS=")]
    ctx.expect(len(options) == 1 and options[0].startswith("MEMTRACK_OPTIONS=max_frames=2:"),
               "the program's MEMTRACK_OPTIONS should start with the user's", run)


@cli_test
def test_user_ld_preload(ctx):
    """A library the user preloads still loads in the program, after memtrack's runtime."""
    hello = ctx.library("preload_hello")
    run = ctx.memtrack("run", ctx.program("show_env"), env=ctx.env(LD_PRELOAD=hello))
    ctx.expect_eq(run.exit, 0, "exit status", run)
    ctx.expect_line(run.stderr, "preload_hello: loaded in cli_show_env",
                    "the user's preload library's constructor in the program", run)
    runtime = os.path.normpath(os.path.join(os.path.dirname(ctx.paths.memtrack), "..", "runtime",
                                            "libmemtrack.so"))
    ctx.expect_line(run.stdout, f"LD_PRELOAD={runtime}:{hello}", "the program's LD_PRELOAD", run)
    ctx.expect("definitely lost: 100 bytes in 1 block" in run.stderr,
               "the leak is still reported", run)


def started_with(ignored, blocked):
    """A preexec_fn: the child starts with `ignored` signals ignored and `blocked` blocked, as
    after `nohup`, a shell's `trap '' SIG`, or a parent that blocks signals."""
    def prepare():
        for sig in ignored:
            signal.signal(sig, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, set(blocked))
    return prepare


# glibc's own signals, 32 (SIGCANCEL) and 33 (SIGSETXID): sigaction refuses them to programs,
# and glibc installs its handler for SIGSETXID when a process creates its first thread (the
# runtime's thread, here), replacing an ignored disposition inherited from a parent that set
# it with the raw system call. Nothing in the program can see or change them.
GLIBC_INTERNAL_SIGNALS = (1 << 31) | (1 << 32)


def signal_lines(text):
    lines = []
    for line in text.splitlines():
        if line.startswith(("SigIgn:", "SigBlk:")):
            name, mask = line.split(":")
            lines.append(f"{name}: {int(mask, 16) & ~GLIBC_INTERNAL_SIGNALS:016x}")
    return lines


@cli_test
def test_inherited_signal_dispositions(ctx):
    """The program starts with exactly the ignored signals and the signal mask memtrack was
    started with (plain SigIgn 0x4003 for HUP, INT and TERM), not with memtrack's handlers
    reset to their defaults."""
    prepare = started_with([signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE],
                           [signal.SIGUSR1, signal.SIGWINCH])
    argv = ["grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"]
    runs = []
    for command in (argv, [ctx.paths.memtrack, "run", "--track-fds=no", "--", *argv]):
        result = subprocess.run(command, preexec_fn=prepare, capture_output=True, text=True,
                                env=ctx.env(), cwd=ctx.tmp, timeout=TIMEOUT_SECONDS,
                                check=False)
        runs.append(Run(command, 0, exit_status(result.returncode), result.stdout,
                        result.stderr))
    plain, traced = runs
    ctx.require_eq(plain.exit, 0, "plain exit status", plain)
    ctx.expect_eq(traced.exit, 0, "exit status under memtrack", traced)
    ctx.expect_eq(signal_lines(traced.stdout), signal_lines(plain.stdout),
                  "SigIgn and SigBlk under memtrack, as without it", traced)


@cli_test
def test_nohup_sighup_ignored(ctx):
    """Started with SIGHUP ignored (nohup), memtrack neither dies of a hangup nor passes it
    on: the program keeps running, and ends by the SIGTERM that follows."""
    ready = ctx.path("ready")
    json_path = ctx.path("report.json")
    argv = [ctx.paths.memtrack, "run", f"--json={json_path}", ctx.program("sleeper"), ready]
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=ctx.env(), cwd=ctx.tmp, text=True,
                          preexec_fn=started_with([signal.SIGHUP], [])) as process:
        started = wait_for_file(ready, process)
        alive_after_hangup = False
        if started:
            process.send_signal(signal.SIGHUP)
            time.sleep(0.5)
            alive_after_hangup = process.poll() is None
            process.send_signal(signal.SIGTERM)
        else:
            process.kill()
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            raise Failure("memtrack did not exit after SIGTERM")
    run = Run(argv, process.pid, exit_status(process.returncode), stdout, stderr)
    ctx.require(started, "cli_sleeper never created its ready file", run)
    ctx.expect(alive_after_hangup, "memtrack and the program survive SIGHUP", run)
    ctx.expect_run(run, exit=143, stdout="")
