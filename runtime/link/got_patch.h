// How an attached runtime (hooks/attach.h) takes the place of functions the program already
// calls: each loaded module's GOT entries for them are rewritten to memtrack's hooks, and
// written back at detach. Runtime-safe: no malloc (dl_iterate_phdr and mprotect only).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

// A function the program calls through its modules' GOTs, and the hook that replaces it.
struct GotTarget {
  const char* symbol;
  uintptr_t hook;
};

// Rewrites, in every loaded module but memtrack's own image and the dynamic linker, the GOT
// entries (jump slots and GLOB_DAT entries) that refer to a symbol of `targets` so that they
// hold its hook, keeping what each held before. Entries already patched are left alone, so
// it may be called again after a dlopen for the modules that came with it. Read-only
// (RELRO) entries are made writable for the write and read-only again. Returns the number of
// entries patched so far, or -1 if the table of patched entries is full (the rest are not
// patched: they keep calling the real functions). Not thread safe: one caller at a time.
long patch_got_entries(const GotTarget* targets, size_t count, uintptr_t own_address);

// Writes back every patched entry whose module is still loaded (an entry of a module that
// dlclose unloaded is skipped: its memory may be another module's now). Empties the table.
void restore_got_entries();

}  // namespace memtrack::rt
