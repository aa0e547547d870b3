"""Reads runtime/link/interposed.inc, the one list of the functions the runtime interposes,
for the build scripts and checks that are not C++ (make_static_archive.py,
check_interposed_doc.py)."""
import pathlib
import re

ENTRY = re.compile(r"^MEMTRACK_(REAL\((\w+),\s*(\w+),\s*\w+,\s*(\w+)|HOOK\((\w+))", re.M)
SIZE_T_BRANCH = re.compile(r"^#(if|else|endif)", re.M)


def hooks(inc: str, is_64_bit: bool) -> dict:
    """Every hook the .inc lists for a target, as {symbol: link}: link is "LINKED" or
    "PRELOAD_ONLY" for hooks with a real function, None for the others. The .inc's only
    conditional is on the size of size_t (operator new's mangled names): its first branch is
    the 64-bit one."""
    text = pathlib.Path(inc).read_text()
    out = {}
    branch = None  # None outside #if, else True in the 64-bit branch
    tokens = sorted([(m.start(), "cond", m.group(1)) for m in SIZE_T_BRANCH.finditer(text)] +
                    [(m.start(), "entry", m) for m in ENTRY.finditer(text)], key=lambda t: t[0])
    for _, kind, value in tokens:
        if kind == "cond":
            branch = {"if": True, "else": False, "endif": None}[value]
            continue
        if branch is not None and branch != is_64_bit:
            continue
        if value.group(5):
            out[value.group(5)] = None
        else:
            out[value.group(4)] = value.group(3)
    return out
