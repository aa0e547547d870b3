// The heap profile in valgrind massif's output format (massif.out), for ms_print and
// massif-visualizer: one snapshot per point of the heap series, a detailed one at the peak
// (heap_tree=peak) and one at the end (what was not freed).
#pragma once

#include <ostream>

#include "profile/analysis.h"
#include "profile/profile_report.h"

namespace memtrack::profile {

void render_massif(const ProfileAnalysis& a, StackNames& names, const ProfileOutputOptions& options,
                   std::ostream& out);

}  // namespace memtrack::profile
