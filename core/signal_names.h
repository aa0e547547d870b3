// Names of signals and of their si_code causes, for the crash section of every report (the
// runtime's text report and the CLI's renderers use the same words).
// Freestanding: no allocation, no libc calls.
#pragma once

namespace memtrack::core {

// "SIGSEGV", "SIGABRT", ...; "SIGRTMIN+3" style is not needed: nullptr for a signal without
// a name here.
const char* signal_name(int sig);

// What si_code says about how `sig` came about: "address not mapped" (SEGV_MAPERR), "integer
// divide by zero" (FPE_INTDIV), "sent by kill" (SI_USER), "raised by the program" (SI_TKILL:
// raise, abort)... nullptr if the code is not one listed here.
const char* signal_cause(int sig, int code);

}  // namespace memtrack::core
