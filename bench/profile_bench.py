#!/usr/bin/env python3
"""Heap profile recording and analysis against the leak-only run and heaptrack, on every
workload of bench/compare.py: wall time of `memtrack run` (leak-only), `memtrack run
--profile` and `heaptrack` (medians, alternated within each repetition), the files' sizes
(bytes per million events), and the analysis: `memtrack report PROFILE` against
`heaptrack_print`, wall time and peak RSS. Writes the markdown table into docs/performance.md
between the profile:begin/profile:end markers (and prints it). Standard library only.

Usage: bench/profile_bench.py [--build build/release] [--runs 3] [--only W,W] [--quick]
What is measured and how to read it: docs/performance.md, "Heap profiles".
"""

import argparse
import glob
import os
import re
import shutil
import statistics
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the workloads, their inputs and the measuring helper)

BEGIN_MARK = "<!-- profile:begin -->"
END_MARK = "<!-- profile:end -->"
EVENTS = re.compile(r"heap profile of pid \d+: \S+ \(([\d,]+) events?, ([\d,]+) bytes")


def configs(ctx, workload, argv, env, out_dir):
    memtrack = compare.memtrack_cli(ctx)
    profile = os.path.join(out_dir, f"{workload.name}.mtprof")
    heaptrack = os.path.join(out_dir, f"heaptrack.{workload.name}")
    return {
        "leak-only": ([memtrack, "run", "--", *argv], env),
        "profile": ([memtrack, "run", f"--profile={profile}", "--", *argv], env),
        "heaptrack": (["heaptrack", "-o", heaptrack, *argv], env),
    }


def clean(out_dir, prefix):
    for name in os.listdir(out_dir):
        if name.startswith(prefix):
            os.remove(os.path.join(out_dir, name))


def run_workload(ctx, workload, runs, cap):
    argv = workload.argv(ctx)
    env = {**compare.tool_env(), **workload.env}
    # A directory of its own per workload: the analysis below reads this workload's largest
    # file, not another's left behind (churn's 200 MB file was analysed for every later row).
    out_dir = os.path.join(ctx.tmp, "out", workload.name)
    os.makedirs(out_dir, exist_ok=True)
    times = {name: [] for name in ("leak-only", "profile", "heaptrack")}
    cpus = {name: [] for name in ("leak-only", "profile", "heaptrack")}
    facts = {}
    for repetition in range(runs):
        for name, (cmd, cmd_env) in configs(ctx, workload, argv, env, out_dir).items():
            clean(out_dir, "heaptrack." if name == "heaptrack" else workload.name)
            stderr = os.path.join(ctx.tmp, f"{workload.name}.{name}.stderr")
            run = compare.measure(cmd, cmd_env, stderr, cap)
            if run.timed_out or run.status != 0:
                return {"error": f"{name}: {compare.last_lines(stderr)} (exit {run.status})"}
            times[name].append(run.wall)
            cpus[name].append(run.cpu)
            if name == "profile":
                with open(stderr, encoding="utf-8", errors="replace") as f:
                    found = EVENTS.findall(f.read())
                facts["events"] = sum(int(e.replace(",", "")) for e, _ in found)
                facts["profile_bytes"] = sum(int(b.replace(",", "")) for _, b in found)
                facts["profiles"] = sorted(glob.glob(os.path.join(out_dir, "*.mtprof*")),
                                           key=os.path.getsize)
            if name == "heaptrack":
                files = glob.glob(os.path.join(out_dir, "heaptrack.*"))
                facts["heaptrack_bytes"] = sum(os.path.getsize(f) for f in files)
                facts["heaptrack_files"] = sorted(files, key=os.path.getsize)
    # The analyses of the largest file of each (the main process for every workload here).
    report = compare.measure([compare.memtrack_cli(ctx), "report", facts["profiles"][-1],
                              f"--json={os.devnull}"], env,
                             os.path.join(ctx.tmp, "report.stderr"), cap * 4)
    if report.status != 0:
        return {"error": "memtrack report: " + compare.last_lines(
            os.path.join(ctx.tmp, "report.stderr"))}
    facts["report"] = report
    if facts.get("heaptrack_files"):
        facts["heaptrack_print"] = compare.measure(
            ["heaptrack_print", facts["heaptrack_files"][-1]], env,
            os.path.join(ctx.tmp, "print.stderr"), cap * 4)
    facts["times"] = {k: statistics.median(v) for k, v in times.items()}
    facts["cpus"] = {k: statistics.median(v) for k, v in cpus.items()}
    return facts


def per_million(size, events):
    return f"{size / (events / 1e6) / 1e6:.2f} MB" if events else "-"


def table(results):
    lines = [
        "| workload | events | leak-only | `--profile` | heaptrack | profile / leak-only: "
        "wall, CPU | file: memtrack | file: heaptrack | per 1M events: memtrack, heaptrack | "
        "analysis: memtrack | analysis: heaptrack_print |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for workload, r in results:
        if "error" in r:
            lines.append(f"| {workload.title} | failed: {r['error']} |" + " |" * 9)
            continue
        t = r["times"]
        rep = r["report"]
        hp = r.get("heaptrack_print")
        hp_cell = (f"{hp.wall:.2f} s, {hp.maxrss_kib / 1024:.0f} MiB" if hp and hp.status == 0
                   else f"failed (exit {hp.status})" if hp else "-")
        lines.append(
            f"| {workload.title} | {r['events']:,} | {t['leak-only']:.2f} s | "
            f"{t['profile']:.2f} s | {t['heaptrack']:.2f} s | "
            f"{t['profile'] / t['leak-only']:.2f}x, "
            f"{r['cpus']['profile'] / max(r['cpus']['leak-only'], 1e-3):.2f}x | "
            f"{r['profile_bytes'] / 1e6:.2f} MB | "
            f"{r['heaptrack_bytes'] / 1e6:.2f} MB | "
            f"{per_million(r['profile_bytes'], r['events'])}, "
            f"{per_million(r['heaptrack_bytes'], r['events'])} | "
            f"{rep.wall:.2f} s, {rep.maxrss_kib / 1024:.0f} MiB | {hp_cell} |")
    return "\n".join(lines)


def write_doc(path, text):
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    begin, end = doc.find(BEGIN_MARK), doc.find(END_MARK)
    if begin < 0 or end < begin:
        print(f"profile_bench: no {BEGIN_MARK} ... {END_MARK} in {path}", file=sys.stderr)
        return
    doc = doc[:begin + len(BEGIN_MARK)] + "\n" + text + "\n" + doc[end:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(compare.SOURCE_DIR, "build", "release"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="comma-separated workloads")
    parser.add_argument("--quick", action="store_true", help="compare.py's --quick inputs")
    parser.add_argument("--cap", type=float, default=120.0, help="seconds per run at most")
    parser.add_argument("--doc", default=os.path.join(compare.SOURCE_DIR, "docs",
                                                      "performance.md"))
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    for program in ("heaptrack", "heaptrack_print", compare.GNU_TIME):
        if shutil.which(program) is None:
            sys.exit(f"profile_bench: {program} is not installed (make bench-deps)")
    cache = os.path.join(args.build, "bench", "cache")  # compare.py's generated inputs
    os.makedirs(cache, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    results = []
    with tempfile.TemporaryDirectory(prefix="memtrack-profile-bench-") as tmp:
        ctx = compare.Context(args.build, cache, tmp, args.quick)
        for workload in compare.WORKLOADS:
            if only and workload.name not in only:
                continue
            print(f"profile_bench: {workload.name}", file=sys.stderr)
            results.append((workload, run_workload(ctx, workload, args.runs, args.cap)))
    text = table(results)
    print(text)
    if not args.no_doc:
        write_doc(args.doc, text)


if __name__ == "__main__":
    main()
