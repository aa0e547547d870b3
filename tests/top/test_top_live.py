"""The full-screen view end to end: memtrack top runs in a detached tmux session next to a
process whose RSS grows and one that holds a fixed 64 MiB; keys are sent with send-keys and
the screen is read with capture-pane. Bounded: every wait gives up after a few seconds."""

import re
import subprocess
import time
import uuid

from cli_harness import cli_test

G_COLUMN = 71  # the growing mark's column (table_format.cpp)
PROCESS_ROW = re.compile(r"^ *(\d+) (\S+) ")


def process_rows(pane):
    """[(pid, growing, line)] of the process rows on the screen, top to bottom."""
    rows = []
    for line in pane.splitlines():
        m = PROCESS_ROW.match(line)
        if m and "tgid" not in line[:40]:
            rows.append((int(m.group(1)), len(line) > G_COLUMN and line[G_COLUMN] == "^", line))
    return rows


def pids(pane):
    return [pid for pid, _, _ in process_rows(pane)]


@cli_test
def test_tmux_live(ctx):
    tag = "tag" + uuid.uuid4().hex[:8]  # only in the helpers' command lines
    grower = ctx.start([ctx.paths.grower, "grow", tag])
    holder = ctx.start([ctx.paths.grower, "static", tag, "64"])
    by_pid = sorted([grower.pid, holder.pid])
    ctx.tmux("new-session", "-d", "-s", "top", "-x", "200", "-y", "50",
             f"{ctx.paths.memtrack} top -d 0.2 --growth-samples 3")
    ctx.wait_for_pane(lambda p: "COMMAND" in p and "sort: rss" in p, "the table")

    # '/' filter: only the two helpers are left.
    ctx.tmux("send-keys", "-t", "top", "/")
    ctx.tmux("send-keys", "-t", "top", "-l", tag)
    ctx.tmux("send-keys", "-t", "top", "Enter")
    pane = ctx.wait_for_pane(lambda p: f"filter: {tag}" in p and len(pids(p)) == 2,
                             "the filtered table")
    ctx.expect_eq(sorted(pids(pane)), by_pid, "pids after the filter")

    # After 3 increases in a row (about 0.8 s at -d 0.2) the grower is marked, the holder not.
    pane = ctx.wait_for_pane(
        lambda p: any(pid == grower.pid and growing for pid, growing, _ in process_rows(p)),
        "the growing mark on the grower")
    for pid, growing, line in process_rows(pane):
        if pid == holder.pid:
            ctx.expect(not growing, f"the holder is marked growing:\n{line}")
        else:
            ctx.expect("+" in line[53:70], f"no positive growth on the grower's row:\n{line}")

    # Sort keys change the order: RSS (64 MiB holder first), pid, reversed, RSS again.
    ctx.expect_eq(pids(pane), [holder.pid, grower.pid], "order by RSS")
    for keys, status, order in (("N", "sort: pid ", by_pid), ("r", "(reversed)", by_pid[::-1]),
                                ("M", "sort: rss ", [holder.pid, grower.pid]),
                                (">", "sort: pss", None)):
        ctx.tmux("send-keys", "-t", "top", keys)
        pane = ctx.wait_for_pane(lambda p: status in p and (order is None or pids(p) == order),
                                 f"the order after '{keys}'")
    ctx.tmux("send-keys", "-t", "top", "M")
    ctx.wait_for_pane(lambda p: "sort: rss " in p and pids(p) == [holder.pid, grower.pid],
                      "the order by RSS again")

    # 't': each helper's threads under it.
    ctx.tmux("send-keys", "-t", "top", "t")
    pane = ctx.wait_for_pane(lambda p: p.count("grower-worker") == 2, "the thread rows")
    ctx.expect(re.search(rf"tgid {grower.pid} +S +cpu +\d+:\d\d\.\d\d +[|`]- grower-worker", pane),
               f"no thread row of the grower:\n{pane}")

    # A smaller terminal: lines are cut to it, the table is still there.
    ctx.tmux("resize-window", "-t", "top", "-x", "90", "-y", "20")
    # The footer sits on the last line: at line 20 only once the view has redrawn.
    pane = ctx.wait_for_pane(lambda p: "q quit" in p and "    PID USER" in p,
                             "the table redrawn at 90x20")
    ctx.expect(all(len(line) <= 90 for line in pane.splitlines()), f"lines over 90:\n{pane}")
    ctx.expect_eq(sorted(pids(pane)), by_pid, "pids at 90 columns")

    # '?' help, any key back, 'p' pauses, 'q' quits.
    ctx.tmux("send-keys", "-t", "top", "?")
    ctx.wait_for_pane(lambda p: "Keys" in p and "growing" not in p.splitlines()[0], "the help")
    ctx.tmux("send-keys", "-t", "top", "x")
    ctx.wait_for_pane(lambda p: "    PID USER" in p, "the table after the help")
    ctx.tmux("send-keys", "-t", "top", "p")
    ctx.wait_for_pane(lambda p: "PAUSED" in p, "PAUSED")
    ctx.tmux("send-keys", "-t", "top", "q")
    deadline = time.monotonic() + 5
    while session_alive(ctx) and time.monotonic() < deadline:
        time.sleep(0.1)
    ctx.expect(not session_alive(ctx), "memtrack top did not quit on 'q'")


def session_alive(ctx):
    result = subprocess.run(["tmux", "-S", ctx.tmux_socket, "has-session", "-t", "top"],
                            capture_output=True, timeout=10)
    return result.returncode == 0
