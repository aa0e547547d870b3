#!/usr/bin/env python3
"""Fails when a C or C++ source of the project is not formatted as .clang-format says, naming
the files (fix: clang-format -i FILE). The files are git's (the checkout's tracked files);
outside a git checkout, every source under the project's folders."""
import pathlib
import subprocess
import sys

SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}
SKIP = ("tests/fuzz/corpus", "tests/fuzz/regressions", "build/", "web/node_modules/")


def sources(root):
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True,
                                text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    return sorted(f for f in listed
                  if pathlib.PurePath(f).suffix in SUFFIXES and not f.startswith(SKIP))


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    clang_format = sys.argv[2] if len(sys.argv) > 2 else "clang-format"
    bad = []
    files = sources(root)
    for i in range(0, len(files), 100):
        batch = files[i:i + 100]
        run = subprocess.run([clang_format, "--dry-run", "-Werror", *batch], cwd=root,
                             capture_output=True, text=True)
        if run.returncode != 0:
            bad += [f for f in batch if f"{f}:" in run.stderr]
    if bad:
        print("not clang-formatted (fix: clang-format -i FILE):", *bad, sep="\n  ")
        return 1
    print(f"{len(files)} files formatted as .clang-format says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
