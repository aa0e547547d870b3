// A heap profile analysis as a pprof profile (profile.proto, gzip-compressed), for
// `go tool pprof`, Pyroscope and Parca: per allocation stack, what Go's heap profiles carry
// (alloc_objects, alloc_space, inuse_objects, inuse_space; "in use" is what was still live
// when the recording ended) and what memtrack adds (the blocks and bytes each stack held at
// the peak, and its temporary allocations). Written with the leak report's pprof writer.
#pragma once

#include <ostream>

#include "profile/analysis.h"
#include "profile/profile_report.h"

namespace memtrack::profile {

// The sample types, in this order; pprof shows inuse_space unless told otherwise
// (-sample_index=alloc_space, ...).
inline constexpr const char* kPprofSampleTypes[] = {
    "alloc_objects", "alloc_space", "inuse_objects",    "inuse_space",
    "peak_objects",  "peak_space",  "temporary_objects"};

// One sample per stack that allocated anything, with its printed frames (down to main).
void render_profile_pprof(const ProfileAnalysis& a, StackNames& names,
                          const ProfileOutputOptions& options, const std::string& version,
                          std::ostream& out);

}  // namespace memtrack::profile
