"""What the memtrack top tests add to the CLI tests' harness (tests/cli/cli_harness.py):
the fixture tree, golden files in tests/top/golden (compared without pid renumbering: the
fixture's pids are fixed), several runs in one golden file, helper processes that are always
killed, and tmux."""

import dataclasses
import os
import shutil
import subprocess
import time

import cli_harness


class Skip(Exception):
    """The test cannot run here (the reason is printed); counts as passed."""


@dataclasses.dataclass
class TopPaths(cli_harness.Paths):
    grower: str = ""  # tests/top/programs/grower.c, built

    @property
    def golden_dir(self):
        return os.path.join(self.source_dir, "tests", "top", "golden")

    @property
    def fixture(self):
        return os.path.join(self.source_dir, "tests", "top", "fixtures", "proc")


class TopContext(cli_harness.Context):
    def __init__(self, paths, name, tmp):
        super().__init__(paths, name, tmp)
        self.processes = []  # helpers to kill at the end
        self.tmux_socket = None

    def normalizer(self):
        fixture = self.paths.fixture

        def normalize(text):
            return text.replace(fixture, "<FIXTURE>").replace(self.tmp, "<TMP>")
        return normalize

    def top(self, *args, env=None):
        """memtrack top ARGS on the fixture tree, with COLUMNS unset unless env sets it."""
        return self.memtrack("top", "--proc-root", self.paths.fixture, *args,
                             env=env or self.env(COLUMNS=None))

    def runs_as_one(self, arg_lists, env=None):
        """Runs `memtrack top --proc-root FIXTURE ARGS` for each ARGS and joins them into one
        Run for a golden file: each output under a "$ memtrack top ARGS (exit N)" line."""
        stdout, stderr = [], []
        for args in arg_lists:
            run = self.top(*args, env=env)
            title = f"$ memtrack top {' '.join(args)} (exit {run.exit})\n"
            stdout.append(title + run.stdout)
            stderr.append(title + run.stderr)
        return cli_harness.Run(["memtrack", "top", "..."], 0, 0, "\n".join(stdout),
                               "\n".join(stderr))

    def start(self, argv):
        """Starts a helper process; it is killed when the test ends."""
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=self.env(), cwd=self.tmp)
        self.processes.append(process)
        line = process.stdout.readline()  # "ready": its memory is in place
        if line != b"ready\n":
            raise cli_harness.Failure(f"{argv} did not start: {line!r}")
        return process

    # --- tmux ------------------------------------------------------------------------------

    def tmux(self, *args, check=True):
        if shutil.which("tmux") is None:
            raise Skip("tmux is not installed (scripts/install-deps.sh installs it)")
        if self.tmux_socket is None:
            self.tmux_socket = os.path.join(self.tmp, "tmux.sock")
        result = subprocess.run(["tmux", "-S", self.tmux_socket, *args], capture_output=True,
                                text=True, timeout=10, env=self.env(TMUX=None, TERM="xterm"))
        if check and result.returncode != 0:
            raise cli_harness.Failure(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def pane(self):
        return self.tmux("capture-pane", "-p", "-t", "top")

    def wait_for_pane(self, predicate, what, seconds=8.0):
        """Captures the pane until predicate(text) holds; fails with the last capture."""
        deadline = time.monotonic() + seconds
        text = ""
        while time.monotonic() < deadline:
            text = self.pane()
            if predicate(text):
                return text
            time.sleep(0.1)
        raise cli_harness.Failure(f"timed out waiting for {what}; the pane showed:\n{text}")

    def cleanup(self):
        if self.tmux_socket is not None:
            subprocess.run(["tmux", "-S", self.tmux_socket, "kill-server"], capture_output=True,
                           timeout=10)
        for process in self.processes:
            process.kill()
            process.wait(timeout=10)
