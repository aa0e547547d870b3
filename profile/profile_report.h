// What `memtrack report PROFILE` shows of an analysed heap profile: the text report, the JSON
// report, collapsed stacks for flame graphs, and massif's format (massif.h). Stacks are
// symbolized here, only those some output shows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/analysis.h"
#include "symbolize/frame.h"

namespace memtrack::symbolize {
class Symbolizer;
}

namespace memtrack::profile {

// The symbolized stack of each id, made on first use.
class StackNames {
 public:
  explicit StackNames(const ProfileMeta& meta);
  ~StackNames();
  StackNames(const StackNames&) = delete;
  StackNames& operator=(const StackNames&) = delete;
  const std::vector<Frame>& stack(uint32_t id);
  const std::vector<std::string>& notes() const;

 private:
  const ProfileMeta& meta_;
  std::unique_ptr<symbolize::Symbolizer> symbolizer_;
  std::map<uint32_t, std::vector<Frame>> cache_;
};

// The site lists (docs/profiling.md): which number of SiteStats each ranks by.
enum class Ranking { kAllocated, kAllocations, kTemporary, kLeaked, kPeak, kWindow };

// Whether a site is shown in lists, trees and profiles: all of them but, in the sampled mode,
// the blocks not sampled (id 0), which the other sites' estimates stand for.
bool site_listed(const ProfileAnalysis& a, uint32_t id);

// The ids of the `count` listed sites with the most of `ranking` (ties: lower id first),
// without sites that have none.
std::vector<uint32_t> top_sites(const ProfileAnalysis& a, Ranking ranking, size_t count);

struct ProfileOutputOptions {
  size_t sites = 10;     // per list
  std::string program;   // for the collapsed stacks' root frame and the text header
  bool running = false;  // the program is still running: what it has recorded so far
};

void render_profile_text(const ProfileAnalysis& a, StackNames& names,
                         const ProfileOutputOptions& options, std::ostream& out);
// The JSON report (docs/profiling.md, "The JSON report"); the HTML page carries it as it is.
nlohmann::ordered_json profile_to_json(const ProfileAnalysis& a, StackNames& names,
                                       const ProfileOutputOptions& options);
void render_profile_json(const ProfileAnalysis& a, StackNames& names,
                         const ProfileOutputOptions& options, std::ostream& out);
// One "prog[PID];main;...;leaf VALUE" line per stack with a non-zero value of `ranking`
// (kAllocated, kPeak, kLeaked, kWindow: bytes; kAllocations, kTemporary: counts).
void render_profile_collapsed(const ProfileAnalysis& a, StackNames& names, Ranking ranking,
                              const ProfileOutputOptions& options, std::ostream& out);

// The value of `ranking` for one site.
uint64_t site_value(const SiteStats& site, Ranking ranking);

}  // namespace memtrack::profile
