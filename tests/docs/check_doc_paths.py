#!/usr/bin/env python3
"""Fails when a document names a path of the repository that does not exist.

Reads README.md, TESTING.md, docs/*.md and each folder's README.md. A path is a backticked
word or a link target that starts with one of the repository's top-level folders (as git
tracks them) and names a file or folder below it, e.g. `runtime/link/interposed.inc`,
[format](docs/format.md), `profile/`. Suffixes `:LINE` and `#anchor` are dropped; words with
placeholders (`<`, `{`, `*`, `%`, `PID`, `...`) are not paths. Usage: check_doc_paths.py ROOT
"""
import pathlib
import re
import subprocess
import sys

CANDIDATE = re.compile(r"`([^`\s]+)`|\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"[<>{}*%$]|\.\.\.|PID|NAME|\bN\b|\bX\b|\bx\.|/x/|^0x")
# Made by the build or by installing dependencies, never tracked.
GENERATED = {"web/node_modules"}
# A unit named without its ending (`report/result_reader`) or a program by its source.
ENDINGS = ("", ".h", ".cpp", ".c")


def tracked(root: pathlib.Path) -> list:
    out = subprocess.run(["git", "-C", str(root), "ls-files"], check=True, capture_output=True,
                         text=True).stdout
    return out.splitlines()


def documents(files: list) -> list:
    return [f for f in files if f in ("README.md", "TESTING.md") or
            (f.startswith("docs/") and f.endswith(".md")) or
            (f.endswith("/README.md") and f.count("/") == 1)]


def candidates(doc: str, text: str, folders: set) -> list:
    """(line, path) for each word of `text` that names a path of the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in CANDIDATE.finditer(line):
            word = match.group(1) or match.group(2)
            if PLACEHOLDER.search(word) or "://" in word:
                continue
            word = word.split("#", 1)[0]
            word = re.sub(r":\d+(:\d+)?$", "", word)
            if match.group(2):  # a link: relative to the document's folder
                word = str(pathlib.PurePosixPath(doc).parent / word)
            parts = pathlib.PurePosixPath(word).parts
            if len(parts) < 2 or parts[0] not in folders or ".." in parts:
                if not (len(parts) == 1 and word.endswith("/") and word.rstrip("/") in folders):
                    continue
            found.append((number, word))
    return found


def normalize(path: str) -> str:
    parts = []
    for part in pathlib.PurePosixPath(path).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    files = tracked(root)
    folders = {f.split("/", 1)[0] for f in files if "/" in f} - {"build"}
    existing = set(files)
    for f in files:  # every folder on the way
        p = pathlib.PurePosixPath(f).parent
        while str(p) != ".":
            existing.add(str(p))
            p = p.parent
    problems = []
    for doc in documents(files):
        text = (root / doc).read_text()
        for line, word in candidates(doc, text, folders):
            path = normalize(word.rstrip("/"))
            if path not in GENERATED and not any(path + e in existing for e in ENDINGS):
                problems.append(f"{doc}:{line}: names {word}, which is not in the repository")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} path(s) named in the docs do not exist")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
