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

FUNCTION = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
BRANCH = re.compile(r"\s(call|jmp)q?\s+[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>")


def bodies(path: str) -> dict:
    """{function name: [(mnemonic, target)]} of the branches in each function."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    result, current = {}, None
    for line in out.splitlines():
        start = FUNCTION.match(line)
        if start:
            current = result.setdefault(start.group(1), [])
            continue
        branch = BRANCH.search(line)
        if branch and current is not None:
            current.append((branch.group(1), branch.group(2)))
    return result


def check(path: str, prefix: str) -> list:
    if not os.path.isfile(path):
        return [f"{path}: not built"]
    functions = bodies(path)
    errors = []
    for hook, slow in HOOKS.items():
        name = prefix + hook
        if name not in functions:
            errors.append(f"{path}: no function {name}")
            continue
        branches = [(kind, target) for kind, target in functions[name] if slow in target]
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
