// Live mode and snapshots (runtime/live_thread.cpp): the runtime's own thread, the
// allocation-time epochs it advances, and the report lock that keeps its reports, snapshots
// and the exit report from overlapping. Runtime-safe: no malloc.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>

#include "core/spin_lock.h"
#include "runtime/leakcheck/leak_report.h"
#include "runtime/output/result_file.h"

namespace memtrack::rt {

// `memtrack snapshot` sends this signal (with sigqueue's value as the request id).
#define kSnapshotSignal (SIGRTMAX - 2)

// The current allocation time in ticks (only advances in live mode); stored with each block.
extern std::atomic<uint32_t> g_epoch;
// The runtime thread's tid (0 if none): leak scans neither stop nor scan it.
extern std::atomic<int> g_runtime_thread_tid;
// Held while any report (live, snapshot, exit) is being built.
extern core::SpinLock g_report_lock;

// Starts the runtime thread if live reports (expire_ms) or snapshots (snapshot_signal) are
// on, and installs the snapshot signal handler. Called once from the constructor.
void start_runtime_thread();
// The process is ending: no report starts after this; the thread is woken to return.
void stop_runtime_thread();
// fork's child handler: the runtime thread did not survive the fork; start a new one.
void runtime_thread_fork_child();

// report_interval_ms, or expire_ms when it is 0.
int report_interval_ms();

// A block that a live report had counted was freed (the free path calls this).
void note_freed_after_report(uint32_t stack_id);

// Collects, classifies (unless classify_leaks=0), marks and sorts the leak groups for a
// report. stack_top: see scan_live_blocks. Returns false when memory could not be mapped.
bool build_leak_report(LeakReport& report, uintptr_t stack_top);

// Standalone mode (no result_dir): the live report as text, to the log.
void write_live_text(const LiveReport& live);

}  // namespace memtrack::rt
