#!/usr/bin/env python3
"""Builds libmemtrack_static.a, the link-time runtime (docs/static-link.md), and the list of
-Wl,--wrap options a program is linked with.

The hooks are the functions libmemtrack.so exports (its interposers), so both modes hook the
same set. Each member of the archive is one relocatable object (ld -r) in which every hook
NAME is renamed __wrap_NAME; the linker then sends every reference to NAME there and binds
__real_NAME to the library's definition. Symbols the program must not see (libsupc++'s
demangler, linked in as in libmemtrack.so) are made local.
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

import interposed_table

# Exported by libmemtrack.so but not hooks: the cooperation API keeps its name.
NOT_HOOKS = re.compile(r"^(memtrack_|_init$|_fini$)")
# Hooked in libmemtrack.so but not wrapped in a static link: dlopen in a static program is
# rare, and wrapping dlclose would pull glibc's static dlopen machinery into every program.
NOT_WRAPPED = {"dlclose"}
# The preload entry path: the archive has its own (__wrap___libc_start_main in
# link/resolve_linked.cpp, which must not touch TLS), so this one is renamed out of the way.
RENAMED_AWAY = {"__libc_start_main": "memtrack_unused_preload_libc_start_main"}
# The runtime's globals must outlive the exit report. In libmemtrack.so their destructors are
# registered before __libc_start_main registers the program's exit path, so they run after
# the report; in a static program the order reverses, and the report would read unmapped
# tables. The archive's objects register them with a function that drops them.
NEVER_DESTROYED = {"__cxa_atexit": "memtrack_keep_runtime_globals"}
# Global symbols that stay global: hooks, the cooperation API, the runtime's own namespace
# (the two members reference each other through it).
KEEP_GLOBAL = re.compile(r"^(__wrap_|memtrack_|_ZN8memtrack|_ZZN8memtrack|_ZGVZN8memtrack)")


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def hooks_of(nm: str, preload: str) -> list:
    names = []
    for line in run(nm, "-D", "--defined-only", preload).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TW" and not NOT_HOOKS.match(parts[2]):
            names.append(parts[2])
    return sorted(set(names))


def is_64_bit(elf_path: str) -> bool:
    with open(elf_path, "rb") as elf:
        return elf.read(5)[4] == 2  # e_ident[EI_CLASS]: ELFCLASS64


# All the runtime's code in one section whose name is a C identifier, so the final link defines
# __start_memtrack_text and __stop_memtrack_text around it: the unwinder skips the frames in
# that range (link/resolve_linked.cpp), as it skips libmemtrack.so's in preload mode. Its
# zero-initialised globals likewise (memtrack_bss), which the leak scan does not take as roots.
MERGE_TEXT = """SECTIONS {
  memtrack_text : { *(.text.unlikely .text.unlikely.*) *(.text.startup .text.startup.*)
                    *(.text.hot .text.hot.*) *(.text .text.*) }
  memtrack_bss : { *(.bss .bss.*) }
}
"""


def build_member(args, objects: list, extra: list, hooks: list, out: pathlib.Path) -> None:
    combined = out.with_suffix(".r.o")
    script = out.with_suffix(".ld")
    script.write_text(MERGE_TEXT)
    run(args.ld, "-r", "-T", str(script), "-o", str(combined), *objects, *extra)
    renames = out.with_suffix(".renames")
    pairs = [(h, RENAMED_AWAY.get(h, "__wrap_" + h)) for h in hooks]
    pairs += list(NEVER_DESTROYED.items())
    renames.write_text("".join(f"{old} {new}\n" for old, new in pairs))
    run(args.objcopy, f"--redefine-syms={renames}", str(combined), str(out))
    local = []
    for line in run(args.nm, "--defined-only", "-g", str(out)).splitlines():
        parts = line.split()
        if len(parts) == 3 and not KEEP_GLOBAL.match(parts[2]):
            local.append(parts[2])
    if local:
        listing = out.with_suffix(".local")
        listing.write_text("".join(f"{name}\n" for name in local))
        run(args.objcopy, f"--localize-symbols={listing}", str(out))


def main() -> int:
    parser = argparse.ArgumentParser()
    for option in ("ld", "objcopy", "ar", "nm", "preload", "supcxx", "names", "archive", "wrap"):
        parser.add_argument("--" + option, required=True)
    parser.add_argument("--core", nargs="+", required=True)
    parser.add_argument("--cxx", nargs="+", required=True)
    args = parser.parse_args()

    hooks = hooks_of(args.nm, args.preload)
    listed = interposed_table.hooks(args.names, is_64_bit(args.preload))
    differences = ((set(listed) - set(hooks), "lists functions libmemtrack.so does not export"),
                   (set(hooks) - set(listed), "does not list functions libmemtrack.so exports"))
    for names, problem in differences:
        if names:
            print(f"make_static_archive.py: {args.names} {problem}: {' '.join(sorted(names))}",
                  file=sys.stderr)
            return 1
    with tempfile.TemporaryDirectory() as work:
        core = pathlib.Path(work) / "memtrack_runtime.o"
        cxx = pathlib.Path(work) / "memtrack_operator_new.o"
        build_member(args, args.core, [args.supcxx], hooks, core)
        build_member(args, args.cxx, [], hooks, cxx)
        archive = pathlib.Path(args.archive)
        archive.unlink(missing_ok=True)
        run(args.ar, "rcsD", str(archive), str(core), str(cxx))
    wrapped = [h for h in hooks if h not in NOT_WRAPPED]
    pathlib.Path(args.wrap).write_text("".join(f"--wrap={h}\n" for h in wrapped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
