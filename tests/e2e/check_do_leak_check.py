#!/usr/bin/env python3
"""memtrack_do_leak_check(): -1 without memtrack; under it, 333 lost bytes, an on-demand
report and then the exit report. Usage: check_do_leak_check.py RUNTIME PROGRAM"""
import os
import subprocess
import sys

runtime, program = sys.argv[1], sys.argv[2]
plain = subprocess.run([program], capture_output=True, text=True, check=True)
assert plain.stdout == "lost -1\n", plain.stdout
env = dict(os.environ, LD_PRELOAD=os.path.abspath(runtime))
env.pop("MEMTRACK_OPTIONS", None)
traced = subprocess.run([program], capture_output=True, text=True, env=env, check=True)
problems = []
if traced.stdout != "lost 333\n":
    problems.append(f"stdout {traced.stdout!r}, expected 'lost 333'")
if "on demand (memtrack_do_leak_check)" not in traced.stderr:
    problems.append("no on-demand report header")
if traced.stderr.count("LEAK SUMMARY: 333 bytes in 1 block lost") != 2:
    problems.append("expected two reports of 333 lost bytes (on demand, then at exit)")
if problems:
    print("FAIL do_leak_check:\n  " + "\n  ".join(problems) + "\n--- stderr ---\n" + traced.stderr)
    sys.exit(1)
print("PASS do_leak_check")
