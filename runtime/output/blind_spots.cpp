// The report's notes on what the runtime cannot see (blind_spots.h). Calls libc (dlsym,
// dladdr) but never malloc.
#include "runtime/output/blind_spots.h"

#include <dlfcn.h>

#include <atomic>

#include "runtime/link/link_mode.h"
#include "runtime/runtime.h"
#include "runtime/unwind/elf_symbols.h"
#include "runtime/unwind/unwind.h"

namespace memtrack::rt {
namespace {

using core::result::NoteKind;

BlindSpots g_spots;
std::atomic<bool> g_mimalloc_heap{false};

core::TextBuffer& add(BlindSpots* out, NoteKind kind) {
  BlindSpots::Note& note = out->notes[out->count++];
  note.kind = kind;
  return note.text;
}

// An allocator whose own names the program itself defines (linked in statically), by the
// name that tells it; nullptr if none.
const char* allocator_linked_in() {
  struct Known {
    const char* symbol;
    const char* name;
  };
  static constexpr Known kKnown[] = {{"je_malloc", "jemalloc"},
                                     {"tc_malloc", "tcmalloc"},
                                     {"mi_malloc", "mimalloc"},
                                     {"rpmalloc", "rpmalloc"}};
  for (const Known& known : kKnown) {
    if (find_main_program_function(known.symbol) != 0) return known.name;
  }
  return nullptr;
}

}  // namespace

BlindSpots blind_spots() {
  BlindSpots spots = g_spots;
  if (g_mimalloc_heap.load(std::memory_order_relaxed) && spots.count < BlindSpots::kMax) {
    add(&spots, NoteKind::kAllocatorUnseen)
        .str(
            "the program made heaps of mimalloc's (mi_heap_new): the blocks it allocates in "
            "them (mi_heap_malloc & co.) are not seen (those through malloc, new and mi_malloc "
            "are)");
  }
  return spots;
}

void note_mimalloc_heap() {
  g_mimalloc_heap.store(true, std::memory_order_relaxed);
}

void find_blind_spots() {
  BlindSpots* out = &g_spots;
  out->count = 0;
  // Linked into the program (the archive), every malloc call was wrapped; attached, the hooks
  // are in the modules' GOTs, never first in the lookup order: nothing to find either way.
  if (kAttachRuntime || link_mode() != LinkMode::kPreload) return;
  const char* linked = allocator_linked_in();
  // The program's own malloc takes its own calls whether or not it is exported (a call
  // inside the executable binds there); an exported one, or a library's ahead of memtrack,
  // takes everybody's.
  bool main_program = find_main_program_function("malloc") != 0;
  void* global = dlsym(RTLD_DEFAULT, "malloc");
  if (main_program ||
      (global != nullptr && !is_runtime_address(reinterpret_cast<uintptr_t>(global)))) {
    Dl_info info{};
    core::TextBuffer& text = add(out, NoteKind::kMallocUnseen);
    if (main_program) {
      text.str("the program defines malloc itself");
      if (linked != nullptr) text.str(" (").str(linked).str(", linked in)");
    } else if (dladdr(global, &info) != 0 && info.dli_fname != nullptr) {
      text.str("malloc is ").str(info.dli_fname).str("'s, which comes before memtrack's");
    } else {
      text.str("malloc is not memtrack's");
    }
    text.str(
        ": the blocks the program allocates through it are not seen, and the leak "
        "totals leave them out");
    return;
  }
  if (linked != nullptr) {
    add(out, NoteKind::kAllocatorUnseen)
        .str(linked)
        .str(
            " is linked into the program under names of its own: the blocks it allocates "
            "through them are not seen (those through malloc and new are)");
  }
}

}  // namespace memtrack::rt
