#!/usr/bin/env python3
"""Fails when docs/runtime.md's "Interposed functions" section does not name, in backticks,
each C function of runtime/link/interposed.inc (operator new and delete are named there by
their forms, not by their mangled names), or names one the list does not have.
Usage: check_interposed_doc.py REPO_ROOT"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import interposed_table  # noqa: E402


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    listed = set(interposed_table.hooks(str(root / "runtime/link/interposed.inc"), True))
    listed = {name for name in listed if not name.startswith("_Z")}
    doc = (root / "docs/runtime.md").read_text()
    match = re.search(r"^## Interposed functions\n(.*?)^## ", doc, re.S | re.M)
    if not match:
        print("docs/runtime.md: no section '## Interposed functions'")
        return 1
    # The lists come before "Semantics kept exactly as glibc's".
    section = match.group(1).split("Semantics kept", 1)[0]
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", section))
    missing = sorted(listed - named)
    extra = sorted(name for name in named - listed if name not in NOT_FUNCTIONS)
    for name in missing:
        print(f"docs/runtime.md, Interposed functions: does not name `{name}`, which "
              f"runtime/link/interposed.inc lists")
    for name in extra:
        print(f"docs/runtime.md, Interposed functions: names `{name}`, which "
              f"runtime/link/interposed.inc does not list")
    return 1 if missing or extra else 0


# Backticked words of the lists that are not functions.
NOT_FUNCTIONS = {"exec", "main"}

if __name__ == "__main__":
    sys.exit(main())
