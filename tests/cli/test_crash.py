"""Crash reports: a program that dies by a signal memtrack's handler catches gets a crash
section (the signal, its cause, the crashing thread's stack to file:line) and the full leak
report, then dies by the same signal; SIGPIPE reports the leaks only; a program's own
handler is kept; the program sees its own signal table."""

import os
import resource
import signal
import subprocess

from cli_harness import cli_test, leak_groups, text_by_pid


def run_crash(ctx, program, *args):
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", "--show-leak-kinds=all",
                       ctx.program(program), *args)
    return run, ctx.read_json(json_path, run)["processes"]


def functions(stack):
    return [frame["function"] for frame in stack]


def check_crash(ctx, mode, sig, first_function, cause):
    run, processes = run_crash(ctx, "crash", mode)
    ctx.require_eq(run.exit, 128 + sig, f"{mode}: exit status (killed by {sig.name})", run)
    process = processes[0]
    ctx.expect_eq(process["exit"], {"signal": int(sig)}, f"{mode}: JSON exit", run)
    crash = process.get("crash")
    ctx.require(crash is not None, f"{mode}: a crash section", run)
    ctx.expect_eq((crash["signal"], crash["name"], crash["cause"]), (int(sig), sig.name, cause),
                  f"{mode}: crash signal and cause", run)
    names = functions(crash["stack"])
    ctx.expect(first_function in names[:4], f"{mode}: {first_function} near the top of "
               f"the crash stack {names}", run)
    ctx.expect("main" in names, f"{mode}: main in the crash stack {names}", run)
    top = next(f for f in crash["stack"] if f["function"] == first_function) \
        if first_function in names else {}
    ctx.expect(top.get("file", "").endswith("crash.c") and top.get("line", 0) > 0,
               f"{mode}: {first_function} has file:line", run)
    ctx.expect_eq([g for g in leak_groups(process) if g[2] == "leak_site"],
                  [(77, 1, "leak_site")], f"{mode}: the leak", run)
    lines = text_by_pid(run.stderr).get(process["pid"], [])
    ctx.expect(any(line.startswith(f"CRASH: {sig.name} (signal {int(sig)})") for line in lines),
               f"{mode}: the text report's CRASH line", run)
    return crash


@cli_test
def test_crash_segv(ctx):
    crash = check_crash(ctx, "segv", signal.SIGSEGV, "crash_segv", "address not mapped")
    ctx.expect_eq(crash.get("address"), "0x0", "the faulting address")


@cli_test
def test_crash_bus(ctx):
    check_crash(ctx, "bus", signal.SIGBUS, "crash_bus",
                "nonexistent physical address (a mapped file shorter than the mapping?)")


@cli_test
def test_crash_fpe(ctx):
    check_crash(ctx, "fpe", signal.SIGFPE, "crash_fpe", "integer divide by zero")


@cli_test
def test_crash_ill(ctx):
    check_crash(ctx, "ill", signal.SIGILL, "crash_ill", "illegal operand")


@cli_test
def test_crash_abort(ctx):
    check_crash(ctx, "abort", signal.SIGABRT, "crash_abort", "raised by the program (abort)")


@cli_test
def test_crash_assert(ctx):
    run, processes = run_crash(ctx, "crash", "assert")
    ctx.require_eq(run.exit, 128 + signal.SIGABRT, "exit status", run)
    ctx.expect("Assertion" in run.stderr, "assert's own message", run)
    names = functions(processes[0]["crash"]["stack"])
    ctx.expect("crash_assert" in names and "main" in names,
               f"crash_assert and main in the crash stack {names}", run)


@cli_test
def test_crash_stack_overflow(ctx):
    run, processes = run_crash(ctx, "crash", "overflow")
    ctx.require_eq(run.exit, 128 + signal.SIGSEGV, "exit status", run)
    crash = processes[0].get("crash")
    ctx.require(crash is not None, "a crash section for the stack overflow", run)
    ctx.expect(functions(crash["stack"])[:1] == ["recurse"], "recurse() crashed", run)
    # The block is reported; whether a stale copy of its pointer in the deep stack keeps it
    # reachable depends on the compiler's register use.
    ctx.expect((77, 1, "leak_site") in leak_groups(processes[0]), "the block is reported", run)


@cli_test
def test_crash_in_thread(ctx):
    run, processes = run_crash(ctx, "crash", "thread")
    ctx.require_eq(run.exit, 128 + signal.SIGSEGV, "exit status", run)
    crash = processes[0]["crash"]
    ctx.expect(crash["thread"] != processes[0]["pid"], "the crashing thread is not main", run)
    names = functions(crash["stack"])
    ctx.expect(names[:2] == ["crash_segv", "thread_main"], f"the thread's stack {names}", run)


@cli_test
def test_crash_in_forked_child(ctx):
    run, processes = run_crash(ctx, "crash", "fork")
    ctx.require_eq(run.exit, 0, "the parent's exit status", run)
    ctx.require_eq(len(processes), 2, "the parent and the crashed child", run)
    child = processes[1]
    ctx.expect_eq(child["exit"], {"signal": 11}, "the child's exit", run)
    ctx.expect(child.get("crash", {}).get("name") == "SIGSEGV", "the child's crash section",
               run)
    ctx.expect("crash" not in processes[0], "no crash section for the parent", run)


@cli_test
def test_crash_cpp_uncaught_exception(ctx):
    run, processes = run_crash(ctx, "crash_throw")
    ctx.require_eq(run.exit, 128 + signal.SIGABRT, "exit status", run)
    process = processes[0]
    names = functions(process["crash"]["stack"])
    ctx.expect("fail_hard(int)" in names and "main" in names, f"the throw site in {names}",
               run)
    ctx.expect("std::terminate()" in names, f"std::terminate in {names}", run)
    ctx.expect((66, 1, "leak_site()") in leak_groups(process), "the new[] leak", run)


@cli_test
def test_crash_sigpipe_leaks_only(ctx):
    run, processes = run_crash(ctx, "crash", "pipe")
    ctx.require_eq(run.exit, 128 + signal.SIGPIPE, "exit status", run)
    ctx.expect("crash" not in processes[0], "no crash section for SIGPIPE", run)
    ctx.expect((77, 1, "leak_site") in leak_groups(processes[0]), "the leak", run)


@cli_test
def test_crash_own_handler_kept(ctx):
    run, processes = run_crash(ctx, "crash", "own")
    ctx.expect_eq(run.exit, 42, "the program's own handler ran and exited 42", run)
    ctx.expect_eq(run.stdout, "own handler\n", "its output", run)
    ctx.expect("crash" not in processes[0], "no crash section", run)


@cli_test
def test_signal_table_unchanged(ctx):
    plain = ctx.run([ctx.program("show_signals")])
    traced = ctx.memtrack("run", ctx.program("show_signals"))
    ctx.require_eq(traced.exit, 0, "exit status", traced)
    ctx.expect_eq(traced.stdout, plain.stdout, "the signal table the program sees", traced)


@cli_test
def test_crash_core_dump_unchanged(ctx):
    """With core dumps allowed, the process dies by the same signal with the same core-dump
    bit with and without the runtime (the kernel's core_pattern decides where cores go)."""
    runtime = os.path.join(os.path.dirname(os.path.dirname(ctx.paths.memtrack)), "runtime",
                           "libmemtrack.so")
    ctx.require(os.path.exists(runtime), f"the runtime at {runtime}")

    def allow_cores():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    outcomes = []
    for env in (ctx.env(), ctx.env(LD_PRELOAD=runtime)):
        cwd = ctx.mkdir(f"run{len(outcomes)}")
        process = subprocess.Popen([ctx.program("crash"), "segv"], env=env, cwd=cwd,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   preexec_fn=allow_cores)
        _, status = os.waitpid(process.pid, 0)
        outcomes.append((os.WIFSIGNALED(status) and os.WTERMSIG(status),
                         os.WIFSIGNALED(status) and os.WCOREDUMP(status)))
    ctx.expect_eq(outcomes[1], outcomes[0], "(signal, core dumped) with the runtime, as without")
    ctx.expect_eq(outcomes[0][0], signal.SIGSEGV, "killed by SIGSEGV")
