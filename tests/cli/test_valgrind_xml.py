"""valgrind's XML (--xml=yes --xml-file, --xml-fd, report --format=xml): for the same program,
memtrack's document has the element tree of valgrind's own (memcheck, protocol 4), compared
with Python's xml.etree after masking what differs between any two runs (addresses, unique
ids, pids, times, paths); descriptors left open make protocol 5 with FdNotClosed errors; the
options behave as valgrind's; and documents stay well-formed whatever the names hold."""

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

from cli_harness import Failure, cli_test

# Element texts that differ from run to run, or between the two tools' installations.
MASKED_TEXT = {"ip", "unique", "pid", "ppid", "time", "obj", "dir", "exe"}

# (program, arguments, extra memtrack options): programs whose every report line valgrind
# 3.19 and memtrack agree on. free_stacks=1 gives memtrack whole free stacks, as valgrind has.
CASES = [
    ("leak_kinds", [], ["--show-leak-kinds=all"]),
    ("leak_one", [], []),
    ("misuse", ["double_free"], []),
    ("misuse", ["free_interior"], []),
    ("misuse", ["realloc_after_free"], []),
    ("misuse_cpp", ["malloc_delete"], []),
    ("misuse_cpp", ["new_array_delete"], []),
]


def parse_xml(ctx, path, run):
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Failure(f"cannot parse the XML {path}: {e}\n{run.describe()}")


def canonical(element):
    """(tag, text, children) with run-specific texts masked. valgrind's own frames (its
    replacement malloc in vgpreload_memcheck) are left out: memtrack's stacks start at the
    allocator's caller. The preamble's lines and valgrind's own arguments (vargv) are tool
    specific: only the elements are kept."""
    if element.tag in ("preamble", "vargv"):
        return (element.tag,)
    text = "*" if element.tag in MASKED_TEXT else (element.text or "").strip()
    text = re.sub(r"0x[0-9a-fA-F]+", "ADDR", text)
    children = [c for c in element
                if not (c.tag == "frame" and "vgpreload" in (c.findtext("obj") or ""))]
    return (element.tag, text, tuple(canonical(c) for c in children))


def document(root):
    """The document as (elements other than errors, in order; the errors before FINISHED,
    sorted; the errors after it, sorted). Sorting: equal-sized loss records may come in either
    order."""
    head, before, after = [], [], []
    finished = False
    for child in root:
        if child.tag == "status" and child.findtext("state") == "FINISHED":
            finished = True
        if child.tag == "error":
            (after if finished else before).append(canonical(child))
        else:
            head.append(canonical(child))
    return head, sorted(before), sorted(after)


def run_valgrind(ctx, program, args, path):
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise Failure("valgrind is not installed (scripts/install-deps.sh installs it)")
    subprocess.run([valgrind, "--xml=yes", f"--xml-file={path}", "--leak-check=full",
                    "--show-leak-kinds=all", program, *args],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ctx.tmp,
                   env=ctx.env(), check=False, timeout=300)


@cli_test
def test_valgrind_xml_same_tree(ctx):
    """Leaks of every kind and the misuse errors: the two documents are equal element for
    element after masking (kinds, what/auxwhat, leakedbytes/leakedblocks, functions, files,
    lines, errorcounts all compared)."""
    env = ctx.env(MEMTRACK_OPTIONS="free_stacks=1")
    for name, args, options in CASES:
        program = ctx.program(name)
        label = " ".join([name, *args])
        theirs_path, ours_path = ctx.path(f"{name}-valgrind.xml"), ctx.path(f"{name}-memtrack.xml")
        run_valgrind(ctx, program, args, theirs_path)
        run = ctx.memtrack("run", "--xml=yes", f"--xml-file={ours_path}", "--track-fds=no",
                           *options, program, *args, env=env)
        ctx.require_eq(run.exit, 0, f"{label}: memtrack run exit status", run)
        theirs = document(parse_xml(ctx, theirs_path, run))
        ours = document(parse_xml(ctx, ours_path, run))
        ctx.require(theirs[1] or theirs[2], f"{label}: valgrind reported nothing", run)
        for part, what in enumerate(("elements outside errors", "errors before FINISHED",
                                     "errors after FINISHED")):
            ctx.expect_eq(ours[part], theirs[part], f"{label}: {what} (memtrack vs valgrind)",
                          run)


@cli_test
def test_valgrind_xml_descriptors_protocol5(ctx):
    """Descriptors left open: protocol 5, one FdNotClosed error per descriptor with its fd,
    path (when it is one) and the stack of the call that opened it; a clean program: protocol
    4 and no errors."""
    path = ctx.path("fds.xml")
    run = ctx.memtrack("run", f"--xml-file={path}", ctx.program("fds"), "leak")
    ctx.require_eq(run.exit, 0, "memtrack run fds leak: exit status", run)
    root = parse_xml(ctx, path, run)
    ctx.expect_eq(root.findtext("protocolversion"), "5", "protocolversion", run)
    fds = [e for e in root.findall("error") if e.findtext("kind") == "FdNotClosed"]
    opened = {e.findtext("stack/frame/fn"): (e.findtext("fd"), e.findtext("path"),
                                             e.findtext("stack/frame/file"),
                                             e.findtext("stack/frame/line")) for e in fds}
    fopen_line = str(ctx.marker_line("fds.c", "// FOPEN"))
    open_line = str(ctx.marker_line("fds.c", "// OPEN"))
    ctx.expect_eq(opened, {"open_log": ("3", None, "fds.c", fopen_line),
                           "open_data": ("4", None, "fds.c", open_line)},
                  "FdNotClosed errors: fn -> (fd, path, file, line)", run)
    ctx.expect(all(e.findtext("what").startswith(f"Open file descriptor {e.findtext('fd')}: ")
                   for e in fds), "what: 'Open file descriptor N: ...'", run)
    clean = ctx.memtrack("run", "--xml=yes", "--xml-fd=1", ctx.program("no_leak"))
    root = ET.fromstring(clean.stdout)
    ctx.expect_eq((root.findtext("protocolversion"), len(root.findall("error"))), ("4", 0),
                  "no_leak: protocol and errors", clean)


@cli_test
def test_valgrind_xml_options(ctx):
    """--xml=yes needs a destination (valgrind's rule); --xml=no turns --xml-file off;
    --xml-fd=1 is stdout; the file is checked before the program runs; %p gives one document
    per process (each with its own pid), without it one document holds every process's
    errors; report --format=xml prints the same document as run wrote."""
    ctx.expect_error(ctx.memtrack("run", "--xml=yes", ctx.program("leak_one")), 125,
                     "--xml=yes needs --xml-file=FILE or --xml-fd=N (where to write the XML)")
    off = ctx.path("off.xml")
    run = ctx.memtrack("run", "--xml=no", f"--xml-file={off}", ctx.program("leak_one"))
    ctx.expect(run.exit == 0 and not os.path.exists(off), "--xml=no: no file written", run)
    ctx.expect_error(ctx.memtrack("run", "--xml-file=/nonexistent/dir/x.xml",
                                  ctx.program("leak_one")), 125,
                     "cannot write --xml-file=/nonexistent/dir/x.xml: No such file or directory")
    ctx.expect_error(ctx.memtrack("run", "--xml-fd=9", ctx.program("leak_one")), 125,
                     "--xml-fd=9: descriptor 9 is not open")
    both = ctx.path("both.txt")
    run = ctx.run(["bash", "-c", f"'{ctx.paths.memtrack}' run --xml-fd=2 "
                   f"'{ctx.program('leak_one')}' 2>'{both}'"])
    with open(both, encoding="utf-8") as f:
        text = f.read()
    ctx.expect("definitely lost: 100 bytes in 1 block" in text and "<?xml" in text,
               f"--xml-fd=2 into a file: the text report and the XML after it\n{text}", run)
    if "<?xml" in text:
        ET.fromstring(text[text.index("<?xml"):])
    results = ctx.mkdir("results")
    run = ctx.memtrack("run", f"--xml-file={ctx.path('x.%p.xml')}", f"--keep-results={results}",
                       ctx.program("fork_exec"), ctx.program("leak_one"))
    ctx.require_eq(run.exit, 0, "fork_exec: exit status", run)
    files = sorted(f for f in os.listdir(ctx.tmp) if re.fullmatch(r"x\.\d+\.xml", f))
    ctx.require_eq(len(files), 2, "%p: one file per process", run)
    for name in files:
        root = parse_xml(ctx, ctx.path(name), run)
        ctx.expect_eq(root.findtext("pid"), name.split(".")[1], f"{name}: <pid>", run)
    report = ctx.memtrack("report", "--format=xml", results)
    ctx.require_eq(report.exit, 0, "memtrack report --format=xml: exit status", report)
    ctx.expect_eq(report.stderr, "", "report --format=xml: nothing on stderr", report)
    merged = ET.fromstring(report.stdout)
    per_process = [parse_xml(ctx, ctx.path(name), run) for name in files]
    ctx.expect_eq(len(merged.findall("error")),
                  sum(len(root.findall("error")) for root in per_process),
                  "report --format=xml: every process's errors in one document", report)
    ctx.expect(any(line.text.startswith("Errors of 2 processes: ")
                   for line in merged.findall("preamble/line")),
               "the preamble says which processes", report)


@cli_test
def test_valgrind_xml_escaped(ctx):
    """Program arguments with markup characters, control characters and bytes that are not
    UTF-8 still give a well-formed document; the arguments read back as given (markup) or
    with '?' (what XML 1.0 cannot carry)."""
    path = ctx.path("args.xml")
    run = ctx.memtrack("run", f"--xml-file={path}", ctx.program("echo_args"), "a<b>&'\"",
                       "tab\there", "bell\x07", "\udcff\udcfe")
    ctx.require_eq(run.exit, 0, "memtrack run echo_args: exit status", run)
    root = parse_xml(ctx, path, run)
    args = [a.text for a in root.findall("args/argv/arg")]
    ctx.expect_eq(args, ["a<b>&'\"", "tab\there", "bell?", "??"], "arguments read back", run)


XML_KIND = {"Leak_DefinitelyLost": "definite", "Leak_IndirectlyLost": "indirect",
            "Leak_PossiblyLost": "possible", "Leak_StillReachable": "reachable"}


def direct_bytes(error):
    """A Leak_* error's own bytes: leakedbytes, or the "direct" part of "X (D direct, I
    indirect) bytes"."""
    match = re.match(r"[\d,]+ \(([\d,]+) direct, [\d,]+ indirect\)", error.findtext("xwhat/text"))
    if match:
        return int(match.group(1).replace(",", ""))
    return int(error.findtext("xwhat/leakedbytes"))


@cli_test
def test_valgrind_xml_every_group(ctx):
    """Two processes with leaks of several kinds, a thread and a shared library, in one
    document: every leak group of the JSON report is one Leak_* error (kind, bytes, blocks,
    innermost function), loss records are numbered 1..n, and the definitely, indirectly and
    possibly lost totals equal the text LEAK SUMMARY's."""
    xml_path, json_path = ctx.path("leaks.xml"), ctx.path("leaks.json")
    run = ctx.memtrack("run", f"--xml-file={xml_path}", f"--json={json_path}",
                       ctx.program("fork_exec"), ctx.program("several_leaks"))
    ctx.require_eq(run.exit, 0, "memtrack run --xml-file: exit status", run)
    root = parse_xml(ctx, xml_path, run)
    report = ctx.read_json(json_path, run)
    leaks = [e for e in root.findall("error") if e.findtext("kind").startswith("Leak_")]
    ours = sorted((XML_KIND[e.findtext("kind")], direct_bytes(e),
                   int(e.findtext("xwhat/leakedblocks")), e.findtext("stack/frame/fn"))
                  for e in leaks)
    expected = sorted((g["kind"], g["bytes"], g["blocks"], g["stack"][0]["function"])
                      for p in report["processes"] for g in p["leaks"])
    ctx.expect_eq(ours, expected, "Leak_* errors vs the JSON report's groups", run)
    numbers = [int(re.search(r"loss record (\d+) of (\d+)$", e.findtext("xwhat/text")).group(1))
               for e in leaks]
    ctx.expect_eq(numbers, list(range(1, len(leaks) + 1)), "loss records numbered in order", run)
    text_totals = {}
    for what, number in re.findall(r"^==\d+==\s+(definitely|indirectly|possibly) lost: "
                                   r"([\d,]+) bytes", run.stderr, re.M):
        text_totals[what] = text_totals.get(what, 0) + int(number.replace(",", ""))
    xml_totals = {}
    words = {"definite": "definitely", "indirect": "indirectly", "possible": "possibly"}
    for kind, size, _, _ in ours:
        xml_totals[words[kind]] = xml_totals.get(words[kind], 0) + size
    ctx.expect_eq(xml_totals, {k: v for k, v in text_totals.items() if v}, "totals: XML vs text",
                  run)
