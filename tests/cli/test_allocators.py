"""Programs that call jemalloc's, tcmalloc's and mimalloc's own entry points (docs/runtime.md,
"Other allocators"), each linked with the Debian build of its library: every block they leak
through those functions is reported at its file:line with its exact size, in the full and in
the sampled mode (same totals), and jemalloc's functions given blocks of memtrack's heap work
(sallocx, rallocx, dallocx of a malloc'd block crashed before). An allocator memtrack cannot
see is named in a note: a program's own malloc (and the gate then fails), an allocator
linked in under names of its own, mimalloc's heaps once the program makes one."""

from cli_harness import cli_test, text_by_pid

# (program, source, [(marker, bytes)]) of each program's leaks, and the groups of the
# library's own that its runs also report (memcheck reports them too: tcmalloc keeps an 8-byte
# block of MallocExtension::Register that nothing points to).
CASES = {
    "jemalloc": ("jemalloc_api", [("LEAK-mallocx", 333), ("LEAK-zeroed", 4096),
                                  ("LEAK-rallocx", 600), ("LEAK-tcache", 50)], 0),
    "tcmalloc": ("tcmalloc_api", [("LEAK-malloc", 777), ("LEAK-calloc", 100),
                                  ("LEAK-realloc", 300), ("LEAK-memalign", 256),
                                  ("LEAK-new", 48), ("LEAK-newarray", 96),
                                  ("LEAK-new-aligned", 128)], 8),
    "mimalloc": ("mimalloc_api", [("LEAK-malloc", 444), ("LEAK-zalloc", 200),
                                  ("LEAK-mallocn", 120), ("LEAK-aligned", 512),
                                  ("LEAK-strdup", 6)], 0),
}


MIMALLOC_HEAP_NOTE = (
    "the program made heaps of mimalloc's (mi_heap_new): the blocks it allocates in them "
    "(mi_heap_malloc & co.) are not seen (those through malloc, new and mi_malloc are)")


def check_allocator(ctx, name):
    program, leaks, own_bytes = CASES[name]
    source = f"{program}.cpp" if name == "tcmalloc" else f"{program}.c"
    expected = sorted((ctx.marker_line(source, marker), size) for marker, size in leaks)
    total = sum(size for _, size in leaks) + own_bytes
    blocks = len(leaks) + (1 if own_bytes else 0)
    for mode, options in (("full", ()), ("sampled", ("--sample=512KiB",))):
        json_path = ctx.path(f"{mode}.json")
        run = ctx.memtrack("run", f"--json={json_path}", *options, ctx.program(program))
        ctx.require_eq(run.exit, 0, f"exit status ({mode})", run)
        ctx.expect_eq(run.stdout, f"{program}: done\n", f"the program ran to its end ({mode})",
                      run)
        process = ctx.read_json(json_path, run)["processes"][0]
        summary = process["summary"]
        ctx.expect_eq((summary["leaked_bytes"], summary["leaked_blocks"]), (total, blocks),
                      f"leaked bytes and blocks ({mode})", run)
        ctx.expect_eq(process["errors"], [], f"no misuse errors ({mode})", run)
        ctx.expect_eq(MIMALLOC_HEAP_NOTE in process.get("notes", []), name == "mimalloc",
                      f"the note on mimalloc's heaps, for the mimalloc program only ({mode})",
                      run)
        if mode == "full":
            found = sorted((g["stack"][0]["line"], g["bytes"]) for g in process["leaks"]
                           if g["kind"] == "definite" and g["blocks"] == 1 and g["stack"]
                           and g["stack"][0]["file"] == ctx.source(source))
            ctx.expect_eq(found, expected, "each leak at its line with its bytes", run)


@cli_test
def test_allocators_jemalloc(ctx):
    """mallocx (plain, aligned and zeroed, without the thread cache) and rallocx leak; sallocx,
    xallocx, nallocx, rallocx, dallocx and sdallocx work on blocks of memtrack's heap."""
    check_allocator(ctx, "jemalloc")


@cli_test
def test_allocators_tcmalloc(ctx):
    """tc_malloc, tc_calloc, tc_realloc, tc_memalign, tc_new, tc_newarray and tc_new_aligned
    leak; the tc_* frees free."""
    check_allocator(ctx, "tcmalloc")


@cli_test
def test_allocators_mimalloc(ctx):
    """mi_malloc, mi_zalloc, mi_mallocn, mi_malloc_aligned and mi_strdup leak; the other mi_*
    functions free what they are given; mi_heap_* blocks are not seen, and a note says so."""
    check_allocator(ctx, "mimalloc")


@cli_test
def test_allocators_mimalloc_without_heaps(ctx):
    """A mimalloc program that makes no heap of its own gets no note on them (mimalloc itself
    makes none through mi_heap_new), and the gate passes."""
    json_path = ctx.path("noheap.json")
    run = ctx.memtrack("run", f"--json={json_path}", ctx.program("mimalloc_api"), "no-heap")
    ctx.expect_eq(run.exit, 0, "exit status", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq(process.get("notes", []), [], "no note", run)
    ctx.expect_eq(process["summary"]["leaked_bytes"], 1282, "the program's leaks", run)


@cli_test
def test_allocators_own_malloc(ctx):
    """A program that defines malloc itself: memtrack sees none of its blocks, says so in a
    note and in JSON, and --error-exitcode applies (unless --error-for-no-data=no)."""
    json_path = ctx.path("own.json")
    run = ctx.memtrack("run", f"--json={json_path}", "--error-exitcode=7",
                       ctx.program("own_malloc"))
    ctx.expect_eq(run.exit, 7, "exit status: the gate cannot vouch for what it did not see",
                  run)
    ctx.expect_eq(run.stdout, "own_malloc: done\n", "the program ran to its end", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect_eq(process.get("malloc_unseen"), True, "JSON malloc_unseen", run)
    note = ("the program defines malloc itself: the blocks the program allocates through it "
            "are not seen, and the leak totals leave them out")
    ctx.expect(note in process["notes"], f"the note ({process['notes']})", run)
    lines = [line.strip() for lines in text_by_pid(run.stderr).values() for line in lines]
    ctx.expect(f"note: {note}" in lines, "the text report's note", run)
    accepted = ctx.memtrack("run", "--error-exitcode=7", "--error-for-no-data=no",
                            ctx.program("own_malloc"))
    ctx.expect_eq(accepted.exit, 0, "exit status with --error-for-no-data=no", accepted)


@cli_test
def test_allocators_prefixed(ctx):
    """A program with an allocator under names of its own (je_malloc): a note names it, and
    the gate passes on what malloc shows (nothing lost)."""
    json_path = ctx.path("prefixed.json")
    run = ctx.memtrack("run", f"--json={json_path}", "--error-exitcode=7",
                       ctx.program("prefixed_allocator"))
    ctx.expect_eq(run.exit, 0, "exit status", run)
    process = ctx.read_json(json_path, run)["processes"][0]
    ctx.expect("malloc_unseen" not in process, "malloc is memtrack's", run)
    note = ("jemalloc is linked into the program under names of its own: the blocks it "
            "allocates through them are not seen (those through malloc and new are)")
    ctx.expect(note in process["notes"], f"the note ({process['notes']})", run)
    ctx.expect_eq(process["summary"]["leaked_bytes"], 0, "nothing lost through malloc", run)
