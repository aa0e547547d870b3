// The signal `memtrack snapshot PID` sends and the runtime's thread answers with a full
// report; defined once for both. Header-only, but calls libc (glibc's SIGRTMAX is a function):
// use it from the runtime's *_libcdep.cpp files and the tools only.
#pragma once

#include <signal.h>

namespace memtrack::core {

// SIGRTMAX-2, sent with sigqueue(3), whose value is the request id. glibc keeps the lowest
// real-time signals for itself and programs mostly take SIGRTMIN+n; the leak scan stops
// threads with SIGRTMAX-3.
inline int snapshot_signal() {
  return SIGRTMAX - 2;
}

// The request id that asks an attached runtime (memtrack attach) for its final report and to
// detach: snapshot ids are positive, this one has the top bit. The report is the snapshot
// file of this id.
inline constexpr unsigned kDetachRequestId = 0x80000001u;

}  // namespace memtrack::core
