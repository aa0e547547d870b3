#!/usr/bin/env python3
"""Fails when a runtime file includes a header of a folder above its own, or when two units
(x.h with x.cpp) depend on each other, directly or around a loop.

The runtime's folders follow the path a call takes (docs/design.md, "The runtime's
folders"); include edges go one way, from a folder to the folders after it in LAYERS
(and to the shared files directly in runtime/, which include no folder). Usage:
check_layers.py RUNTIME_DIR
"""
import pathlib
import re
import sys

# Highest first: a folder may include itself and any folder after it.
LAYERS = ["hooks", "live", "output", "record", "leakcheck", "unwind", "fd", "link"]
BASE = ""  # runtime/*.h and *.cpp: the shared state, below every folder

INCLUDE = re.compile(r'^\s*#\s*include\s+"runtime/([^"]+)"', re.MULTILINE)


def layer_of(relative: pathlib.PurePosixPath) -> str:
    return relative.parts[0] if len(relative.parts) > 1 else BASE


def rank(layer: str) -> int:
    return len(LAYERS) if layer == BASE else LAYERS.index(layer)


def unit_cycles(root: pathlib.Path) -> list:
    """One error per unit that reaches itself through the includes of other units."""
    edges = {}
    for path in root.rglob("*"):
        if path.suffix not in (".h", ".cpp") or path.stem.endswith("_test"):
            continue
        unit = path.relative_to(root).with_suffix("").as_posix()
        targets = edges.setdefault(unit, set())
        for target in INCLUDE.findall(path.read_text()):
            target_unit = target.rsplit(".", 1)[0]
            if target_unit != unit:
                targets.add(target_unit)
    errors = []
    for unit in sorted(edges):
        stack, seen = list(edges[unit]), set()
        while stack:
            current = stack.pop()
            if current == unit:
                errors.append(f"runtime/{unit}: depends on itself through other units")
                break
            if current in seen or current not in edges:
                continue
            seen.add(current)
            stack.extend(edges[current])
    return errors


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    errors = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        relative = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        layer = layer_of(relative)
        if layer != BASE and layer not in LAYERS:
            errors.append(f"runtime/{relative}: folder '{layer}' is not in LAYERS")
            continue
        for target in INCLUDE.findall(path.read_text()):
            target_layer = layer_of(pathlib.PurePosixPath(target))
            if target_layer != BASE and target_layer not in LAYERS:
                errors.append(f"runtime/{relative}: includes runtime/{target} (unknown folder)")
            elif rank(target_layer) < rank(layer):
                errors.append(f"runtime/{relative}: includes runtime/{target}, but "
                              f"{target_layer or 'runtime/'} comes before "
                              f"{layer or 'runtime/'} in the include order")
    errors += unit_cycles(root)
    for error in errors:
        print(error)
    if errors:
        print(f"{len(errors)} problem(s); the order is {' -> '.join(LAYERS)} -> runtime/")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
