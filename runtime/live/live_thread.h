// Live mode and snapshots (live_thread.cpp): the runtime's own thread, the
// allocation-time epochs it advances, and the report lock that keeps its reports, snapshots
// and the exit report from overlapping. Runtime-safe: no malloc.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>

#include "core/spin_lock.h"

namespace memtrack::rt {

// Held while any report (live, snapshot, exit) is being built.
extern core::SpinLock g_report_lock;

// Starts the runtime thread if live reports (expire_ms) or snapshots (snapshot_signal) are
// on, and installs the snapshot signal handler. Called once from the constructor.
void start_runtime_thread();
// The process is ending: no report starts after this; the thread is woken to return.
void stop_runtime_thread();
// fork's child handler: the runtime thread did not survive the fork; start a new one.
void runtime_thread_fork_child();

// An attached runtime (hooks/attach.h): memtrack's thread detaches when the CLI asks
// (core::kDetachRequestId, after the final report) or when the process `watcher` (the CLI)
// is gone (no report: nobody would read it); `log_fd`, the diagnostics' file, is closed then.
// Call before start_runtime_thread.
void watch_attach(int watcher, int log_fd);

// After a detach: joins the thread of the attach that ended (it has returned, or is about to)
// and unmaps its stack. Does nothing if there is none. Not while attached.
void reap_detached_thread();

// Whether start_runtime_thread started the thread.
bool runtime_thread_started();

// report_interval_ms, or expire_ms when it is 0.
int report_interval_ms();

}  // namespace memtrack::rt
