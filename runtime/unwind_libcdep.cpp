// Stack capture with the system unwinder (libgcc_s's _Unwind_Backtrace, DWARF CFI based), so
// stacks are right in code built without frame pointers. It is the same unwinder the
// program's C++ exceptions use, so nothing is hijacked; libgcc finds unwind tables with
// glibc's lock-free _dl_find_object, so no loader lock is taken on this path.
#include <dlfcn.h>
#include <unwind.h>

#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

uintptr_t g_self_start = 0;
uintptr_t g_self_end = 0;

struct CaptureState {
  uintptr_t* frames;
  int max;
  int count;
};

_Unwind_Reason_Code on_frame(_Unwind_Context* context, void* arg) {
  auto* state = static_cast<CaptureState*>(arg);
  uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  // The runtime's own frames are never reported: the hooks at the top, and main_wrapper
  // (see process_info_libcdep.cpp) below the program's main.
  if (is_runtime_address(pc)) return _URC_NO_REASON;
  state->frames[state->count++] = pc;
  return state->count == state->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

}  // namespace

bool is_runtime_address(uintptr_t pc) {
  return pc >= g_self_start && pc < g_self_end;
}

void init_unwinder() {
  dl_find_object self{};
  if (_dl_find_object(reinterpret_cast<void*>(&init_unwinder), &self) == 0) {
    g_self_start = reinterpret_cast<uintptr_t>(self.dlfo_map_start);
    g_self_end = reinterpret_cast<uintptr_t>(self.dlfo_map_end);
  }
  uintptr_t warm_up[4];
  capture_stack(warm_up, 4);
}

int capture_stack(uintptr_t* frames, int max) {
  CaptureState state{frames, max, 0};
  _Unwind_Backtrace(on_frame, &state);
  return state.count;
}

}  // namespace memtrack::rt
