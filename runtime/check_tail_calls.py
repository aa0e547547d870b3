#!/usr/bin/env python3
"""Fails unless every hook with a fast path reaches its slow path by a jump (a tail call).

The slow paths (hooks/malloc_hooks.cpp: malloc_slow, ...; hooks/new_delete_hooks.cpp:
new_slow, delete_slow) take the hook's return address and frame as their own: the program's
call site, where the stack capture starts and which the misuse reports name. Called rather
than jumped to, they would see the hook as their caller. The compiler makes the call a jump
at -O2 (the call is in tail position and passes its arguments in registers); this checks
that it did, in every build of the runtime given. x86-64 only (objdump's AT&T syntax).
Usage: check_tail_calls.py LIBRARY_OR_ARCHIVE...
"""
import os
import re
import subprocess
import sys

# Hook (mangled) -> the slow path's mangled name must contain this.
HOOKS = {
    "malloc": "malloc_slow",
    "calloc": "calloc_slow",
    "free": "free_slow",
    "_Znwm": "new_slow",
    "_Znam": "new_slow",
    "_ZdlPv": "delete_slow",
    "_ZdaPv": "delete_slow",
    "_ZdlPvm": "delete_slow",
    "_ZdaPvm": "delete_slow",
    "_ZdlPvRKSt9nothrow_t": "delete_slow",
    "_ZdaPvRKSt9nothrow_t": "delete_slow",
}

FUNCTION = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
BRANCH = re.compile(r"\s(call|jmp)q?\s+[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>")
MEMBER = re.compile(r"^(\S+):\s+file format ")
NM_MEMBER = re.compile(r"^(\S+):$")
NM_SYMBOL = re.compile(r"^([0-9a-f]+) [TtWw] (\S+)$")


def bodies(path: str) -> dict:
    """{(member, address): [(mnemonic, target)]} of the branches in each function; aliases
    share one body, which objdump labels with one of their names."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    result, member, current = {}, "", None
    for line in out.splitlines():
        header = MEMBER.match(line)
        if header:
            member = os.path.basename(header.group(1))
            continue
        start = FUNCTION.match(line)
        if start:
            current = result.setdefault((member, int(start.group(1), 16)), [])
            continue
        branch = BRANCH.search(line)
        if branch and current is not None:
            current.append((branch.group(1), branch.group(2)))
    return result


def addresses(path: str) -> dict:
    """{name: (member, address)} of the functions nm lists as defined (a member's name as
    objdump gives it: the file's own name for a shared library)."""
    out = subprocess.run(["nm", "--defined-only", path], check=True, capture_output=True,
                         text=True).stdout
    result, member = {}, os.path.basename(path)
    for line in out.splitlines():
        header = NM_MEMBER.match(line)
        if header:
            member = header.group(1)
            continue
        symbol = NM_SYMBOL.match(line)
        if symbol:
            result[symbol.group(2)] = (member, int(symbol.group(1), 16))
    return result


def check(path: str, prefix: str) -> list:
    if not os.path.isfile(path):
        return [f"{path}: not built"]
    functions = bodies(path)
    where = addresses(path)
    errors = []
    for hook, slow in HOOKS.items():
        name = prefix + hook
        if name not in where:
            errors.append(f"{path}: no function {name}")
            continue
        body = functions.get(where[name])
        if body is None:
            errors.append(f"{path}: no code at {name}")
            continue
        branches = [(kind, target) for kind, target in body if slow in target]
        if not branches:
            errors.append(f"{path}: {name} does not reach its slow path ({slow})")
        for kind, target in branches:
            if kind == "call":
                errors.append(f"{path}: {name} calls {target} instead of jumping to it")
    return errors


def main() -> int:
    errors = []
    for path in sys.argv[1:]:
        # The link-time archive's hooks are renamed __wrap_NAME (make_static_archive.py).
        errors += check(path, "__wrap_" if path.endswith(".a") else "")
    for error in errors:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
