#!/usr/bin/env python3
"""docs/format.md's record tables are core/result_records.inc, the one declaration of the
result file's fixed-size records: each `<!-- record NAME -->` marker in the document must be
followed by exactly the table this script makes of record NAME, and every record of the .inc
must have its marker. With --write, rewrites the tables in place.

Usage: check_format_tables.py REPO_ROOT [--write]"""
import pathlib
import re
import sys

RECORD = re.compile(r'^MEMTRACK_RECORD\((\w+),\s*(\d+),\s*"(.*)"\)$')
FIELD = re.compile(r'^MEMTRACK_FIELD\(\w+,\s*(\w+),\s*(\w+),\s*"(.*)"\)$')
TAIL = re.compile(r'^MEMTRACK_TAIL\(([\w\[\]]+),\s*(\w+),\s*"(.*)"\)$')
WIRE_SIZES = {"u8": 1, "u16": 2, "u32": 4, "i32": 4, "u64": 8}
MARKER = re.compile(r"^<!-- record (\w+) -->\n", re.M)


def records(inc_text):
    """{name: (size, [(field, wire type, meaning)])} in the order of the .inc."""
    out = {}
    current = None
    for number, line in enumerate(inc_text.splitlines(), 1):
        if m := RECORD.match(line):
            current = m.group(1)
            out[current] = (int(m.group(2)), [])
        elif m := FIELD.match(line) or TAIL.match(line):
            if current is None:
                sys.exit(f"result_records.inc:{number}: field outside a record")
            wire = "bytes" if m.re is TAIL and m.group(1) == "bytes" else m.group(1)
            out[current][1].append((m.group(2), wire, m.group(3), m.re is FIELD))
        elif line.startswith("MEMTRACK_RECORD_END"):
            current = None
        elif line.startswith("MEMTRACK_"):
            sys.exit(f"result_records.inc:{number}: cannot read: {line}")
    return out


def table(size, fields):
    fixed = sum(WIRE_SIZES[wire] for _, wire, _, is_field in fields if is_field)
    if fixed != size:
        sys.exit(f"result_records.inc: fields add up to {fixed} bytes, not {size}")
    rows = ["| field | type | meaning |", "|---|---|---|"]
    rows += [f"| {name} | {wire} | {meaning} |".replace("|  |", "| |")
             for name, wire, meaning, _ in fields]
    return "\n".join(rows) + "\n"


def main():
    root = pathlib.Path(sys.argv[1])
    write = "--write" in sys.argv[2:]
    recs = records((root / "core/result_records.inc").read_text())
    doc_path = root / "docs/format.md"
    doc = doc_path.read_text()
    problems = []
    seen = set()
    out = []
    pos = 0
    for marker in MARKER.finditer(doc):
        name = marker.group(1)
        out.append(doc[pos:marker.end()])
        if name not in recs:
            problems.append(f"docs/format.md names record {name}, which core/result_records.inc lacks")
            pos = marker.end()
            continue
        seen.add(name)
        # The committed table: the lines starting with "|" right after the marker.
        end = marker.end()
        while end < len(doc) and doc.startswith("|", end):
            end = doc.index("\n", end) + 1
        want = table(*recs[name])
        if doc[marker.end():end] != want:
            problems.append(f"docs/format.md: the table of {name} differs from core/result_records.inc")
        out.append(want)
        pos = end
    out.append(doc[pos:])
    problems += [f"docs/format.md has no `<!-- record {name} -->` table"
                 for name in recs if name not in seen]
    if write:
        doc_path.write_text("".join(out))
        return 0
    for p in problems:
        print(p)
    if problems:
        print("regenerate with: tests/docs/check_format_tables.py . --write")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
