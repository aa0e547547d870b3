"""Heap profiles (docs/profiling.md): memtrack run --profile records, memtrack report
analyses. heap_pattern.c makes a known pattern (1,000 temporary allocations of 100 bytes in
make_temporary, 2 x 5 blocks of 1,000 bytes never freed from grow_cache, a peak of
4 x 262,144 bytes in build_peak, one realloc of 16 to 32 bytes in main), checked exactly in the
text, the JSON, the collapsed stacks of every kind, massif's format as ms_print prints it and
the time window. churn_events.c makes many events: the analysis's memory must not grow with
them."""

import base64
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import time

from cli_harness import Failure, cli_test

PEAK_BYTES = 1_053_608  # 4 x 262,144 + 5 x 1,000 + 32
ALLOCATED = 1_158_624  # 1,000 x 100 + 16 + 10 x 1,000 + 32 + 4 x 262,144


def record(ctx, program="heap_pattern", *args, name="hp.prof"):
    path = ctx.path(name)
    run = ctx.memtrack("run", f"--profile={path}", ctx.program(program), *args)
    ctx.require_eq(run.exit, 0, "memtrack run --profile: exit status", run)
    ctx.require(os.path.exists(path), f"--profile wrote no {path}", run)
    return path, run


def report_json(ctx, path, *args):
    json_path = ctx.path("profile.json")
    run = ctx.memtrack("report", path, f"--json={json_path}", *args)
    ctx.require_eq(run.exit, 0, "memtrack report PROFILE --json: exit status", run)
    return ctx.read_json(json_path, run), run


def leaf_of(site):
    return site["stack"][0]["function"]


def sites_by_leaf(report):
    out = {}
    for site in report["sites"]:
        out.setdefault(leaf_of(site), []).append(site)
    return out


def expect_raw_matches(ctx, report, run):
    """The one raw profile kept in ctx.path("kept") gives `report` (made with --sites=100)."""
    raws = [n for n in os.listdir(ctx.path("kept")) if re.fullmatch(r"profile\.\d+\.raw", n)]
    ctx.require_eq(len(raws), 1, "one raw profile in the result directory", run)
    raw, run = report_json(ctx, os.path.join(ctx.path("kept"), raws[0]), "--sites=100")
    for key in ("summary", "peak", "top", "sites", "series", "complete"):
        ctx.expect_eq(raw[key], report[key], f"raw vs packed: {key}", run)


@cli_test
def test_profile_exact(ctx):
    """Every number of the pattern, in the text and the JSON report."""
    path, run = record(ctx)
    ctx.expect(re.search(rf"heap profile of pid \d+: {re.escape(path)} \(2,022 events, ",
                         run.stderr), "run says where the profile went", run)
    text = ctx.memtrack("report", path)
    ctx.require_eq(text.exit, 0, "memtrack report PROFILE: exit status", text)
    for line in ["  1,016 allocations, 1,006 frees (1 by realloc), 1,158,624 bytes allocated",
                 "  temporary allocations: 1,000 (98.4% of all allocations)",
                 "  not freed at the end: 10,000 bytes in 10 blocks",
                 "  1. 1,048,576 bytes in 4 blocks at the peak",
                 "  1. 1,000 temporary allocations of 1,000 allocations",
                 "  1. 1,048,576 bytes allocated in 4 allocations",
                 "  1. 100,000 bytes allocated in 1,000 allocations"]:
        ctx.expect_line(text.stdout, line, "text report", text)
    ctx.expect(re.search(r"^  peak: 1,053,608 bytes in 10 blocks at \d+\.\d{3} s; RSS peak ",
                         text.stdout, re.M), "text: the peak line", text)
    ctx.expect(re.search(r"Peak of 1,053,608 bytes at .*, held by:\n  1\. .*\n"
                         r"       #0 build_peak \(.*heap_pattern\.c:\d+", text.stdout),
               "text: build_peak holds the peak", text)
    report, run = report_json(ctx, path)
    ctx.expect_eq(report["summary"], {"allocations": 1016, "frees": 1006, "reallocs": 1,
                                      "allocated_bytes": ALLOCATED, "temporary": 1000,
                                      "leaked_bytes": 10000, "leaked_blocks": 10,
                                      "unknown_frees": 0}, "JSON summary", run)
    ctx.expect_eq((report["peak"]["bytes"], report["peak"]["blocks"]), (PEAK_BYTES, 10),
                  "JSON peak", run)
    ctx.expect(report["complete"], "the process ended normally", run)
    ctx.expect(report["peak"]["rss_bytes"] > 0, "an RSS sample was taken", run)
    sites = sites_by_leaf(report)
    ctx.require(set(sites) >= {"build_peak", "make_temporary", "grow_cache", "main"},
                f"sites of the pattern: {sorted(sites)}", run)
    peak = sites["build_peak"][0]
    ctx.expect_eq((peak["peak_bytes"], peak["peak_blocks"], peak["allocations"],
                   peak["leaked_bytes"], peak["temporary"]), (1_048_576, 4, 4, 0, 0),
                  "build_peak site", run)
    temp = sites["make_temporary"][0]
    ctx.expect_eq((temp["allocations"], temp["allocated_bytes"], temp["temporary"],
                   temp["peak_bytes"], temp["leaked_bytes"]), (1000, 100_000, 1000, 0, 0),
                  "make_temporary site", run)
    grow = sites["grow_cache"]
    ctx.expect_eq(sorted((s["allocations"], s["leaked_bytes"], s["leaked_blocks"]) for s in grow),
                  [(5, 5000, 5), (5, 5000, 5)], "grow_cache sites (two loops)", run)
    ctx.expect_eq(sorted(s["peak_bytes"] for s in grow), [0, 5000], "grow_cache at the peak",
                  run)
    ctx.expect_eq(report["top"]["peak"][0], peak["stack_id"], "the peak's top site", run)
    ctx.expect_eq(report["top"]["temporary"], [temp["stack_id"]], "temporary sites", run)
    points = report["series"]["points"]
    ctx.expect(50 <= len(points) <= 100, f"series of 50-100 points: {len(points)}", run)
    ctx.expect_eq(sum(p["allocated_bytes"] for p in points), ALLOCATED,
                  "series: bytes allocated add up", run)
    ctx.expect_eq(sum(p["allocations"] for p in points), 1016, "series: allocations", run)
    ctx.expect_eq(max(p["heap_max_bytes"] for p in points), PEAK_BYTES, "series: peak", run)
    ctx.expect_eq(points[-1]["heap_bytes"], 10000, "series: live at the end", run)
    for kind, expected in [
            ("allocated", {"main;make_temporary": 100_000, "main;grow_cache": 10_000,
                           "main;build_peak": 1_048_576, "main": 48}),
            ("allocations", {"main;make_temporary": 1000, "main;grow_cache": 10,
                             "main;build_peak": 4, "main": 2}),
            ("temporary", {"main;make_temporary": 1000}),
            ("peak", {"main;grow_cache": 5000, "main;build_peak": 1_048_576, "main": 32}),
            ("leaked", {"main;grow_cache": 10_000})]:
        folded = ctx.memtrack("report", path, "--collapsed=-", f"--collapsed-kind={kind}")
        lines = {}
        for line in folded.stdout.splitlines():
            match = re.fullmatch(r"cli_heap_pattern;(.*) (\d+)", line)
            ctx.require(match is not None, f"not a collapsed line: {line!r}", folded)
            lines[match.group(1)] = lines.get(match.group(1), 0) + int(match.group(2))
        ctx.expect_eq(lines, expected, f"--collapsed-kind={kind}", folded)


@cli_test
def test_profile_sampled(ctx):
    """--profile in the sampled mode (docs/sampling.md): the totals, the peak and the heap over
    time are the full mode's, exactly; the sites are estimates, each sampled block of s bytes
    standing for 1 / (1 - exp(-s / interval)) blocks; the blocks not sampled are counted apart
    and are no site."""
    interval = 4096
    full_path, _ = record(ctx)
    path = ctx.path("sampled.prof")
    run = ctx.memtrack("run", f"--sample={interval}", "--sample-seed=7", f"--profile={path}",
                       ctx.program("heap_pattern"))
    ctx.require_eq(run.exit, 0, "memtrack run --sample --profile: exit status", run)
    full, _ = report_json(ctx, full_path)
    report, run = report_json(ctx, path, "--sites=100")
    ctx.expect_eq(report["summary"], full["summary"], "the totals are exact", run)
    ctx.expect_eq((report["peak"]["bytes"], report["peak"]["blocks"]),
                  (PEAK_BYTES, 10), "the peak is exact", run)
    ctx.expect_eq([(p["heap_bytes"], p["allocations"]) for p in report["series"]["points"]][-1],
                  (10000, 0), "the heap over time is exact", run)
    sampling = report.get("sampling")
    ctx.require(sampling is not None, "the JSON says it is sampled", run)
    ctx.expect_eq(sampling["interval_bytes"], interval, "sampling.interval_bytes", run)
    sites = sites_by_leaf(report)
    ctx.expect(all(s["stack"] for s in report["sites"]), "no site without a stack", run)
    # 262,144-byte blocks are always sampled (p = 1 - e^-64): build_peak's figures are exact.
    peak = sites["build_peak"][0]
    ctx.expect_eq((peak["peak_bytes"], peak["peak_blocks"], peak["sampled_peak_blocks"],
                   peak["allocations"]), (1_048_576, 4, 4, 4), "build_peak site", run)
    # make_temporary's 1,000 blocks of 100 bytes: a sample of ~24, each standing for
    # 1 / (1 - e^(-100/4096)) blocks.
    temp = sites.get("make_temporary", [None])[0]
    ctx.require(temp is not None, "make_temporary was sampled", run)
    weight = 1 / (1 - math.exp(-100 / interval))
    n = temp["sampled_allocations"]
    ctx.expect_eq(temp["allocated_bytes"], n * round(100 * weight),
                  "make_temporary: bytes estimated from its samples", run)
    ctx.expect_eq(temp["allocations"], round(n * round(weight * 65536) / 65536),
                  "make_temporary: blocks estimated from its samples", run)
    ctx.expect(400 <= temp["allocations"] <= 2500,
               f"make_temporary: ~1,000 allocations estimated: {temp['allocations']}", run)
    ctx.expect_eq(temp["temporary"], temp["allocations"], "make_temporary: all temporary", run)
    not_sampled = sampling["not_sampled"]
    ctx.expect_eq(not_sampled["allocations"] + sampling["sampled_allocations"],
                  report["summary"]["allocations"], "sampled and not sampled add up", run)
    text = ctx.memtrack("report", path)
    ctx.require_eq(text.exit, 0, "memtrack report PROFILE: exit status", text)
    for line in ["  1,016 allocations, 1,006 frees (1 by realloc), 1,158,624 bytes allocated",
                 "  not freed at the end: 10,000 bytes in 10 blocks",
                 "  1. ~1,050,000 bytes in ~4 blocks (4 sampled) at the peak"]:
        ctx.expect_line(text.stdout, line, "text report", text)
    ctx.expect(re.search(r"^  SAMPLED: [\d,]+ allocations? with a stack, about one per 4,096 "
                         r"bytes allocated; the totals and the heap over time are exact, the "
                         r"sites are estimates \(~\)$", text.stdout, re.M), "text: SAMPLED", text)
    ctx.expect(re.search(r"^  not sampled \(no stack; the estimates stand for them\): [\d,]+ "
                         r"allocations of ", text.stdout, re.M), "text: not sampled", text)
    folded = ctx.memtrack("report", path, "--collapsed=-", "--collapsed-kind=peak")
    ctx.expect(all(";" in line for line in folded.stdout.splitlines()),
                   "collapsed: no line for the blocks not sampled", folded)


@cli_test
def test_profile_massif(ctx):
    """--massif: ms_print reads it and shows the peak snapshot, with its bytes and the
    functions that hold them, and the detailed snapshot at the end."""
    ms_print = shutil.which("ms_print")
    ctx.require(ms_print is not None, "ms_print (valgrind) is not installed")
    path, _ = record(ctx)
    massif = ctx.path("massif.out")
    run = ctx.memtrack("report", path, f"--massif={massif}")
    ctx.require_eq(run.exit, 0, "memtrack report --massif: exit status", run)
    printed = ctx.run([ms_print, massif])
    ctx.require_eq(printed.exit, 0, "ms_print: exit status", printed)
    ctx.expect(re.search(r"Detailed snapshots: \[\d+ \(peak\), \d+\]", printed.stdout),
               "ms_print: a peak snapshot and a final one", printed)
    ctx.expect(re.search(r"^100\.00% \(1,053,608B\) \(heap allocation functions\)",
                         printed.stdout, re.M), "ms_print: the peak's total", printed)
    ctx.expect(re.search(r"^->99\.52% \(1,048,576B\) 0x[0-9A-F]+: build_peak \(.*heap_pattern"
                         r"\.c:\d+\)$", printed.stdout, re.M), "ms_print: build_peak", printed)
    ctx.expect(re.search(r"^100\.00% \(10,000B\) \(heap allocation functions\)",
                         printed.stdout, re.M), "ms_print: the end's total", printed)
    ctx.expect(re.search(r"^->100\.00% \(10,000B\) 0x[0-9A-F]+: grow_cache ", printed.stdout,
                         re.M), "ms_print: grow_cache at the end", printed)


@cli_test
def test_profile_window(ctx):
    """--from at the peak: the window holds the second growth loop only (the first one ended
    50 ms before the peak; the peak's blocks are freed inside the window)."""
    path, _ = record(ctx)
    report, run = report_json(ctx, path)
    from_ms = report["peak"]["time_us"] // 1000
    windowed, run = report_json(ctx, path, f"--from={from_ms}ms")
    ctx.expect_eq((windowed["window"]["bytes"], windowed["window"]["blocks"]), (5000, 5),
                  "window from the peak to the end", run)
    sites = [s for s in windowed["sites"] if s["window_bytes"] > 0]
    ctx.expect_eq([(leaf_of(s), s["window_bytes"]) for s in sites], [("grow_cache", 5000)],
                  "the window's sites", run)
    everything, run = report_json(ctx, path, "--from=0")
    ctx.expect_eq((everything["window"]["bytes"], everything["window"]["blocks"]), (10000, 10),
                  "a window over the whole run keeps what was not freed", run)
    bad = ctx.memtrack("report", path, "--from=2s", "--to=1s")
    ctx.expect_error(bad, 125, "--from must be before --to", "--from after --to")


@cli_test
def test_profile_window_seek(ctx):
    """The window's flame graph as the only output (--collapsed=- --collapsed-kind=window)
    reads the recording from the chunk where the window starts: on a recording of several
    chunks, a window late in it gives the lines the whole pass gives, adding up to the
    JSON report's window."""
    path, _ = record(ctx, "churn_events", "1500000", name="long.prof")
    whole, run = report_json(ctx, path)
    duration_ms = whole["duration_us"] // 1000
    window = [f"--from={duration_ms * 6 // 10}ms", f"--to={duration_ms * 8 // 10}ms"]
    windowed, run = report_json(ctx, path, *window)
    ctx.require(windowed["window"]["blocks"] > 0, "the window keeps blocks (the ring of 64)",
                run)
    folded = ctx.path("window.folded")
    run = ctx.memtrack("report", path, *window, f"--collapsed={folded}",
                       "--collapsed-kind=window", f"--log-file={ctx.path('text.txt')}")
    ctx.require_eq(run.exit, 0, "report --collapsed=FILE (the whole pass): exit status", run)
    with open(folded, encoding="utf-8") as f:
        whole_pass = f.read()
    seek = ctx.memtrack("report", path, *window, "--collapsed=-", "--collapsed-kind=window")
    ctx.require_eq(seek.exit, 0, "report --collapsed=- (from the window's chunk): exit status",
                   seek)
    ctx.expect_eq(seek.stdout, whole_pass, "the window's collapsed stacks, both ways", seek)
    total = sum(int(line.rsplit(" ", 1)[1]) for line in seek.stdout.splitlines())
    ctx.expect_eq(total, windowed["window"]["bytes"], "collapsed window = JSON window bytes",
                  seek)


@cli_test
def test_profile_children(ctx):
    """One profile per process: the main one in FILE, the forked child's in FILE.PID and,
    after its exec, the new image's in FILE.PID.2; each analysed. The image before the exec
    is complete (its batches were written before the exec), and memtrack run says so."""
    path = ctx.path("fe.prof")
    run = ctx.memtrack("run", f"--profile={path}", ctx.program("fork_exec"),
                       ctx.program("heap_pattern"))
    ctx.require_eq(run.exit, 0, "memtrack run --profile: exit status", run)
    forked = [n for n in os.listdir(ctx.tmp) if re.fullmatch(r"fe\.prof\.\d+", n)]
    ctx.require_eq(len(forked), 1, f"one forked child's profile: {os.listdir(ctx.tmp)}", run)
    ctx.require(os.path.exists(ctx.path(forked[0] + ".2")), "the exec'd image's profile", run)
    before_exec, _ = report_json(ctx, ctx.path(forked[0]))
    ctx.expect_eq(before_exec["summary"]["allocations"], 0, "the child before its exec", run)
    ctx.expect(before_exec["complete"], "the child before its exec: complete", run)
    ctx.expect(re.search(r"fe\.prof\.\d+ \([\d,]+ events?, [\d,]+ bytes; replaced by the program "
                         r"it exec'd\)", run.stderr), "run: the image before the exec", run)
    child, _ = report_json(ctx, ctx.path(forked[0] + ".2"))
    ctx.expect_eq(child["summary"]["temporary"], 1000, "the child's temporaries", run)
    ctx.expect_eq(child["peak"]["bytes"], PEAK_BYTES, "the child's peak", run)
    parent, _ = report_json(ctx, path)
    ctx.expect_eq(parent["summary"]["leaked_bytes"], 50, "the parent's own leak", run)
    ctx.expect(parent["pid"] != child["pid"], "two processes", run)


@cli_test
def test_profile_report_while_running(ctx):
    """memtrack report FILE while memtrack run is still writing FILE (heap_pattern --hold,
    waiting with its 32-byte block not yet freed): it says so and reports what the program
    has recorded so far, from the raw file; once the program has ended, the whole profile. A
    file with the same pid that memtrack run does not write is refused."""
    path = ctx.path("running.prof")
    process = subprocess.Popen(
        [ctx.paths.memtrack, "run", f"--profile={path}", ctx.program("heap_pattern"), "--hold"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctx.env(),
        cwd=ctx.tmp, text=True)
    try:
        line = process.stdout.readline()
        ctx.require(line.startswith("ready "), f"heap_pattern --hold is ready ({line!r})")
        pid = int(line.split()[1])
        for _ in range(100):  # memtrack run looks for the raw file every 20 ms
            if os.path.exists(path) and os.path.getsize(path) >= 16:
                break
            time.sleep(0.1)
        report, run = {}, None
        for _ in range(60):  # the runtime writes an idle thread's batch within 2 intervals
            run = ctx.memtrack("report", path, "--json=-")
            ctx.require_eq(run.exit, 0, "memtrack report of the running program's file", run)
            report = json.loads(run.stdout)
            if report["summary"]["allocations"] >= 1016:
                break
            time.sleep(0.5)
        ctx.expect_eq(run.stderr, f"memtrack: {path} is still being written (pid {pid} runs): "
                      "the report is of what it has recorded so far\n", "the note", run)
        s = report["summary"]
        ctx.expect_eq((report["running"], report["complete"], s["allocations"], s["frees"],
                       s["leaked_bytes"], s["leaked_blocks"], report["peak"]["bytes"]),
                      (True, False, 1016, 1005, 10_032, 11, PEAK_BYTES),
                      "what it has recorded so far", run)
        # The same header in a file memtrack run does not write: a killed run's file whose
        # pid a later process under memtrack took. Its header alone would name that process.
        other = ctx.path("other.prof")
        with open(path, "rb") as src, open(other, "wb") as dst:
            dst.write(src.read(16))
        run = ctx.memtrack("report", other, "--json=-")
        ctx.expect_eq((run.exit, run.stdout), (125, ""), "another run's pid is refused", run)
        ctx.expect(f"process {pid} is not recording it now (the memtrack run above it writes "
                   "another file)" in run.stderr, "the refusal says why", run)
    finally:
        _, stderr = process.communicate(input="", timeout=60)
    ctx.expect_eq(process.returncode, 0, f"memtrack run's exit status ({stderr})")
    report, run = report_json(ctx, path)
    ctx.expect_eq((report["complete"], "running" in report, report["summary"]["leaked_bytes"]),
                  (True, False, 10_000), "the whole profile once it has ended", run)


def analysis_max_rss_kib(ctx, path):
    """Runs memtrack report PATH and returns its peak RSS (KiB)."""
    with subprocess.Popen([ctx.paths.memtrack, "report", path, f"--json={ctx.path('x.json')}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          cwd=ctx.tmp) as process:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise Failure(f"memtrack report {path} failed with {process.returncode}")
    return usage.ru_maxrss


@cli_test
def test_profile_memory_bounded(ctx):
    """The analysis streams: 8 times the events (3.2 million against 400,000), with the same
    stacks and live blocks, take no more memory (within 4 MiB of allocator noise)."""
    small, _ = record(ctx, "churn_events", "200000", name="small.prof")
    large, _ = record(ctx, "churn_events", "1600000", name="large.prof")
    small_report, run = report_json(ctx, small)
    large_report, run = report_json(ctx, large)
    ctx.expect_eq(large_report["summary"]["allocations"], 1_600_000, "events recorded", run)
    ctx.expect_eq(large_report["summary"]["leaked_bytes"], 0, "everything freed", run)
    small_kib = analysis_max_rss_kib(ctx, small)
    large_kib = analysis_max_rss_kib(ctx, large)
    ctx.expect(large_kib <= small_kib + 4096,
               f"analysis memory grows with events: {small_kib} KiB for 400,000 events, "
               f"{large_kib} KiB for 3,200,000")


@cli_test
def test_profile_bad_input(ctx):
    """A profile cut short or corrupt, or profile options without one: one clear line."""
    path, _ = record(ctx)
    with open(path, "rb") as f:
        data = f.read()
    cut = ctx.path("cut.prof")
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    run = ctx.memtrack("report", cut)
    pid = int.from_bytes(data[12:16], "little")
    if not os.path.exists(f"/proc/{pid}"):  # else the pid was taken since: another message
        ctx.expect((run.exit, run.stdout) == (125, "") and re.fullmatch(
            f"memtrack: error: {re.escape(cut)} is cut short: it has no index, and process "
            f"{pid} whose profile it is has ended\. The file was truncated \(copied while "
            f"memtrack run wrote it, or the disk was full\), or memtrack run was killed before "
            f"it finished; in that case its result directory still holds the raw profile, "
            f"profile\.{pid}\.raw: memtrack report reads that file\n",
            run.stderr), "a packed profile cut short: one line, the way out", run)
    # A flipped byte in a compressed chunk: the chunk's checksum names it.
    flipped = ctx.path("flipped.prof")
    with open(flipped, "wb") as f:
        f.write(data[:200] + bytes([data[200] ^ 0x10]) + data[201:])
    run = ctx.memtrack("report", flipped)
    ctx.expect((run.exit, run.stdout) == (125, "") and re.fullmatch(
        f"memtrack: error: {re.escape(flipped)}: corrupt heap profile \(.*\)\n", run.stderr),
        "a flipped byte: one line naming the file, never another report", run)
    leak = ctx.path("leak.json")
    run = ctx.memtrack("run", "--keep-results", ctx.path("results"), f"--json={leak}",
                       ctx.program("leak_one"))
    results = [os.path.join(ctx.path("results"), n) for n in os.listdir(ctx.path("results"))
               if n.endswith(".mtr")]
    run = ctx.memtrack("report", results[0], f"--massif={ctx.path('m.out')}")
    ctx.expect_error(run, 125, "--massif needs a heap profile (memtrack run --profile=FILE)",
                     "--massif with a leak result file")
    run = ctx.memtrack("report", path, results[0])
    ctx.expect_error(run, 125, "memtrack report analyses one heap profile at a time (2 files "
                     "given)", "a profile with another file")


@cli_test
def test_profile_raw_matches_packed(ctx):
    """The raw file the runtime wrote (kept with --keep-results) and the packed one give the
    same analysis: the packed file's frees without addresses lose nothing."""
    path = ctx.path("hp.prof")
    run = ctx.memtrack("run", f"--profile={path}", f"--keep-results={ctx.path('kept')}",
                       ctx.program("heap_pattern"))
    ctx.require_eq(run.exit, 0, "memtrack run --profile --keep-results: exit status", run)
    raws = [n for n in os.listdir(ctx.path("kept")) if re.fullmatch(r"profile\.\d+\.raw", n)]
    ctx.require_eq(len(raws), 1, "one raw profile in the result directory", run)
    packed, run = report_json(ctx, path, "--from=100ms", "--sites=100")
    raw, run = report_json(ctx, os.path.join(ctx.path("kept"), raws[0]), "--from=100ms",
                           "--sites=100")
    for key in ("summary", "peak", "window", "top", "sites", "series", "complete"):
        ctx.expect_eq(raw[key], packed[key], f"raw vs packed: {key}", run)


@cli_test
def test_profile_threads(ctx):
    """threads_pattern.c: 4 threads allocating at once, frees from another thread than the
    allocating one, temporaries told apart per thread; every number exact, and the raw
    file gives the same analysis as the packed one."""
    path = ctx.path("threads.prof")
    run = ctx.memtrack("run", f"--profile={path}", f"--keep-results={ctx.path('kept')}",
                       ctx.program("threads_pattern"))
    ctx.require_eq(run.exit, 0, "memtrack run --profile: exit status", run)
    report, run = report_json(ctx, path, "--sites=100")
    sites = sites_by_leaf(report)
    ours = ("make_temporary", "hand_over", "leak_one", "build_peak")
    got = {leaf: [(s["allocations"], s["allocated_bytes"], s["temporary"], s["leaked_bytes"],
                   s["peak_bytes"]) for s in sites.get(leaf, [])] for leaf in ours}
    ctx.expect_eq(got, {"make_temporary": [(8000, 384_000, 8000, 0, 0)],
                        "hand_over": [(1000, 64_000, 0, 0, 0)],
                        "leak_one": [(4, 4000, 0, 4000, 4000)],
                        "build_peak": [(4, 1_048_576, 0, 0, 1_048_576)]}, "sites", run)
    # The C runtime's own blocks (each thread's TLS vector, kept with its cached stack).
    others = [s for s in report["sites"] if leaf_of(s) not in ours]
    for site in others:
        module = site["stack"][0]["module"]
        ctx.expect("ld-linux" in module or "libc.so" in module,
                   f"a site of the C runtime only: {site['stack'][0]}", run)
    other = {key: sum(s[key] for s in others)
             for key in ("allocations", "allocated_bytes", "leaked_bytes", "leaked_blocks",
                         "peak_bytes", "peak_blocks")}
    # 4 x (2,000 x 48 + 250 x 64 + 1,000) + 4 x 262,144 bytes
    ctx.expect_eq(report["summary"],
                  {"allocations": 9008 + other["allocations"],
                   "frees": 9004 + other["allocations"] - other["leaked_blocks"],
                   "reallocs": 0, "allocated_bytes": 1_500_576 + other["allocated_bytes"],
                   "temporary": 8000, "leaked_bytes": 4000 + other["leaked_bytes"],
                   "leaked_blocks": 4 + other["leaked_blocks"], "unknown_frees": 0},
                  "JSON summary", run)
    ctx.expect_eq((report["peak"]["bytes"], report["peak"]["blocks"]),
                  (1_052_576 + other["peak_bytes"], 8 + other["peak_blocks"]),
                  "JSON peak: build_peak's blocks and the leaked ones", run)
    ctx.expect(report["complete"], "the process ended normally", run)
    expect_raw_matches(ctx, report, run)


@cli_test
def test_profile_more_threads_than_buffers(ctx):
    """many_threads_pattern.c: 300 threads alive at once (more than the runtime's 256
    per-thread buffers: the rest share one), buffers given back as threads exit, and one
    thread whose batch stays open while main records 400,000 events; every number exact,
    nothing lost, and the raw file gives the same analysis."""
    path = ctx.path("many.prof")
    run = ctx.memtrack("run", f"--profile={path}", f"--keep-results={ctx.path('kept')}",
                       ctx.program("many_threads_pattern"))
    ctx.require_eq(run.exit, 0, "memtrack run --profile: exit status", run)
    ctx.expect("lost" not in run.stderr, "run: no events lost", run)
    report, run = report_json(ctx, path, "--sites=100")
    sites = sites_by_leaf(report)
    got = {leaf: sorted((s["allocations"], s["allocated_bytes"], s["temporary"],
                         s["leaked_bytes"]) for s in sites.get(leaf, []))
           for leaf in ("make_temporary", "hand_over", "slow_one")}
    ctx.expect_eq(got, {"make_temporary": [(3000, 144_000, 3000, 0),
                                           (200_000, 3_200_000, 200_000, 0)],
                        "hand_over": [(300, 30_000, 0, 0)],
                        # freed with no allocation of its thread in between: temporary
                        "slow_one": [(1, 1000, 1, 0)]}, "sites", run)
    ctx.expect_eq(report["summary"]["unknown_frees"], 0, "every free names its block", run)
    ctx.expect(report["complete"], "the process ended normally", run)
    expect_raw_matches(ctx, report, run)


@cli_test
def test_profile_killed(ctx):
    """A process killed by SIGKILL loses at most each thread's open batch (64 KiB): what
    reached the raw file is packed and analysed, symbolized with the module map of the start,
    and the profile says it is incomplete."""
    path = ctx.path("killed.prof")
    run = ctx.memtrack("run", f"--profile={path}", ctx.program("churn_events"), "300000",
                       "kill")
    ctx.require_eq(run.exit, 128 + 9, "memtrack run: the program's SIGKILL status", run)
    ctx.expect(re.search(r"\(([\d,]+) events, [\d,]+ bytes; the process did not end "
                         r"normally\)", run.stderr), "run: the profile is incomplete", run)
    report, run = report_json(ctx, path)
    ctx.expect(not report["complete"], "JSON: complete is false", run)
    events = report["summary"]["allocations"] + report["summary"]["frees"]
    # 600,000 events of 3 bytes or more: all but the last buffer (1 MiB) reached the file.
    ctx.expect(600_000 - (1 << 20) // 3 <= events < 600_000, f"events kept: {events}", run)
    ctx.expect_eq(report["summary"]["unknown_frees"], 0, "no free without its allocation", run)
    # Only the module map of the start reached the file: it names the main program too.
    frames = sorted({(s["stack"][0]["function"], s["stack"][1]["function"])
                     for s in report["sites"]})
    ctx.expect_eq(frames, [(f"site{n}", "main") for n in range(8)],
                  "the sites are symbolized in the program (site0..site7 called by main)", run)


@cli_test
def test_profile_pprof(ctx):
    """--pprof of a heap profile, read by go tool pprof: every sample type adds up to the
    pattern's numbers (alloc_*: all allocations, inuse_*: not freed at the end, peak_*: held
    at the peak, temporary_objects), inuse_space is pprof's default, make_temporary has the
    temporaries; --format=pprof writes the same bytes; leak-report formats are refused."""
    from test_profiles import go_pprof, memtrack_binary, raw_samples, top_rows
    path, _ = record(ctx)
    out = ctx.path("hp.pb.gz")
    run = ctx.memtrack("report", path, f"--pprof={out}")
    ctx.require_eq(run.exit, 0, "memtrack report PROFILE --pprof: exit status", run)
    raw = go_pprof(ctx, "-raw", out, run=run)
    ctx.expect(
        "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt] "
        "peak_objects/count peak_space/bytes temporary_objects/count" in raw,
        "pprof -raw: the sample types in order", run)
    totals = [sum(column) for column in zip(*(values for values, _ in raw_samples(raw)))]
    ctx.expect_eq(totals, [1016, ALLOCATED, 10, 10_000, 10, PEAK_BYTES, 1000],
                  "sums of alloc_objects, alloc_space, inuse_objects, inuse_space, "
                  "peak_objects, peak_space, temporary_objects", run)
    default = go_pprof(ctx, "-top", out, run=run)
    ctx.expect_line(default, "Type: inuse_space", "pprof's default sample type", run)
    temporary = go_pprof(ctx, "-top", "-sample_index=temporary_objects", out, run=run)
    ctx.expect_eq(top_rows(temporary).get("make_temporary"), ("1000", "1000"),
                  "temporary_objects of make_temporary", run)
    peak = go_pprof(ctx, "-top", "-sample_index=peak_space", out, run=run)
    ctx.expect_eq(top_rows(peak).get("build_peak"), ("1024kB", "1024kB"),
                  "build_peak at the peak",
                  run)
    status, same, stderr = memtrack_binary(ctx, "report", path, "--format=pprof")
    ctx.expect_eq((status, stderr), (0, ""), "report PROFILE --format=pprof", run)
    with open(out, "rb") as f:
        ctx.expect(same == f.read(), "--format=pprof writes what --pprof wrote", run)
    for option in ("--sarif=x.sarif", "--junit=x.xml", "--speedscope=x.json"):
        refused = ctx.memtrack("report", path, option)
        ctx.expect_error(refused, 125, f"{option.split('=')[0]} writes leak reports; a heap "
                         "profile has text, --json, --collapsed, --massif, --pprof and --html",
                         what=option)


def page_model(ctx, page, run):
    """The model an HTML page carries (html-report.md: JSON, gzip, base64)."""
    with open(page, encoding="utf-8") as f:
        html = f.read()
    match = re.search(r'id="memtrack-data"[^>]*>([^<]*)<', html)
    ctx.require(match, f"{page} carries no data element", run)
    return json.loads(gzip.decompress(base64.b64decode(match.group(1))))


@cli_test
def test_profile_html(ctx):
    """--html for a profile: the page's model is the JSON report as it is, plus a finer chart
    (at most 1,000 points) and the flame graphs' stacks; the other outputs keep the JSON's
    series. The page itself is checked in a browser by tests/html/profile_test.js."""
    from test_profiles import memtrack_binary
    path, _ = record(ctx)
    page = ctx.path("hp.html")
    report, run = report_json(ctx, path, f"--html={page}")
    model = page_model(ctx, page, run)
    ctx.expect_eq(model["profile"], report, "the page carries the JSON report", run)
    chart = model["chart"]
    points = len(chart["time_us"])
    ctx.expect(len(report["series"]["points"]) < points <= 1000,
               f"the chart has {points} points, the JSON {len(report['series']['points'])}", run)
    ctx.expect_eq(max(chart["heap_max_bytes"]), PEAK_BYTES, "the chart's highest live bytes", run)
    ctx.expect_eq(sum(chart["allocated_bytes"]), ALLOCATED, "the chart's bytes allocated", run)
    ctx.expect_eq(sum(chart["allocations"]), 1016, "the chart's allocations", run)
    alone, run = report_json(ctx, path)
    ctx.expect_eq(alone["series"], report["series"], "--html leaves the JSON's series alone", run)
    frames = model["frames"]
    leaves = {}
    for stack in model["stacks"]:
        leaves.setdefault(frames[stack["frames"][0]]["function"], []).append(stack)
    ctx.expect_eq(([s["peak_bytes"] for s in leaves["build_peak"]],
                   sorted(s["leaked_bytes"] for s in leaves["grow_cache"]),
                   [s["temporary"] for s in leaves["make_temporary"]]),
                  ([1_048_576], [5000, 5000], [1000]), "the flame graphs' stacks", run)
    ctx.expect_eq(frames[leaves["grow_cache"][0]["frames"][-1]]["function"], "main",
                  "a stack's frames end at main", run)
    status, same, stderr = memtrack_binary(ctx, "report", path, "--format=html")
    with open(page, "rb") as f:
        ctx.expect((status, stderr, same) == (0, "", f.read()),
                   "--format=html writes what --html wrote", run)
