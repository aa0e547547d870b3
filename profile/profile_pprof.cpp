// Heap profiles as pprof profiles (profile_pprof.h).
#include "profile/profile_pprof.h"

#include <string>
#include <vector>

#include "report/pprof_writer.h"
#include "report/text_format.h"

namespace memtrack::profile {

void render_profile_pprof(const ProfileAnalysis& a, StackNames& names,
                          const ProfileOutputOptions& options, const std::string& version,
                          std::ostream& out) {
  std::vector<report::ProfileValueType> types;
  for (const char* type : kPprofSampleTypes) {
    std::string name = type;
    types.push_back({name, name.ends_with("_space") ? "bytes" : "count"});
  }
  report::ProfileBuilder profile(types, "inuse_space");
  profile.add_comment("memtrack " + (version.empty() ? std::string("?") : version));
  profile.add_comment(std::to_string(a.meta.pid) + ": " + options.program);
  if (a.sampled()) {
    profile.add_comment("sampled every " + std::to_string(a.meta.sample_interval_bytes) +
                        " bytes on average: the values are estimates");
  }
  profile.add_address_space(a.meta.pid, a.meta.modules);
  for (uint32_t id = 0; id < a.sites.size(); ++id) {
    const SiteStats& site = a.sites[id];
    if ((site.allocations == 0 && site.live_blocks == 0) || !site_listed(a, id)) continue;
    const std::vector<Frame>& stack = names.stack(id);
    std::vector<Frame> printed(
        stack.begin(), stack.begin() + static_cast<long>(report::printed_frame_count(stack)));
    auto value = [](uint64_t v) { return static_cast<int64_t>(v); };
    profile.add_sample(a.meta.pid, printed,
                       {value(site.allocations), value(site.allocated_bytes),
                        value(site.live_blocks), value(site.live_bytes), value(site.peak_blocks),
                        value(site.peak_bytes), value(site.temporary)},
                       {});
  }
  std::string bytes = profile.gzipped();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace memtrack::profile
