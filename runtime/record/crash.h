// What ended the process when it was a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT):
// the signal, the faulting address and the crashing thread's stack, recorded by the crash
// handler (signal_report.cpp) for the result file's crash section and the runtime's
// text report. Runtime-safe: no malloc.
#pragma once

#include <cstdint>

namespace memtrack::rt {

struct CrashRecord {
  bool valid = false;
  int signal = 0;
  int code = 0;              // siginfo's si_code (SEGV_MAPERR, BUS_ADRALN, SI_USER, ...)
  bool has_address = false;  // a fault raised by an instruction: `address` is si_addr
  uint64_t address = 0;
  uint32_t tid = 0;
  uint32_t stack_id = 0;  // in g_stacks; frame 0 is the faulting pc + 1 (see crash.cpp)
};

// The crash that is ending the process, or one with valid == false.
const CrashRecord& crash_record();

// The stack of the thread a signal interrupted, from the faulting instruction (`context`:
// the handler's ucontext_t), interned in g_stacks (frame 0 stored as pc + 1). Called on that
// thread, from its handler, outside the runtime.
uint32_t capture_signal_stack(const void* context);

// Records the crash described by the handler's arguments (`context` is its ucontext_t).
// Called once, from the crash handler, on the crashing thread, outside the runtime.
void record_crash(int sig, const void* info, const void* context);

}  // namespace memtrack::rt
