// The allocation guard's failure path (alloc_guard.h); empty unless MEMTRACK_ALLOC_GUARD.
// Calls libc (dladdr) and libgcc (_Unwind_Backtrace) but never malloc.
#include "runtime/alloc_guard.h"

#ifdef MEMTRACK_ALLOC_GUARD

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <unwind.h>

#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/signal_table.h"

namespace memtrack::rt {
namespace {

struct FrameWalk {
  int index = 0;
};

// One line per frame: address, module and the nearest exported symbol (dladdr sees only
// those; `addr2line -e MODULE` gives the rest).
_Unwind_Reason_Code print_frame(_Unwind_Context* context, void* arg) {
  auto* walk = static_cast<FrameWalk*>(arg);
  uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0 || walk->index >= 24) return _URC_END_OF_STACK;
  core::FixedText<512> line;
  line.str("  #").i64(walk->index++).str(" ").hex(pc);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc - 1), &info) != 0 && info.dli_fname != nullptr) {
    line.str(" ")
        .str(info.dli_fname)
        .str("+")
        .hex(pc - reinterpret_cast<uintptr_t>(info.dli_fbase));
    if (info.dli_sname != nullptr) line.str(" (").str(info.dli_sname).str(")");
  }
  diag(line.data());
  return _URC_NO_REASON;
}

}  // namespace

void fail_own_allocation(const char* call) {
  ++t_thread.allowed_allocations;  // what follows must not trip the guard again
  core::FixedText<256> line;
  line.str("alloc guard: ").str(call).str(" called inside the runtime scope; stack:");
  diag(line.data());
  FrameWalk walk;
  _Unwind_Backtrace(print_frame, &walk);
  restore_default_action(SIGABRT);
  abort();
}

}  // namespace memtrack::rt

#endif  // MEMTRACK_ALLOC_GUARD
