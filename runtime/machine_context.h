// The one place that knows each architecture's signal context (ucontext_t): the program
// counter, stack pointer and general-purpose registers of an interrupted thread, for the leak
// scan's roots and the crash report. x86-64, aarch64 and 32-bit ARM (armhf).
// Runtime-safe: reads the context only; no libc calls.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <cstdint>

namespace memtrack::rt {

#if defined(__x86_64__)
inline constexpr size_t kContextRegisters = NGREG;  // gregs[]: rax.. r15, rip, flags, ...
inline const greg_t* context_words(const ucontext_t* uc) {
  return uc->uc_mcontext.gregs;
}
inline uintptr_t context_pc(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
}
inline uintptr_t context_sp(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
}
#elif defined(__aarch64__)
// regs[0..30] (x0..x30, x29 the frame pointer, x30 the link register), then sp and pc,
// which follow regs[] in the kernel's struct sigcontext.
inline constexpr size_t kContextRegisters = 33;
inline const unsigned long long* context_words(const ucontext_t* uc) {
  static_assert(offsetof(mcontext_t, sp) == offsetof(mcontext_t, regs) + 31 * 8);
  static_assert(offsetof(mcontext_t, pc) == offsetof(mcontext_t, regs) + 32 * 8);
  return uc->uc_mcontext.regs;
}
inline uintptr_t context_pc(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
}
inline uintptr_t context_sp(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.sp);
}
#elif defined(__arm__)
// arm_r0 .. arm_r10, arm_fp, arm_ip, arm_sp, arm_lr, arm_pc: consecutive words of the
// kernel's struct sigcontext.
inline constexpr size_t kContextRegisters = 16;
inline const unsigned long* context_words(const ucontext_t* uc) {
  static_assert(offsetof(mcontext_t, arm_pc) == offsetof(mcontext_t, arm_r0) + 15 * 4);
  return &uc->uc_mcontext.arm_r0;
}
inline uintptr_t context_pc(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.arm_pc);
}
inline uintptr_t context_sp(const ucontext_t* uc) {
  return static_cast<uintptr_t>(uc->uc_mcontext.arm_sp);
}
#else
#error "memtrack's runtime supports x86-64, aarch64 and 32-bit ARM"
#endif

// The program counter, stack pointer and frame pointer among context_registers' words.
#if defined(__x86_64__)
inline constexpr size_t kPcRegister = REG_RIP;
inline constexpr size_t kSpRegister = REG_RSP;
inline constexpr size_t kFpRegister = REG_RBP;
#elif defined(__aarch64__)
inline constexpr size_t kPcRegister = 32;
inline constexpr size_t kSpRegister = 31;
inline constexpr size_t kFpRegister = 29;
#else
inline constexpr size_t kPcRegister = 15;
inline constexpr size_t kSpRegister = 13;
inline constexpr size_t kFpRegister = 11;
#endif

// Copies the interrupted thread's general-purpose registers (kContextRegisters words).
inline void context_registers(const ucontext_t* uc, uintptr_t* /*out*/ registers) {
  const auto* words = context_words(uc);
  for (size_t r = 0; r < kContextRegisters; ++r) registers[r] = static_cast<uintptr_t>(words[r]);
}

// Where a call that jumped to a bad address came from, when a register holds it: the link
// register on ARM. x86-64 keeps it on the stack instead (returns false; read it at sp).
inline bool context_link_register(const ucontext_t* uc, uintptr_t* /*out*/ caller) {
#if defined(__aarch64__)
  *caller = static_cast<uintptr_t>(uc->uc_mcontext.regs[30]);
  return true;
#elif defined(__arm__)
  *caller = static_cast<uintptr_t>(uc->uc_mcontext.arm_lr);
  return true;
#else
  (void)uc;
  (void)caller;
  return false;
#endif
}

// Whether the fault that raised SIGSEGV was a write (true) or a read (false), from what the
// kernel put in the context: x86-64's page fault error code, aarch64's ESR record, 32-bit
// ARM's fault status. Returns false where the context does not say.
inline bool context_fault_was_write(const ucontext_t* uc, bool* /*out*/ write) {
#if defined(__x86_64__)
  *write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // bit 1: W/R
  return true;
#elif defined(__aarch64__)
  // The records after the registers: {magic, size} headers, ending with magic 0.
  constexpr uint32_t kEsrMagic = 0x45535201;
  const auto* at = reinterpret_cast<const unsigned char*>(uc->uc_mcontext.__reserved);
  const unsigned char* end = at + sizeof(uc->uc_mcontext.__reserved);
  while (at + 8 <= end) {
    uint32_t magic = 0;
    uint32_t size = 0;
    __builtin_memcpy(&magic, at, 4);
    __builtin_memcpy(&size, at + 4, 4);
    if (magic == 0 || size < 8) break;
    if (magic == kEsrMagic && size >= 16) {
      uint64_t esr = 0;
      __builtin_memcpy(&esr, at + 8, 8);
      *write = ((esr >> 6) & 1) != 0;  // ISS bit 6 of a data abort: WnR
      return true;
    }
    at += size;
  }
  return false;
#elif defined(__arm__)
  *write = (uc->uc_mcontext.error_code & (1u << 11)) != 0;  // FSR bit 11: WnR
  return true;
#else
  (void)uc;
  (void)write;
  return false;
#endif
}

}  // namespace memtrack::rt
