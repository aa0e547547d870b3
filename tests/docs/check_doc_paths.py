#!/usr/bin/env python3
"""Fails when a document names a path of the repository that does not exist, or a section of a
document that has no such heading. One line per problem: DOC:LINE, what it names, why.

Documents: README.md, TESTING.md, docs/*.md and every folder's README.md. What is checked:

- a word that starts with one of the repository's top-level folders and a slash, in backticks,
  in prose or in a code block (`runtime/link/interposed.inc`, bench/compare.py, `profile/`);
- an upper-case Markdown name in prose (README.md, TESTING.md): at the top or beside the doc;
- a link target that is not a URL ([format](format.md), [TESTING.md](../TESTING.md)), taken
  relative to the document's folder, and its #anchor against the target's headings;
- a section named after a document in quotes, by its heading or the heading's first words:
  runtime.md, "Allocations of its own"; runtime.md "The link-time runtime".

A `:LINE` suffix is dropped. A path that does not exist is forgiven only as a placeholder: it
has `<`, `{`, `*`, `%`, `$` or `...`, a lower-case `x` part (tests/fuzz/regressions/x/) or an
upper-case one (memtrack.PID.json, task/TID/stat; not an upper-case name of a .md file).
build/ and web/node_modules/ are made by the build, never tracked, so not checked.
Files are git's (tracked, or new and not ignored) that exist on disk; outside a git checkout,
every file under ROOT. Usage: check_doc_paths.py ROOT
"""
import pathlib
import re
import subprocess
import sys

# Made by the build or by installing dependencies.
GENERATED = ("build/", "web/node_modules")
# A unit named without its ending (`report/result_reader`) or a program by its source.
ENDINGS = ("", ".h", ".cpp", ".c", ".inc")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CAPS_DOC = re.compile(r"(?<![\w/.-])([A-Z][A-Z0-9_-]*\.md)\b")
# A document and the sections named after it: `runtime.md, "A", "B"` or `runtime.md "A"`.
SECTION_REF = re.compile(r"([\w./-]+\.md)\)?((?:,? \"[^\"]+\")+)")
FENCE = re.compile(r"^\s*(```|~~~)")


def repository_files(root: pathlib.Path) -> list:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others",
                              "--exclude-standard"], check=True, capture_output=True,
                             text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        out = [f for f in out if not f.startswith((".git/",) + GENERATED)]
    return sorted(f for f in set(out) if (root / f).is_file())


def documents(files: list) -> list:
    return [f for f in files if f in ("README.md", "TESTING.md") or
            (f.startswith("docs/") and f.count("/") == 1 and f.endswith(".md")) or
            f.endswith("/README.md")]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"[`*]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(text: str) -> list:
    """The headings of a Markdown text, outside code blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if match:
                found.append(match.group(1))
    return found


def anchors(text: str) -> set:
    seen, result = {}, set()
    for heading in headings(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    result.update(re.findall(r"<a (?:name|id)=\"([^\"]+)\"", text))
    return result


def section_titles(text: str) -> set:
    return {re.sub(r"[`*]", "", h).strip().lower() for h in headings(text)}


def normalize(path: str):
    """`path` without `.` and `..` parts, or None when it leaves the repository."""
    parts = []
    for part in path.split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def placeholder(path: str) -> bool:
    if re.search(r"[<>{}*%$]|\.\.\.", path):
        return True
    for piece in re.split(r"[/._-]", path):
        if piece == "x":
            return True
        if re.fullmatch(r"[A-Z][A-Z0-9]*", piece) and not re.search(
                rf"(^|/){piece}[A-Z0-9_-]*\.md$", path):
            return True
    return False


class Checker:
    def __init__(self, root: pathlib.Path):
        self.root = root
        self.files = repository_files(root)
        self.existing = set(self.files)
        for f in self.files:  # every folder on the way
            parent = pathlib.PurePosixPath(f).parent
            while str(parent) != ".":
                self.existing.add(str(parent))
                parent = parent.parent
        self.folders = {f.split("/", 1)[0] for f in self.files if "/" in f} - {"build"}
        folders = "|".join(re.escape(f) for f in sorted(self.folders, key=len, reverse=True))
        # A path: a top-level folder and a slash, up to a space or a character that ends it.
        self.path_word = re.compile(rf"(?<![\w/.~$-])((?:{folders})/[^\s`'\"()\[\],;|]*)")
        self.texts = {}
        self.problems = []

    def text(self, doc: str) -> str:
        if doc not in self.texts:
            self.texts[doc] = (self.root / doc).read_text(encoding="utf-8")
        return self.texts[doc]

    def exists(self, path: str) -> bool:
        path = path.rstrip("/")
        return path.startswith(GENERATED) or any(path + e in self.existing for e in ENDINGS)

    def problem(self, doc: str, line: int, message: str):
        self.problems.append(f"{doc}:{line}: {message}")

    def check_path(self, doc: str, line: int, word: str):
        if placeholder(word):
            return
        word = re.sub(r"(:\d+)+$", "", word.split("#", 1)[0].rstrip(".:"))
        if not self.exists(word):
            self.problem(doc, line, f"names {word}, which is not in the repository")

    def check_link(self, doc: str, line: int, target: str):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            return
        path, _, anchor = target.partition("#")
        if path:
            resolved = normalize(str(pathlib.PurePosixPath(doc).parent / path))
            if resolved is None or not self.exists(resolved):
                self.problem(doc, line, f"links to {target}, which is not in the repository")
                return
        else:
            resolved = doc
        if anchor and resolved.endswith(".md") and resolved in self.existing:
            if anchor not in anchors(self.text(resolved)):
                self.problem(doc, line, f"links to {target}: {resolved} has no such heading")

    def resolve_doc(self, doc: str, name: str):
        """The document `name` refers to from `doc`: beside it, from the top, or in docs/."""
        for base in (str(pathlib.PurePosixPath(doc).parent), ".", "docs"):
            path = normalize(f"{base}/{name}")
            if path and path in self.existing:
                return path
        return None

    def check_sections(self, doc: str, line: int, name: str, quoted: str):
        target = self.resolve_doc(doc, name)
        if target is None:
            return  # the name itself is checked as a path where it is one
        titles = section_titles(self.text(target))
        for title in re.findall(r"\"([^\"]+)\"", quoted):
            # A heading may be named by its first words: "The link-time runtime".
            if not any(re.match(re.escape(title.lower()) + r"(?!\w)", t) for t in titles):
                self.problem(doc, line, f"names section \"{title}\" of {target}, "
                                        f"which has no such heading")

    def check(self, doc: str):
        fenced = False
        for number, line in enumerate(self.text(doc).splitlines(), 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            for match in self.path_word.finditer(line):
                self.check_path(doc, number, match.group(1))
            if fenced:
                continue
            for match in LINK.finditer(line):
                self.check_link(doc, number, match.group(1))
            for match in CAPS_DOC.finditer(line):
                if self.resolve_doc(doc, match.group(1)) is None:
                    self.problem(doc, number,
                                 f"names {match.group(1)}, which is not in the repository")
            for match in SECTION_REF.finditer(line):
                self.check_sections(doc, number, match.group(1), match.group(2))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.rstrip())
        return 2
    checker = Checker(pathlib.Path(sys.argv[1]))
    for doc in documents(checker.files):
        checker.check(doc)
    for problem in checker.problems:
        print(problem)
    if checker.problems:
        print(f"{len(checker.problems)} problem(s): fix the document (or the scanner, if it "
              f"took something for a path that is not one)")
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main())
