// The crash record: the crashing thread's stack from the signal frame down, captured with
// libgcc's unwinder (the one that follows signal frames). Calls libc (through libgcc) but
// never malloc.
#include <signal.h>
#include <ucontext.h>
#include <unwind.h>

#include "core/stack_depot.h"
#include "core/sys_linux.h"
#include "runtime/leakcheck/guarded_read.h"
#include "runtime/machine_context.h"
#include "runtime/record/crash.h"
#include "runtime/runtime.h"

namespace memtrack::rt {
namespace {

CrashRecord g_crash;

struct CrashUnwind {
  uintptr_t fault_pc;
  uintptr_t* frames;
  int max;
  int count;
  bool found;  // the signal frame was reached: frames before it are the handler's own
};

// The result file stores return addresses, which the symbolizer looks up at address - 1.
// Frame 0 of a crash is the faulting instruction itself, so it is stored as pc + 1.
_Unwind_Reason_Code on_crash_frame(_Unwind_Context* context, void* arg) {
  auto* state = static_cast<CrashUnwind*>(arg);
  int before_insn = 0;
  uintptr_t pc = _Unwind_GetIPInfo(context, &before_insn);
  if (pc == 0) return _URC_END_OF_STACK;
  if (!state->found) {
    if (pc != state->fault_pc || before_insn == 0) return _URC_NO_REASON;
    state->found = true;
    pc += 1;
  }
  state->frames[state->count++] = pc;
  return state->count == state->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

int crash_stack(const ucontext_t* uc, uintptr_t* frames, int max) {
  uintptr_t pc = context_pc(uc);
  CrashUnwind state{pc, frames, max, 0, false};
  _Unwind_Backtrace(on_crash_frame, &state);
  if (state.found) return state.count;
  // libgcc could not reach the faulting frame (a call through a null or wild pointer: the
  // pc is outside any code). Keep the pc, and the return address the call left at the top
  // of the stack when it can be read (on ARM: the link register it left).
  int count = 0;
  frames[count++] = pc + 1;
  uintptr_t caller = 0;
  if (!context_link_register(uc, &caller)) {
    uint64_t word = 0;
    ScanGuard guard;
    if (try_read_word(context_sp(uc), &word)) caller = static_cast<uintptr_t>(word);
  }
  if (max > 1 && caller != 0) frames[count++] = caller;
  return count;
}

}  // namespace

const CrashRecord& crash_record() {
  return g_crash;
}

uint32_t capture_signal_stack(const void* context) {
  RuntimeScope scope;
  uintptr_t frames[core::kMaxFramesLimit];
  int max = g_flags.max_frames < core::kMaxFramesLimit ? g_flags.max_frames : core::kMaxFramesLimit;
  int depth = crash_stack(static_cast<const ucontext_t*>(context), frames, max);
  return g_stacks.intern(frames, static_cast<uint32_t>(depth));
}

void record_crash(int sig, const void* info_ptr, const void* context) {
  const auto* info = static_cast<const siginfo_t*>(info_ptr);
  uint32_t stack_id = capture_signal_stack(context);
  g_crash.signal = sig;
  g_crash.code = info->si_code;
  // si_addr means something only for faults the kernel raised for an instruction.
  g_crash.has_address = info->si_code > 0 && sig != SIGABRT && sig != SIGPIPE;
  g_crash.address = g_crash.has_address ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  g_crash.tid = static_cast<uint32_t>(core::sys::current_tid());
  g_crash.stack_id = stack_id;
  g_crash.valid = true;
}

}  // namespace memtrack::rt
