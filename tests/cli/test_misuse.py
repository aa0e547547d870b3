"""Allocator misuse errors (docs/cli.md, "Allocator misuse errors"): cli_misuse (C) and
cli_misuse_cpp (C++) commit one misuse per run, named by their first argument. The bad call,
the allocation and the first free are on lines marked BAD-<case>, ALLOC-<case> (C++),
ALLOC-block and FREE-block (C) in programs/misuse.c and programs/misuse.cpp. Each test
checks the JSON error (kind, occurrences, frame 0 of the bad call with its exact file:line,
of the allocation and of the first free), the text report's title for it, and that the
program ran to its end: the runtime does not pass a double or invalid free on, and passes a
mismatched one on to the allocator, so nothing crashes and nothing leaks."""

import os
import re

from cli_harness import cli_test, text_by_pid

C_SOURCE = "misuse.c"
CPP_SOURCE = "misuse.cpp"


def run_misuse(ctx, program, case, *args, options=(), exit=0):
    """memtrack run --json [options] cli_PROGRAM CASE ARGS: the run and its one process.
    The program must have printed "CASE: done" (exit 0) unless another `exit` is expected."""
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program(program), case,
                       *args)
    ctx.require_eq(run.exit, exit, "exit status", run)
    if exit == 0:
        ctx.expect_eq(run.stdout, f"{case}: done\n",
                      "the program's stdout (it must run to its end)", run)
    processes = ctx.read_json(json_path, run)["processes"]
    ctx.require_eq(len(processes), 1, "number of processes", run)
    return run, processes[0]


def only_error(ctx, run, process, occurrences):
    errors = process["errors"]
    ctx.require_eq(len(errors), 1, f"number of errors (kinds {[e['kind'] for e in errors]})", run)
    ctx.expect_eq((process["summary"]["errors"], process["summary"]["error_occurrences"]),
                  (1, occurrences), "summary errors, error_occurrences", run)
    ctx.expect_eq(errors[0]["occurrences"], occurrences, "occurrences", run)
    return errors[0]


def expect_frame0(ctx, run, stack, source, marker, function, what):
    """Frame 0 of `stack` is `function` at the line of `source` marked `marker`."""
    if not ctx.expect(stack, f"{what}: empty stack", run):
        return
    top = stack[0]
    ctx.expect_eq((top["function"], top["file"], top["line"]),
                  (function, ctx.source(source), ctx.marker_line(source, marker)),
                  f"{what}: frame 0 function, file, line (marked {marker})", run)


def expect_text_title(ctx, run, error):
    """The text report has the error's block, titled with its JSON description."""
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    times = f", {error['occurrences']} times" if error["occurrences"] > 1 else ""
    ctx.expect_line("\n".join(lines), f"{error['description']}{times}:", "text report title",
                    run)
    contexts = "1 context"
    errors = "1 error" if error["occurrences"] == 1 else f"{error['occurrences']} errors"
    ctx.expect_line("\n".join(lines), f"ERROR SUMMARY: {errors} from {contexts}",
                    "text report ERROR SUMMARY", run)


def expect_no_leaks(ctx, run, process):
    ctx.expect_eq((process["summary"]["leaked_bytes"], process["leaks"]), (0, []),
                  "leaked bytes, leak groups (the program frees what it allocates)", run)


# --- C: double, invalid and realloc-after frees ---------------------------------------------


@cli_test
def test_misuse_double_free(ctx):
    """free_block() frees the block, then free_again() frees it 3 times more, from one call
    site: one error, 3 occurrences, with the block's allocation and first free."""
    run, process = run_misuse(ctx, "misuse", "double_free", "3")
    error = only_error(ctx, run, process, 3)
    ctx.expect_eq(error["kind"], "double_free", "kind", run)
    ctx.expect_eq(error["free_call"], "free", "free_call", run)
    ctx.expect_eq(error["block"], {"address": error["address"], "size": 100}, "block", run)
    ctx.expect_eq(error["description"], f"Double free of {error['address']} (100 bytes)",
                  "description", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-double_free", "free_again",
                  "bad call")
    expect_frame0(ctx, run, error["alloc_stack"], C_SOURCE, "ALLOC-block", "make_block",
                  "allocation")
    expect_frame0(ctx, run, error["free_stack"], C_SOURCE, "FREE-block", "free_block",
                  "first free")
    expect_no_leaks(ctx, run, process)
    ctx.expect_eq(len(error["free_stack"]), 1,
                  "first free: only the calling frame without free_stacks", run)
    # The whole text block: title, bad call, "freed at", "allocated at", each cut below main.
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    text = "\n".join(lines)
    line = ctx.marker_line(C_SOURCE, "BAD-double_free")
    block = re.search(
        rf"^Double free of {error['address']} \(100 bytes\), 3 times:\n"
        rf"   #0 free_again \({re.escape(ctx.source(C_SOURCE))}:{line}(:\d+)?\) cli_misuse\n"
        r"(   #\d+ .*\n)*?   #\d+ main .*\n"
        r" the block was freed at:\n   #0 free_block .*\n"
        r" and allocated at:\n   #0 make_block .*\n(   #\d+ .*\n)*?   #\d+ main .*\n\n",
        text + "\n", re.MULTILINE)
    ctx.expect(block, "text report: the double free's block (title, bad call and allocation "
               "cut below main, the first free's calling frame, blank line)", run)
    ctx.expect_line(text, "ERROR SUMMARY: 3 errors from 1 context", "text report", run)
    ctx.expect(len(lines) > 1 and lines[1].startswith("HEAP SUMMARY:"),
               "a process with errors gets the full report, not the one-line 'no leaks'", run)
    ctx.expect(any(l.startswith("LEAK SUMMARY: no leaks (") for l in lines),
               "text report: 'LEAK SUMMARY: no leaks (...)'", run)


@cli_test
def test_misuse_double_free_sampled(ctx):
    """In the sampled mode a block the sampler passed by is freed without a quarantine entry
    (docs/sampling.md): its double free is still caught, from the heap's own state, with the
    bad call's stack; the block's allocation, first free and size are unknown, and said so by
    their absence. A 1 GiB interval leaves the 100-byte block unsampled for every seed but a
    vanishing few; the seed is fixed."""
    run, process = run_misuse(ctx, "misuse", "double_free", "3",
                              options=("--sample=1GiB", "--sample-seed=7"))
    error = only_error(ctx, run, process, 3)
    ctx.expect_eq(error["kind"], "double_free", "kind", run)
    ctx.expect_eq(error["description"], f"Double free of {error['address']}", "description",
                  run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-double_free", "free_again",
                  "bad call")
    ctx.expect_eq((error.get("alloc_stack", []), error.get("free_stack", [])), ([], []),
                  "no allocation or first-free stack for an unsampled block", run)
    expect_no_leaks(ctx, run, process)
    expect_text_title(ctx, run, error)


@cli_test
def test_misuse_double_free_other_thread(ctx):
    """A thread frees the block and exits, a second thread frees blocks of its own and exits,
    then the main thread frees the block twice: the first free is still found (the exited
    thread's quarantine ring stays searchable), with its calling frame and the allocation."""
    run, process = run_misuse(ctx, "misuse", "double_free_other_thread", "2")
    error = only_error(ctx, run, process, 2)
    ctx.expect_eq(error["kind"], "double_free", "kind", run)
    ctx.expect_eq(error["block"], {"address": error["address"], "size": 100}, "block", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-double_free", "free_again",
                  "bad call")
    expect_frame0(ctx, run, error["alloc_stack"], C_SOURCE, "ALLOC-block", "make_block",
                  "allocation")
    expect_frame0(ctx, run, error["free_stack"], C_SOURCE, "FREE-block", "free_block",
                  "first free")
    expect_no_leaks(ctx, run, process)


@cli_test
def test_misuse_double_free_reused(ctx):
    """A thread frees the block and exits; the main thread is handed the same address again,
    frees it, then frees it once more: of the two frees of that address in two threads'
    quarantine rings, the error names the later one, with its own allocation."""
    run, process = run_misuse(ctx, "misuse", "double_free_reused", "1")
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "double_free", "kind", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-double_free", "free_again",
                  "bad call")
    expect_frame0(ctx, run, error["alloc_stack"], C_SOURCE, "ALLOC-reused", "make_again",
                  "allocation (the address handed out again, not its first block)")
    expect_frame0(ctx, run, error["free_stack"], C_SOURCE, "FREE-reused", "free_reused",
                  "first free (the later of the two frees of the address)")
    expect_no_leaks(ctx, run, process)


@cli_test
def test_misuse_double_free_full_free_stack(ctx):
    """With free_stacks=1 the first free's whole stack is recorded, down to main."""
    json_path = ctx.path("report.json")
    run = ctx.memtrack("run", f"--json={json_path}", ctx.program("misuse"), "double_free", "1",
                       env=ctx.env(MEMTRACK_OPTIONS="free_stacks=1"))
    ctx.require_eq(run.exit, 0, "exit status", run)
    error = only_error(ctx, run, ctx.read_json(json_path, run)["processes"][0], 1)
    expect_frame0(ctx, run, error["free_stack"], C_SOURCE, "FREE-block", "free_block",
                  "first free")
    functions = [frame["function"] for frame in error["free_stack"]]
    ctx.expect("main" in functions, f"first free stack reaches main: {functions}", run)


@cli_test
def test_misuse_free_stack(ctx):
    run, process = run_misuse(ctx, "misuse", "free_stack")
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "invalid_free", "kind", run)
    ctx.expect_eq((error["block"], error["alloc_call"], error["free_call"]),
                  (None, "none", "free"), "block, alloc_call, free_call", run)
    ctx.expect_eq(error["description"],
                  f"Invalid free of {error['address']}: it points to the stack", "description",
                  run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-free_stack", "free_stack_pointer",
                  "bad call")
    ctx.expect_eq((error["alloc_stack"], error["free_stack"]), ([], []),
                  "allocation and free stacks (none for a stack address)", run)
    expect_text_title(ctx, run, error)
    expect_no_leaks(ctx, run, process)


@cli_test
def test_misuse_free_global(ctx):
    run, process = run_misuse(ctx, "misuse", "free_global")
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "invalid_free", "kind", run)
    ctx.expect_eq((error["block"], error["alloc_call"], error["free_call"]),
                  (None, "none", "free"), "block, alloc_call, free_call", run)
    ctx.expect_eq(error["description"],
                  f"Invalid free of {error['address']}: it points to global data (not heap "
                  "memory)", "description", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-free_global", "free_global_pointer",
                  "bad call")
    ctx.expect_eq((error["alloc_stack"], error["free_stack"]), ([], []),
                  "allocation and free stacks (none for global data)", run)
    expect_text_title(ctx, run, error)
    expect_no_leaks(ctx, run, process)


@cli_test
def test_misuse_free_interior(ctx):
    """free(block + 16): an invalid free inside a live 100-byte block, which is then freed
    correctly (so it is no leak)."""
    run, process = run_misuse(ctx, "misuse", "free_interior")
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "invalid_free", "kind", run)
    block = error["block"]
    if ctx.expect(block is not None, "block: the one containing the pointer", run):
        ctx.expect_eq(block["size"], 100, "block size", run)
        ctx.expect_eq(int(error["address"], 16) - int(block["address"], 16), 16,
                      "offset of the pointer in the block", run)
    ctx.expect_eq((error["alloc_call"], error["free_call"]), ("malloc", "free"),
                  "alloc_call, free_call", run)
    ctx.expect_eq(error["description"],
                  f"Invalid free of {error['address']}, 16 bytes inside a block of 100 bytes",
                  "description", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-free_interior", "free_inside",
                  "bad call")
    expect_frame0(ctx, run, error["alloc_stack"], C_SOURCE, "ALLOC-block", "make_block",
                  "allocation")
    ctx.expect_eq(error["free_stack"], [], "free stack (the block was not freed before)", run)
    expect_text_title(ctx, run, error)
    expect_no_leaks(ctx, run, process)


@cli_test
def test_misuse_realloc_after_free(ctx):
    run, process = run_misuse(ctx, "misuse", "realloc_after_free")
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "realloc_after_free", "kind", run)
    ctx.expect_eq(error["free_call"], "realloc", "free_call", run)
    ctx.expect_eq(error["block"], {"address": error["address"], "size": 100}, "block", run)
    ctx.expect_eq(error["description"], f"realloc of freed pointer {error['address']} (100 bytes)",
                  "description", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-realloc_after_free", "realloc_freed",
                  "bad call")
    expect_frame0(ctx, run, error["alloc_stack"], C_SOURCE, "ALLOC-block", "make_block",
                  "allocation")
    expect_frame0(ctx, run, error["free_stack"], C_SOURCE, "FREE-block", "free_block",
                  "first free")
    expect_text_title(ctx, run, error)
    expect_no_leaks(ctx, run, process)


# --- C++: mismatched families -----------------------------------------------------------------

# case -> (alloc_call, free_call, block size, allocating function, releasing function, how the
# description names the two calls)
MISMATCHES = {
    "malloc_delete": ("malloc", "delete", 100, "malloc_obj()", "delete_malloced(Obj*)",
                      "malloc released with delete"),
    "new_free": ("new", "free", 100, "new_obj()", "free_newed(Obj*)", "new released with free"),
    "new_array_delete": ("new[]", "delete", 400, "new_array()",
                         "delete_array_with_delete(Obj*)", "new[] released with delete"),
    "new_delete_array": ("new", "delete[]", 100, "new_single()",
                         "delete_single_with_delete_array(Obj*)", "new released with delete[]"),
    "aligned_new_delete": ("new", "delete", 128, "new_aligned()", "delete_aligned_plainly(Big*)",
                           "aligned new released with delete"),
}


def check_mismatch(ctx, case):
    alloc_call, free_call, size, allocator, releaser, calls = MISMATCHES[case]
    run, process = run_misuse(ctx, "misuse_cpp", case)
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "mismatched_free", "kind", run)
    ctx.expect_eq((error["alloc_call"], error["free_call"]), (alloc_call, free_call),
                  "alloc_call, free_call", run)
    ctx.expect_eq(error["block"], {"address": error["address"], "size": size}, "block", run)
    ctx.expect_eq(error["description"], f"Mismatched free: a block from {calls}",
                  "description", run)
    expect_frame0(ctx, run, error["stack"], CPP_SOURCE, f"BAD-{case}", releaser, "bad call")
    expect_frame0(ctx, run, error["alloc_stack"], CPP_SOURCE, f"ALLOC-{case}", allocator,
                  "allocation")
    ctx.expect_eq(error["free_stack"], [], "free stack", run)
    expect_text_title(ctx, run, error)
    # The block is still released (glibc's malloc and new share one heap).
    expect_no_leaks(ctx, run, process)


@cli_test
def test_misuse_malloc_delete(ctx):
    check_mismatch(ctx, "malloc_delete")


@cli_test
def test_misuse_new_free(ctx):
    check_mismatch(ctx, "new_free")


@cli_test
def test_misuse_new_array_delete(ctx):
    check_mismatch(ctx, "new_array_delete")


@cli_test
def test_misuse_new_delete_array(ctx):
    check_mismatch(ctx, "new_delete_array")


@cli_test
def test_misuse_aligned_new_delete(ctx):
    check_mismatch(ctx, "aligned_new_delete")


@cli_test
def test_misuse_clean(ctx):
    """Every family (malloc, calloc, realloc, posix_memalign, strdup, new, new[], aligned
    new and new[]) released the right way: no error, and the one-line report."""
    run, process = run_misuse(ctx, "misuse_cpp", "clean")
    ctx.expect_eq(process["errors"], [], "errors", run)
    ctx.expect_eq((process["summary"]["errors"], process["summary"]["error_occurrences"]),
                  (0, 0), "summary errors, error_occurrences", run)
    expect_no_leaks(ctx, run, process)
    lines = next(iter(text_by_pid(run.stderr).values()), [])
    ctx.expect(len(lines) == 1 and ": no leaks (" in lines[0],
               "expected the one-line 'no leaks' report", run)
    ctx.expect("ERROR SUMMARY" not in run.stderr, "no ERROR SUMMARY without errors", run)


# --- options ------------------------------------------------------------------------------------


@cli_test
def test_misuse_error_exitcode(ctx):
    """An allocator misuse error alone (no leaks) makes --error-exitcode apply, in memtrack run
    and in memtrack report; without errors or leaks it does not."""
    keep = ctx.path("results")
    run, process = run_misuse(ctx, "misuse", "double_free",
                              options=("--error-exitcode=9", f"--keep-results={keep}"), exit=9)
    ctx.expect_eq(run.stdout, "double_free: done\n", "the program's stdout", run)
    ctx.expect_eq([e["kind"] for e in process["errors"]], ["double_free"], "errors", run)
    expect_no_leaks(ctx, run, process)
    files = [os.path.join(keep, name) for name in os.listdir(keep)]
    ctx.require_eq(len(files), 1, f"result files in {keep}", run)
    run = ctx.memtrack("report", "--error-exitcode=9", *files)
    ctx.expect_run(run, exit=9, stdout="", what="memtrack report --error-exitcode=9")
    run = ctx.memtrack("report", *files)
    ctx.expect_run(run, exit=0, stdout="", what="memtrack report without --error-exitcode")
    run = ctx.memtrack("run", "--error-exitcode=9", ctx.program("misuse_cpp"), "clean")
    ctx.expect_run(run, exit=0, stdout="clean: done\n", what="a clean program")


@cli_test
def test_misuse_halt_on_error_option(ctx):
    """--halt-on-error=yes passes halt_on_error=1 to the runtime (after the user's options,
    so it wins); the default passes nothing."""
    def options_seen(*args, env=None):
        run = ctx.memtrack("run", *args, ctx.program("show_env"), env=env)
        ctx.expect_eq(run.exit, 0, "exit status", run)
        seen = [line for line in run.stdout.splitlines() if line.startswith("MEMTRACK_OPTIONS=")]
        ctx.require_eq(len(seen), 1, "MEMTRACK_OPTIONS lines", run)
        return seen[0], run

    line, run = options_seen("--halt-on-error=yes")
    ctx.expect(line.endswith(":halt_on_error=1"), "--halt-on-error=yes: halt_on_error=1 last",
               run)
    for args in ([], ["--halt-on-error=no"]):
        line, run = options_seen(*args)
        # (The test's directory, in result_dir's path, has halt_on_error in its name.)
        ctx.expect(not re.search(r"[=:]halt_on_error=", line), f"{args}: no halt_on_error option",
                   run)
    line, run = options_seen("--halt-on-error=yes", env=ctx.env(MEMTRACK_OPTIONS="max_frames=8"))
    ctx.expect(line.startswith("MEMTRACK_OPTIONS=max_frames=8:") and
               line.endswith(":halt_on_error=1"), "the user's options first, ours last", run)
    run = ctx.memtrack("run", "--halt-on-error=maybe", ctx.program("echo_args"), "ran")
    ctx.expect_error(run, 125, "--halt-on-error expects yes or no, not 'maybe'")
    run = ctx.memtrack("report", "--halt-on-error=yes", "x.mtr")
    ctx.expect_eq(run.exit, 125, "memtrack report does not take --halt-on-error", run)


@cli_test
def test_misuse_halt_on_error(ctx):
    """With --halt-on-error=yes the runtime writes the report and aborts at the first error:
    the program does not get to print "done", dies by SIGABRT, and the report has the error
    once."""
    run, process = run_misuse(ctx, "misuse", "double_free", "3",
                              options=("--halt-on-error=yes",), exit=128 + 6)
    ctx.expect_eq(run.stdout, "", "the program's stdout (it must not reach its end)", run)
    ctx.expect_eq(process["exit"], {"signal": 6}, "JSON exit", run)
    error = only_error(ctx, run, process, 1)
    ctx.expect_eq(error["kind"], "double_free", "kind", run)
    expect_frame0(ctx, run, error["stack"], C_SOURCE, "BAD-double_free", "free_again",
                  "bad call")
