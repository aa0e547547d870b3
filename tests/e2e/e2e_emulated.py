"""Emulated mode of run_e2e.py: a test program built for another architecture runs under
qemu-user with that architecture's libmemtrack.so preloaded, writes its result files, and the
host's `memtrack report --json` reads and symbolizes them (foreign ELF files through libdw),
or, with --emulated-cli, the target's own memtrack report under the emulator. The JSON is
checked as in CLI mode. Standard library only.

The emulator is named on every run (`qemu-aarch64 -L /usr/aarch64-linux-gnu PROG`): nothing
relies on binfmt_misc. The runtime's variables reach the emulated program through qemu's -E,
so the host's dynamic loader, which runs qemu itself, never sees LD_PRELOAD.
"""

import json
import os
import shutil
import sys

import e2e_case
import e2e_cli
import emulator_run


class EmulatorCannotRun(Exception):
    """The emulator hung on the plain program (without memtrack) on this host, with its
    default CPU model and the fallback one: the case cannot be checked here."""


def emulated_command(emulator, argv, variables=None):
    """The command running argv under `emulator` (a list: qemu and its options), with
    `variables` set in the emulated program's environment only."""
    command = list(emulator)
    for name, value in (variables or {}).items():
        command += ["-E", f"{name}={value}"]
    return command + list(argv)


def target_root(emulator):
    """The target's library root: the emulator's -L value ("" without one)."""
    return emulator[emulator.index("-L") + 1] if "-L" in emulator else ""


def runtime_variables(runtime, options):
    """LD_PRELOAD and MEMTRACK_OPTIONS for a run under `runtime` ("linked": a program that
    carries the runtime itself, so nothing is preloaded)."""
    variables = {} if runtime == "linked" else {"LD_PRELOAD": os.path.abspath(runtime)}
    if options:
        variables["MEMTRACK_OPTIONS"] = ":".join(options)
    return variables


def in_start_order(processes, main_pid):
    """The processes of `memtrack report DIR` (in pid order: no `memtrack run` told it which
    process it started) with the started one first, then the others in the order their pids
    were handed out after it. When the kernel's pid counter wraps between a fork and the
    parent's pid (at 32768 by default, soon on a busy machine), a child's pid is smaller than
    its parent's; pid order alone would take that child for the started program."""
    return sorted(processes, key=lambda p: (p["pid"] != main_pid, p["pid"] < main_pid, p["pid"]))


def run_plain(emulator, program, env, temp_dir):
    """Runs the program without memtrack. Returns its CompletedProcess and the emulator
    command that ran it: with the fallback CPU model if the default one hung (the traced run
    then uses it too). Raises EmulatorCannotRun if both hang."""
    result, _ = emulator_run.run(emulated_command(emulator, [program]), env, temp_dir)
    if not isinstance(result, emulator_run.Hang):
        return result, emulator
    hangs = [result]
    fallback = emulator_run.with_fallback_cpu(emulator)
    if fallback is not None:
        print(f"the emulator hung on the plain program:\n{result.describe()}\n"
              f"trying again with {' '.join(fallback[:3])}", file=sys.stderr)
        result, _ = emulator_run.run(emulated_command(fallback, [program]), env, temp_dir)
        if not isinstance(result, emulator_run.Hang):
            return result, fallback
        hangs.append(result)
    raise EmulatorCannotRun(
        f"{emulator_run.emulator_version(emulator)} did not finish the program without "
        f"memtrack ({emulator_run.host_description()}): the emulator, not memtrack, cannot "
        "run it on this host\n" + "\n".join(h.describe() for h in hangs))


def run_traced(argv, env, temp_dir, result_dir):
    """Runs the program under memtrack; a hang is tried once more (the plain run finished,
    but the emulator's hangs are intermittent on the hosts that have them), then it fails the
    case with what the process was doing."""
    result, pid = emulator_run.run(argv, env, temp_dir)
    if isinstance(result, emulator_run.Hang):
        print(f"the run under memtrack hung, trying once more:\n{result.describe()}",
              file=sys.stderr)
        shutil.rmtree(result_dir)
        os.mkdir(result_dir)
        result, pid = emulator_run.run(argv, env, temp_dir)
    if isinstance(result, emulator_run.Hang):
        sys.exit(f"FAIL: under memtrack, while the plain program finished: "
                 f"{result.describe()}\n{emulator_run.host_description()}")
    return result, pid


def check_emulated(case, args, temp_dir):
    """Returns (failures, the traced CompletedProcess, extra text to show on failure)."""
    emulator = args.emulator.split()
    program = os.path.abspath(args.program)
    env = e2e_case.plain_environment()
    plain_program = os.path.abspath(args.plain_program or program)
    plain, emulator = run_plain(emulator, plain_program, env, temp_dir)
    result_dir = os.path.join(temp_dir, "results")
    os.mkdir(result_dir)
    variables = runtime_variables(args.runtime, case.options + [f"result_dir={result_dir}"])
    traced, main_pid = run_traced(emulated_command(emulator, [program], variables), env,
                                  temp_dir, result_dir)

    failures = []
    if case.report_file:
        failures.append("EXPECT-REPORT-FILE cannot hold with result files (give 'CLI: skip')")
    _, diagnostics, _, other = e2e_cli.split_stderr(traced.stderr)
    e2e_case.check_diagnostics(case, diagnostics, failures)
    e2e_case.check_exit(case, traced, failures)
    e2e_case.compare_plain(case, plain, traced, other, failures)

    json_path = os.path.join(temp_dir, "report.json")
    report_command = [os.path.abspath(args.cli), "report", f"--json={json_path}",
                      f"--sysroot={target_root(emulator)}", result_dir]
    if args.emulated_cli:  # memtrack built for the target: it reads the results natively
        report_command = emulated_command(emulator, report_command)
    report, _ = e2e_case.run(report_command, env, temp_dir)
    text_reports, _, messages, rest = e2e_cli.split_stderr(report.stderr)
    failures += [f"memtrack report printed: {m.rstrip()}" for m in messages + [rest] if m]
    if report.returncode != 0:
        failures.append(f"memtrack report exited with {report.returncode}")
    try:
        with open(json_path, encoding="utf-8") as f:
            raw = f.read()
        document = json.loads(raw)
    except (OSError, ValueError) as e:
        return failures + [f"no JSON report: {e}"], traced, report.stderr
    limit = e2e_cli.MAX_JSON_SHOWN
    shown = raw if len(raw) <= limit else raw[:limit] + "\n[... cut]\n"
    extra = f"--- memtrack report stderr ---\n{report.stderr}--- {json_path} ---\n{shown}"
    document["processes"] = in_start_order(document.get("processes", []), main_pid)
    # The emulated program is this script's child: qemu runs it in its own process.
    e2e_cli.check_document(case, document, os.getpid(), program, text_reports, failures)
    return failures, traced, extra
