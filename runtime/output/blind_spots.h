// What the runtime cannot see of the program's allocations, found at start-up, for the
// reports to say (result file section 16, docs/format.md): a malloc that is not
// memtrack's hook (the program's own, or a library's ahead of memtrack in the lookup order),
// an allocator linked into the program under names of its own; and, once the program made
// one, mimalloc's heaps. Runtime-safe: no malloc
// (dlsym of a name that exists and dladdr allocate nothing; the program's symbol table is
// mapped read-only).
#pragma once

#include <cstdint>

#include "core/result_format.h"
#include "core/text_buffer.h"

namespace memtrack::rt {

struct BlindSpots {
  static constexpr int kMax = 4;
  struct Note {
    core::result::NoteKind kind;
    core::FixedText<core::result::kMaxNoteText> text;
  };
  Note notes[kMax];
  int count = 0;
};

// Looks, once at start-up (hooks/init.cpp, in the runtime scope, after the unwinder knows
// the runtime's own code): nothing that can come later (a library loaded with dlopen) goes
// ahead of memtrack in the lookup order, and a crash report must not call the loader.
void find_blind_spots();
// What find_blind_spots found (nothing before it ran), and what the program did since that
// memtrack cannot see (note_mimalloc_heap). Thread safe after start-up.
BlindSpots blind_spots();

// The program made a heap of mimalloc's (mi_heap_new, foreign_hooks.cpp): what it allocates
// there is not seen. Async-signal-safe; any thread.
void note_mimalloc_heap();

}  // namespace memtrack::rt
