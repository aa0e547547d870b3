"""Runs a program under qemu-user for the emulated tests, telling the emulator's own hangs
apart from memtrack's. Standard library only.

Programs that create threads or fork were seen, on some hosts only, never to finish under
qemu-user, with or without memtrack. One cause is known and removed: on a host with Debian's
multiarch C library for the target (libc6:arm64), the cross root's loader loaded that other
build of libc.so.6 (cmake/toolchains: the emulator's options now put the root's own library
first). A test must still not pass over a hang of memtrack, nor fail on one of the
emulator's. So a run that outlives its time is described (each thread's state and kernel
wait channel, and its stack if gdb is there) before it is killed, and the callers decide
from a plain run, without memtrack:

- the plain program hangs too: the emulator cannot run it on this host. It is tried once
  more with a conservative CPU model (FALLBACK_CPU: no SVE, no LSE atomics, no pointer
  authentication, which changes both the code qemu generates and the C library's choices);
  if that hangs as well, the case is skipped with the reason, never passed;
- only the run under memtrack hangs: it is tried once more, then it is a failure.
"""

import os
import platform
import shutil
import subprocess

# A run that takes longer is taken for a hang: the emulated programs finish in under a second
# and the unwinder's torture test in about six on a loaded 2-core machine.
# MEMTRACK_TEST_EMULATOR_TIMEOUT: another value, and MEMTRACK_TEST_EMULATOR_GDB=0: no stacks
# from gdb (tests/emulated/test_emulator_hangs.py).
TIMEOUT_SECONDS = int(os.environ.get("MEMTRACK_TEST_EMULATOR_TIMEOUT", "60"))

# Per emulator (its basename): a CPU model of the same architecture without the optional
# extensions of qemu's default "max" model.
FALLBACK_CPU = {"qemu-aarch64": "cortex-a72", "qemu-arm": "cortex-a15"}


class Hang:
    """A run that did not finish within its time: the command and what the process was
    doing when it was killed."""

    def __init__(self, argv, timeout, state):
        self.argv = argv
        self.timeout = timeout
        self.state = state

    def describe(self):
        command = " ".join(self.argv)
        if len(command) > 300:
            command = command[:300] + " ..."
        return f"{command} did not finish within {self.timeout} s\n{self.state}"


def host_description():
    """One line naming the host and emulator, for reports of an emulator's hang."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"host: {model}, {os.cpu_count()} CPUs, Linux {platform.release()}"


def emulator_version(emulator):
    try:
        out = subprocess.run([emulator[0], "--version"], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "version unknown"
    return out.splitlines()[0] if out else "version unknown"


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return "?"


def describe_process(pid):
    """Each thread of `pid`: its state (R running, S sleeping, ...), CPU ticks, the kernel
    function it waits in; then every thread's stack from gdb when gdb is installed (qemu is
    stripped: its own frames are unnamed, the C library's are not)."""
    lines = []
    task_dir = f"/proc/{pid}/task"
    try:
        tids = sorted(os.listdir(task_dir), key=int)
    except OSError:
        return "(the process is gone)"
    for tid in tids:
        stat = _read(f"{task_dir}/{tid}/stat")
        fields = stat.rsplit(")", 1)[-1].split()
        state = fields[0] if fields else "?"
        ticks = int(fields[11]) + int(fields[12]) if len(fields) > 12 else -1
        wchan = _read(f"{task_dir}/{tid}/wchan")
        lines.append(f"  thread {tid}: state {state}, {ticks} CPU ticks, waiting in {wchan}")
    if shutil.which("gdb") and os.environ.get("MEMTRACK_TEST_EMULATOR_GDB") != "0":
        try:
            gdb = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                                  "-ex", "thread apply all bt 12"],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 errors="replace", timeout=15)
            stacks = [l for l in gdb.stdout.splitlines() if l.startswith(("#", "Thread "))]
            lines += ["  " + l for l in stacks[:120]]
        except (OSError, subprocess.TimeoutExpired):
            lines.append("  (gdb did not answer)")
    return "\n".join(lines)


def run(argv, env, cwd, timeout=TIMEOUT_SECONDS, text=True):
    """Runs argv with stdin closed. Returns (CompletedProcess, pid), or (Hang, pid) if it
    outlived `timeout` seconds (the process and its children are killed then)."""
    with subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text,
                          errors="replace" if text else None, start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            state = describe_process(proc.pid)
            try:
                os.killpg(proc.pid, 9)
            except OSError:
                proc.kill()
            proc.communicate()
            return Hang(argv, timeout, state), proc.pid
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr), proc.pid


def with_fallback_cpu(emulator):
    """`emulator` (a list) with FALLBACK_CPU's model, or None if it has none."""
    cpu = FALLBACK_CPU.get(os.path.basename(emulator[0]))
    if cpu is None or "-cpu" in emulator:
        return None
    return [emulator[0], "-cpu", cpu] + list(emulator[1:])
