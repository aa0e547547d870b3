#!/usr/bin/env python3
"""Runs one libFuzzer target: replays its recorded crash inputs, then fuzzes for a bounded time.

The corpus starts from the checked-in seeds (tests/fuzz/corpus/TARGET/) plus seeds made at test
time:
  --seed-program "PROG ARGS": a program run under libmemtrack.so (--runtime) in a scratch
      directory; its result files (and truncated copies) are seeds. --live-seed-program runs
      one in live mode, so its live result files are seeds too.
  --seed-elf PATH: an ELF file of this machine (a library, a test binary), taken whole.
  --seed-eh-frame PATH: an ELF file whose unwind tables make seeds (eh_frame_seeds.py).
  --profile-seed-program "PROG ARGS": a program recorded with `--memtrack BIN run --profile`;
      its packed and raw heap profiles (and truncated copies) are seeds.
Inputs that once crashed the target are kept in tests/fuzz/regressions/TARGET/ and replayed
first; a crash found now is copied there. Exit status: 0 if nothing crashed.

Usage: run_fuzz.py --fuzzer BIN --target NAME [seed options] [--seconds N]
"""

import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import eh_frame_seeds

FUZZ_DIR = os.path.dirname(os.path.abspath(__file__))


def run_seed_programs(corpus, scratch, runtime, programs, options):
    """Runs each "PROG ARGS..." under the runtime in `scratch`, writing result files into
    `corpus`; returns how many result files appeared."""
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(runtime),
               MEMTRACK_OPTIONS=f'result_dir="{corpus}"' + options)
    for command in programs:
        subprocess.run(command.split(), env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
    return len(glob.glob(os.path.join(corpus, "*.mtr")))


def make_result_seeds(corpus, scratch, args):
    found = run_seed_programs(corpus, scratch, args.runtime, args.seed_program, "")
    if found < len(args.seed_program):
        sys.exit(f"FAIL: expected {len(args.seed_program)} result files in {corpus}, got {found}")
    before = found
    found = run_seed_programs(corpus, scratch, args.runtime, args.live_seed_program,
                              ":expire_ms=100:report_interval_ms=200")
    if args.live_seed_program and not glob.glob(os.path.join(corpus, "live.*.mtr")):
        sys.exit(f"FAIL: no live result file in {corpus} ({found - before} new files)")
    for path in sorted(glob.glob(os.path.join(corpus, "*.mtr")))[:2]:
        with open(path, "rb") as f:
            data = f.read()
        for cut in (16, 32, len(data) // 2, len(data) - 24, len(data) - 1):
            with open(f"{path}.cut-{cut}", "wb") as f:
                f.write(data[:cut])


def make_profile_seeds(corpus, scratch, memtrack, programs):
    """Each program recorded with memtrack run --profile: the packed profile and the raw one
    the runtime wrote (kept with --keep-results), plus cut copies of both."""
    for n, program in enumerate(programs):
        kept = os.path.join(scratch, f"kept{n}")
        packed = os.path.join(corpus, f"profile{n}.packed")
        subprocess.run([memtrack, "run", f"--profile={packed}", f"--keep-results={kept}",
                        *shlex.split(program)], cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        raws = glob.glob(os.path.join(kept, "profile.*.raw"))
        if not os.path.exists(packed) or not raws:
            sys.exit(f"FAIL: no heap profile from {program}")
        shutil.copy(raws[0], os.path.join(corpus, f"profile{n}.raw"))
        for path in (packed, os.path.join(corpus, f"profile{n}.raw")):
            with open(path, "rb") as f:
                data = f.read()
            for cut in (40, len(data) // 2, len(data) - 1):
                with open(f"{path}.cut-{cut}", "wb") as f:
                    f.write(data[:cut])


def replay(fuzzer, regressions):
    inputs = sorted(p for p in glob.glob(os.path.join(regressions, "*")) if os.path.isfile(p))
    inputs = [p for p in inputs if not os.path.basename(p).startswith(".")]
    if not inputs:
        return True
    run = subprocess.run([fuzzer, *inputs], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if run.returncode != 0:
        print(run.stdout[-4000:])
        print("FAIL: a recorded crash input crashes the target again")
        return False
    print(f"replayed {len(inputs)} recorded crash input(s)")
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fuzzer", required=True)
    parser.add_argument("--target", required=True, help="corpus and regressions folder name")
    parser.add_argument("--runtime", help="libmemtrack.so, for --seed-program")
    parser.add_argument("--seed-program", action="append", default=[],
                        help='"PROG ARGS..." to run for a seed result file; repeatable')
    parser.add_argument("--live-seed-program", action="append", default=[],
                        help='"PROG ARGS..." to run in live mode; repeatable')
    parser.add_argument("--seed-elf", action="append", default=[],
                        help="an ELF file to copy into the corpus; repeatable")
    parser.add_argument("--seed-eh-frame", action="append", default=[],
                        help="an ELF file whose unwind tables make seeds; repeatable")
    parser.add_argument("--memtrack", help="the memtrack command, for --profile-seed-program")
    parser.add_argument("--profile-seed-program", action="append", default=[],
                        help='"PROG ARGS..." to record a heap profile of; repeatable')
    parser.add_argument("--seconds", type=int, default=30)
    args = parser.parse_args()

    regressions = os.path.join(FUZZ_DIR, "regressions", args.target)
    if not replay(args.fuzzer, regressions):
        return 1

    work = tempfile.mkdtemp(prefix=f"memtrack-fuzz-{args.target}-")
    try:
        corpus = os.path.join(work, "corpus")
        seeds = os.path.join(FUZZ_DIR, "corpus", args.target)
        if os.path.isdir(seeds):
            shutil.copytree(seeds, corpus)
        else:
            os.mkdir(corpus)
        scratch = os.path.join(work, "scratch")
        os.mkdir(scratch)
        if args.seed_program or args.live_seed_program:
            make_result_seeds(corpus, scratch, args)
        if args.profile_seed_program:
            make_profile_seeds(corpus, scratch, args.memtrack, args.profile_seed_program)
        for elf in args.seed_elf:
            shutil.copy(elf, os.path.join(corpus, os.path.basename(elf)))
        for elf in args.seed_eh_frame:
            if eh_frame_seeds.write_seeds(elf, corpus) == 0:
                sys.exit(f"FAIL: no unwind tables in {elf}")
        if not os.listdir(corpus):
            sys.exit(f"FAIL: no seeds for {args.target}")
        run = subprocess.run([args.fuzzer, corpus, f"-max_total_time={args.seconds}",
                              "-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1",
                              f"-artifact_prefix={work}/"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(run.stdout[-4000:])
        if run.returncode != 0:
            crashes = [p for kind in ("crash", "oom", "timeout", "leak")
                       for p in glob.glob(os.path.join(work, f"{kind}-*"))]
            os.makedirs(regressions, exist_ok=True)
            for crash in crashes:
                shutil.copy(crash, regressions)
            print(f"FAIL: the fuzzer found a crash; input(s) copied to {regressions}: {crashes}")
            return 1
        print(f"PASS: {args.seconds} s of fuzzing found nothing")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
