// Writes result files for the CLI (format: core/result_format.h, docs/format.md): at exit,
// on demand (snapshot) and periodically (live reports). Runtime-safe: no malloc; each file is
// written to a temporary name and renamed, so a reader never sees a half-written file.
#pragma once

#include <cstdint>

#include "core/mmap_array.h"
#include "core/result_records.h"
#include "runtime/leakcheck/leak_report.h"

namespace memtrack::rt {

// One allocation site of a live report: its blocks older than the age threshold, and how
// many of its blocks were freed after a live report had counted them (since the start).
using LiveSite = core::result::LiveSiteRecord;

// The live section: its head (site_count is filled in when it is written) and its sites.
struct LiveReport {
  core::result::LiveHead head;
  core::MmapArray<LiveSite> sites;
  // The sampled mode's: one estimate per site, in the sites' order (empty in the full mode).
  core::MmapArray<core::result::EstimateRecord> estimates;
};

// Writes <result_dir>/memtrack.<pid>.mtr. Returns false (after one diagnostic) on failure.
bool write_result_file(const char* result_dir, LeakReport& report);

// Writes <dir>/snapshot.<pid>.<request>.mtr: a full report of a running process.
bool write_snapshot_file(const char* dir, LeakReport& report, uint32_t request);

// Writes <result_dir>/check.<pid>.<sequence>.mtr: the report of an on-demand leak check
// (memtrack_do_leak_check) of a running process, which the CLI shows with the exit reports.
bool write_check_file(const char* result_dir, LeakReport& report, uint32_t sequence);

// Writes <result_dir>/live.<pid>.<sequence>.mtr.
// `retention`, if not null, adds what holds the still-reachable blocks (retainers).
bool write_live_file(const char* result_dir, const LiveReport& live,
                     const RetentionGraph* retention = nullptr);

}  // namespace memtrack::rt
