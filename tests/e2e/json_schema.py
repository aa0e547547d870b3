"""Checks a `memtrack run --json` document against the field table of docs/json-schema.md, so
the page and the output cannot drift apart. Standard library only; read-only.

The Python twin of the checker in report/json_renderer_test.cpp, run here on the JSON of real
processes: every documented field that is not optional is present, every field present is
documented and has the documented type, keys come in the documented order, and each `exit`
object has one of the shapes the `processes[].exit` row names.
"""

import json
import os
import re

SCHEMA_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                          "json-schema.md")
_ROW = re.compile(r"^\| `([^`]+)` \| ([a-z ]+?)(, optional)? \| (.*) \|$")
# "The elements of `processes[].suppressed[]` have exactly the fields of `processes[].leaks[]`"
_SAME_FIELDS = re.compile(r"elements of `([^`]+)` have exactly the fields of\s+`([^`]+)`")
_HEX = re.compile(r"0x(0|[1-9a-f][0-9a-f]*)")  # lowercase, no padding
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "object or null": lambda v: v is None or isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "signed integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "hex string": lambda v: isinstance(v, str) and _HEX.fullmatch(v) is not None,
}


class Schema:
    """The field table: path -> (type, optional, position in the table)."""

    def __init__(self, path=SCHEMA_DOC):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.fields, self.aliases, self.exit_shapes = {}, {}, []
        for line in text.splitlines():
            if m := _ROW.match(line):
                if m.group(1).startswith("@"):
                    continue  # the live reports' table (JSON Lines), not the exit report's
                if m.group(2) not in _TYPES:
                    raise ValueError(f"{path}: unknown type {m.group(2)!r} of {m.group(1)}")
                self.fields[m.group(1)] = (m.group(2), m.group(3) is not None, len(self.fields))
                if m.group(1) == "processes[].exit":
                    self.exit_shapes = _shapes(m.group(4))
        for m in _SAME_FIELDS.finditer(" ".join(text.split())):
            self.aliases[m.group(1)] = m.group(2)
        if not self.fields or not self.exit_shapes:
            raise ValueError(f"{path}: no field table or no exit shapes found")

    def documented(self, path):
        for alias, target in self.aliases.items():
            if path == alias or path.startswith(alias + "."):
                return target + path[len(alias):]
        return path

    def check(self, document):
        """Returns a list of problems, empty if `document` fits the table."""
        errors = []
        self._walk(document, "", errors)
        return errors

    def _walk(self, value, path, errors):
        if isinstance(value, dict):
            self._check_object(value, path, errors)
            for key, child in value.items():
                child_path = f"{path}.{key}" if path else key
                self._check_field(child, child_path, errors)
                self._walk(child, child_path, errors)
        elif isinstance(value, list):
            for element in value:
                if not isinstance(element, dict):  # objects are described by their fields
                    self._check_field(element, path + "[]", errors)
                self._walk(element, path + "[]", errors)

    def _check_field(self, value, path, errors):
        spec = self.fields.get(self.documented(path))
        if spec is None:
            errors.append(f"undocumented field {path}")
        elif not _TYPES[spec[0]](value):
            errors.append(f"{path} is not of type {spec[0]}: {json.dumps(value)}")

    def _check_object(self, value, path, errors):
        prefix = self.documented(path) + ("." if path else "")
        for field, (_, optional, _) in self.fields.items():
            key = field[len(prefix):]
            if field.startswith(prefix) and not optional and not re.search(r"[.\[]", key) \
                    and key not in value:
                errors.append(f"missing field {prefix}{key}")
        positions = [self.fields[self.documented(f"{path}.{k}" if path else k)][2]
                     for k in value if self.documented(f"{path}.{k}" if path else k)
                     in self.fields]
        if positions != sorted(positions):
            errors.append(f"keys of {path or 'the document'} not in the documented order: "
                          f"{list(value)}")
        if self.documented(path) == "processes[].exit" and set(value) not in self.exit_shapes:
            errors.append(f"processes[].exit has none of the documented shapes: "
                          f"{json.dumps(value)}")


def _shapes(meaning):
    """The key sets of the `{"code": N, ...}` examples in the exit row's meaning."""
    shapes = []
    for example in re.findall(r"`(\{[^`]*\})`", meaning):
        shapes.append(set(json.loads(re.sub(r"\bN\b", "0", example))))
    return shapes
