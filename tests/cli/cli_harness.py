"""Shared machinery of the memtrack CLI tests: where things are, one temporary directory per
test, running memtrack, checks that collect every failure, the output normalizer and golden
files. Standard library only; used by run_cli_tests.py and the test_*.py modules.

A test is a function `test_NAME(ctx)` decorated with @cli_test; it gets a Context and calls
ctx.expect_*() (a mismatch is recorded and the test goes on) or ctx.require_*() (a mismatch
ends the test, for checks that later ones depend on).
"""

import dataclasses
import difflib
import json
import os
import pty
import re
import select
import subprocess

TESTS = {}  # name -> function(ctx), filled by @cli_test
TIMEOUT_SECONDS = 120
OUTPUT_SHOWN = 6000  # characters of stdout/stderr quoted in a failure message


def cli_test(function):
    """Registers test_NAME as the test NAME (ctest cli_behaviour.NAME)."""
    name = function.__name__.removeprefix("test_")
    if name in TESTS:
        raise RuntimeError(f"two tests named {name}")
    TESTS[name] = function
    return function


class Failure(Exception):
    """A require_*() check failed: the test cannot go on."""


@dataclasses.dataclass
class Paths:
    memtrack: str    # the memtrack executable under test
    programs: str    # directory of the cli_* test programs and libcli_*.so libraries
    build_dir: str   # the CMake build tree (for cmake --install)
    source_dir: str  # the repository
    cmake: str       # the cmake executable
    update: bool     # rewrite golden files instead of comparing

    @property
    def golden_dir(self):
        return os.path.join(self.source_dir, "tests", "cli", "golden")


@dataclasses.dataclass
class Run:
    """One finished command."""
    argv: list
    pid: int      # of the command itself (memtrack): the parent of the program it starts
    exit: int     # exit status, or 128+N if it was killed by signal N (like a shell)
    stdout: str
    stderr: str

    def describe(self):
        def show(text):
            if len(text) > OUTPUT_SHOWN:
                text = text[:OUTPUT_SHOWN] + f"\n... ({len(text) - OUTPUT_SHOWN} more characters)"
            return "".join(f"    | {line}\n" for line in text.splitlines()) or "    (empty)\n"
        return (f"  command: {' '.join(self.argv)}\n  exit: {self.exit}\n"
                f"  stdout:\n{show(self.stdout)}  stderr:\n{show(self.stderr)}")


def exit_status(returncode):
    return 128 - returncode if returncode < 0 else returncode


class Context:
    """What a test works with: paths, its own temporary directory, runs and checks."""

    def __init__(self, paths, name, tmp):
        self.paths = paths
        self.name = name
        self.tmp = tmp
        self.failures = []
        # memtrack run makes its private result directory under $TMPDIR: this one, so a test
        # can see that it is removed afterwards.
        self.tmpdir = self.mkdir("tmpdir")

    # --- paths -----------------------------------------------------------------------------

    def program(self, name):
        return os.path.join(self.paths.programs, "cli_" + name)

    def library(self, name):
        return os.path.join(self.paths.programs, f"libcli_{name}.so")

    def source(self, name):
        return os.path.join(self.paths.source_dir, "tests", "cli", "programs", name)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def mkdir(self, *parts):
        path = self.path(*parts)
        os.makedirs(path, exist_ok=True)
        return path

    def write(self, name, text, mode=0o644):
        path = self.path(name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def marker_line(self, source_name, marker):
        """The 1-based line of `source_name` (in programs/) that contains `marker`."""
        with open(self.source(source_name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if marker in line:
                    return number
        raise Failure(f"no line of {source_name} contains {marker!r}")

    # --- running -----------------------------------------------------------------------------

    def env(self, **changes):
        """The environment for a run: the caller's, without anything that changes memtrack's
        behaviour, with TMPDIR = the test's own; `changes` add variables (None removes)."""
        env = dict(os.environ)
        for name in ("LD_PRELOAD", "MEMTRACK_OPTIONS", "MEMTRACK_RUNTIME", "NO_COLOR"):
            env.pop(name, None)
        env["TMPDIR"] = self.tmpdir
        env["LC_ALL"] = "C"
        for name, value in changes.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def run(self, argv, env=None, timeout=TIMEOUT_SECONDS):
        """Runs argv with stdin from /dev/null and stdout and stderr captured."""
        with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env or self.env(), cwd=self.tmp,
                              text=True, errors="replace") as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                raise Failure(f"timed out after {timeout} s: {' '.join(argv)}")
            return Run(list(argv), process.pid, exit_status(process.returncode), stdout, stderr)

    def memtrack(self, *args, env=None, memtrack=None, timeout=TIMEOUT_SECONDS):
        """Runs `memtrack ARGS...` (the build's, or the given executable)."""
        return self.run([memtrack or self.paths.memtrack, *args], env=env, timeout=timeout)

    def memtrack_on_tty(self, *args, env=None):
        """Runs memtrack with stderr on a pseudo-terminal (stdout is still a pipe). The tty's
        CR LF line ends are turned back into LF."""
        master, slave = pty.openpty()
        argv = [self.paths.memtrack, *args]
        with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=slave, env=env or self.env(), cwd=self.tmp) as process:
            os.close(slave)
            chunks = []
            while True:
                ready, _, _ = select.select([master], [], [], TIMEOUT_SECONDS)
                if not ready:
                    process.kill()
                    raise Failure(f"timed out: {' '.join(argv)}")
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(master)
            stdout = process.stdout.read().decode(errors="replace")
            process.wait(timeout=TIMEOUT_SECONDS)
        stderr = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
        return Run(argv, process.pid, exit_status(process.returncode), stdout, stderr)

    def read_json(self, path, run=None):
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            raise Failure(f"cannot read the JSON report {path}: {e}\n"
                          + (run.describe() if run else ""))

    # --- checks ------------------------------------------------------------------------------

    def fail(self, message, run=None):
        self.failures.append(message + ("\n" + run.describe() if run else ""))

    def expect(self, condition, message, run=None):
        if not condition:
            self.fail(message, run)
        return bool(condition)

    def expect_eq(self, actual, expected, what, run=None):
        if actual == expected:
            return True
        if isinstance(actual, str) and isinstance(expected, str) and "\n" in expected + actual:
            diff = "".join(difflib.unified_diff(expected.splitlines(True),
                                                actual.splitlines(True), "expected", "actual"))
            self.fail(f"{what} differs:\n{diff}", run)
        else:
            self.fail(f"{what}: expected {expected!r}, got {actual!r}", run)
        return False

    def expect_run(self, run, exit=None, stdout=None, stderr=None, what="run"):
        """Checks the exit status and, where given, the exact stdout and stderr."""
        ok = exit is None or self.expect_eq(run.exit, exit, f"{what}: exit status", run)
        if stdout is not None:
            ok = self.expect_eq(run.stdout, stdout, f"{what}: stdout", run) and ok
        if stderr is not None:
            ok = self.expect_eq(run.stderr, stderr, f"{what}: stderr", run) and ok
        return ok

    def expect_error(self, run, exit, message, what="run"):
        """memtrack failed the documented way: `exit`, nothing on stdout, and exactly one
        stderr line "memtrack: error: MESSAGE"."""
        return self.expect_run(run, exit=exit, stdout="",
                               stderr=f"memtrack: error: {message}\n", what=what)

    def expect_line(self, text, line, what, run=None):
        """`line` is one of the lines of `text`, exactly."""
        return self.expect(line in text.splitlines(), f"{what}: no line\n    {line}", run)

    def require(self, condition, message, run=None):
        if not condition:
            raise Failure(message + ("\n" + run.describe() if run else ""))

    def require_eq(self, actual, expected, what, run=None):
        if actual != expected:
            raise Failure(f"{what}: expected {expected!r}, got {actual!r}"
                          + ("\n" + run.describe() if run else ""))

    # --- golden files ------------------------------------------------------------------------

    def normalizer(self):
        return Normalizer([(self.paths.programs, "<PROGRAMS>"), (self.paths.build_dir, "<BUILD>"),
                           (self.paths.source_dir, "<SRC>"), (self.tmp, "<TMP>")])

    def expect_golden(self, name, run):
        """Compares the run's stdout, stderr and exit status, normalized, with
        golden/NAME.{stdout,stderr,exit}; with --update, writes them instead."""
        normalize = self.normalizer()
        actual = {"stderr": normalize(run.stderr), "stdout": normalize(run.stdout),
                  "exit": f"{run.exit}\n"}
        for stream, text in actual.items():
            path = os.path.join(self.paths.golden_dir, f"{name}.{stream}")
            if self.paths.update:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                print(f"updated {os.path.relpath(path, self.paths.source_dir)}")
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    expected = f.read()
            except OSError as e:
                self.fail(f"golden file missing ({e}); run run_cli_tests.py --update {self.name}")
                continue
            self.expect_eq(text, expected, f"golden {name}.{stream} (normalized)", run)


class Normalizer:
    """Replaces what changes from run to run by placeholders: the given directories (longest
    first, also as their real paths), pids (numbered <PID1>, <PID2>, ... in order of first
    appearance, consistently across every text passed to one Normalizer) and JSON code
    addresses (ASLR)."""

    PID_CONTEXTS = re.compile("|".join(f"(?:{c})" for c in [
        r"==(\d+)==", r"\(pid (\d+), parent (\d+)\)", r'"pid": (\d+)', r'"ppid": (\d+)',
        r"memtrack\.(\d+)\.mtr"]))

    def __init__(self, replacements):
        pairs = set()
        for path, tag in replacements:
            pairs.add((path, tag))
            pairs.add((os.path.realpath(path), tag))
        self.replacements = sorted(pairs, key=lambda pair: -len(pair[0]))
        self.pids = {}

    def _pids(self, match):
        text = match.group(0)
        numbered = [i for i in range(1, len(match.groups()) + 1) if match.group(i) is not None]
        for i in numbered:  # left to right: the numbering follows the text
            self.pids.setdefault(match.group(i), f"<PID{len(self.pids) + 1}>")
        for i in reversed(numbered):  # right to left: earlier offsets stay valid
            start, end = match.start(i) - match.start(), match.end(i) - match.start()
            text = text[:start] + self.pids[match.group(i)] + text[end:]
        return text

    def __call__(self, text):
        for path, tag in self.replacements:
            text = text.replace(path, tag)
        text = self.PID_CONTEXTS.sub(self._pids, text)
        return re.sub(r'"address": "0x[0-9a-f]+"', '"address": "<ADDR>"', text)


# --- reading reports ----------------------------------------------------------------------------

def text_by_pid(stderr):
    """The "==PID== ..." lines of a text report grouped by pid: {pid: [line without prefix]}.
    Other lines (memtrack: error: ..., the program's own output) are left out."""
    processes = {}
    for line in stderr.splitlines():
        m = re.fullmatch(r"==(\d+)==(?: (.*))?", line)
        if m:
            processes.setdefault(int(m.group(1)), []).append(m.group(2) or "")
    return processes


def leak_groups(process, key="leaks"):
    """[(bytes, blocks, first frame's function)] of a JSON process, in report order."""
    return [(g["bytes"], g["blocks"], g["stack"][0]["function"] if g["stack"] else None)
            for g in process[key]]


def summary_totals(process):
    """(leaked_bytes, leaked_blocks, suppressed_bytes, suppressed_blocks) of a JSON process."""
    s = process["summary"]
    return (s["leaked_bytes"], s["leaked_blocks"], s["suppressed_bytes"], s["suppressed_blocks"])


# memtrack's one line when two outputs name stdout, and when --format names no format.
STDOUT_CONFLICT = ("only one of --log-file, --json, --junit, --collapsed, --xml-file, --sarif, "
                   "--pprof, --speedscope, --html and --format can write to stdout")


def format_expected(name):
    return ("--format expects text, json, junit, collapsed, xml, sarif, pprof, speedscope or "
            f"html, not '{name}'")


def program_names(processes):
    """{stable program name: pid} of a JSON report's processes, as the collapsed stacks' root
    frames and speedscope's profiles name them (report/process_names.h): the program's file
    name, " #2", " #3"... for a later process of the same name."""
    names = {}
    seen = {}
    for process in processes:
        name = os.path.basename(process["command"][0]) if process["command"] else "?"
        seen[name] = seen.get(name, 0) + 1
        names[name if seen[name] == 1 else f"{name} #{seen[name]}"] = process["pid"]
    return names


def junit_pid(case):
    """The pid property of a JUnit testcase element (int), or None."""
    for prop in case.iter("property"):
        if prop.get("name") == "pid":
            return int(prop.get("value"))
    return None
