"""--html=FILE (docs/html-report.md): the page carries the JSON report unchanged, the source
lines around program frames and, after --expire, the live reports; `memtrack report --html`
finds the live reports a run kept; the output path is checked before the program runs. What
the page does in a browser is tested in tests/html."""

import base64
import gzip
import json
import re

from cli_harness import Failure, cli_test, STDOUT_CONFLICT

DATA = re.compile(r'<script type="application/octet-stream" id="memtrack-data" '
                  r'data-encoding="gzip base64">([A-Za-z0-9+/=]*)</script>')


def read_model(ctx, path, run):
    """The model the page's views read (its data element), or a Failure."""
    try:
        with open(path, encoding="utf-8") as f:
            page = f.read()
    except OSError as e:
        raise Failure(f"cannot read the HTML report {path}: {e}\n{run.describe()}")
    match = DATA.search(page)
    ctx.require(match is not None, f"{path} has no data element", run)
    ctx.expect("<script src" not in page and "<link" not in page,
               "the page loads nothing from elsewhere", run)
    ctx.expect("content=\"default-src 'none';" in page, "the page forbids network requests", run)
    return json.loads(gzip.decompress(base64.b64decode(match.group(1))))


@cli_test
def test_html_report(ctx):
    """The model's report is the JSON report of the same run; the source line of each
    group's first frame is in the model, with its neighbours."""
    html, json_path = ctx.path("leaks.html"), ctx.path("leaks.json")
    run = ctx.memtrack("run", f"--html={html}", f"--json={json_path}",
                       ctx.program("fork_exec"), ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --html: exit status", run)
    model = read_model(ctx, html, run)
    ctx.expect_eq(model["report"], ctx.read_json(json_path, run), "the model's report vs --json",
                  run)
    ctx.expect_eq(model["live"], [], "no live reports without --expire", run)
    checked = 0
    for process in model["report"]["processes"]:
        for group in process["leaks"]:
            frame = next((f for f in group["stack"] if f["file"].endswith("several_leaks.cpp")),
                         None)
            if frame is None:
                continue
            with open(frame["file"], encoding="utf-8") as f:
                lines = f.read().split("\n")
            snippet = model["sources"].get(frame["file"], {})
            line = frame["line"]
            ctx.expect_eq(snippet.get(str(line)), lines[line - 1],
                          f"source line {frame['file']}:{line}", run)
            ctx.expect_eq(snippet.get(str(line - 3)), lines[line - 4],
                          f"context line {frame['file']}:{line - 3}", run)
            checked += 1
    ctx.expect(checked >= 2, f"source lines checked for {checked} groups", run)


@cli_test
def test_html_live_and_report_command(ctx):
    """run --expire --html puts the live reports in the page; memtrack report --html DIR on the
    kept result directory finds the same live reports."""
    html, kept = ctx.path("live.html"), ctx.path("kept")
    live_path = ctx.path("live.jsonl")
    run = ctx.memtrack("run", "--expire=500ms", f"--live-json={live_path}", f"--html={html}",
                       f"--keep-results={kept}", f"--log-file={ctx.path('log.txt')}",
                       ctx.program("daemon"), "3")
    ctx.require_eq(run.exit, 0, "memtrack run --expire --html: exit status", run)
    with open(live_path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    model = read_model(ctx, html, run)
    ctx.require(len(lines) >= 3, f"at least 3 live reports, got {len(lines)}", run)
    ctx.expect_eq(model["live"], lines, "the page's live reports vs --live-json", run)
    again = ctx.path("again.html")
    report = ctx.memtrack("report", f"--html={again}", kept)
    ctx.require_eq(report.exit, 0, "memtrack report --html DIR: exit status", report)
    ctx.expect_eq(read_model(ctx, again, report)["live"], lines,
                  "memtrack report --html: the kept live reports", report)


@cli_test
def test_html_output_checked(ctx):
    """An --html path that cannot be written stops memtrack before the program runs; only
    one output may go to stdout."""
    missing = ctx.path("missing", "x.html")
    bad = ctx.memtrack("run", f"--html={missing}", ctx.program("echo_args"), "ran")
    ctx.expect_error(bad, 125, f"cannot write --html={missing}: No such file or directory")
    both = ctx.memtrack("run", "--html=-", "--json=-", ctx.program("no_leak"))
    ctx.expect_error(both, 125, STDOUT_CONFLICT)
    out = ctx.memtrack("run", "--html=-", ctx.program("no_leak"))
    ctx.expect(out.stdout.startswith("<!DOCTYPE html>") and out.stdout.rstrip().endswith("</html>"),
               "--html=-: the page on stdout", out)
