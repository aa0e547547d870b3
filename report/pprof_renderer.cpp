// The leak report as a pprof profile (see pprof_renderer.h and docs/cli.md, "Output").
#include "report/pprof_renderer.h"

#include "core/result_names.h"
#include "report/pprof_writer.h"
#include "report/text_format.h"

namespace memtrack::report {

namespace {

std::vector<Frame> printed_frames(const std::vector<Frame>& stack) {
  return {stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(printed_frame_count(stack))};
}

}  // namespace

void render_pprof(const Report& report, std::ostream& out, const PprofOptions& options) {
  const char* objects = options.in_use ? kInuseObjects : kLeakedObjects;
  const char* space = options.in_use ? kInuseSpace : kLeakedSpace;
  std::vector<ProfileValueType> types = {{objects, "count"}, {space, "bytes"}};
  // Go's heap profile: what was allocated since the start, then what is in use.
  if (options.in_use)
    types.insert(types.begin(), {{kAllocObjects, "count"}, {kAllocSpace, "bytes"}});
  ProfileBuilder profile(types, space);
  profile.add_comment("memtrack " + (options.version.empty() ? "?" : options.version));
  for (const ProcessReport& process : report.processes) {
    profile.add_comment(std::to_string(process.pid) + ": " + format_command(process.command, 400));
    if (process.allocation_totals_incomplete) {
      profile.add_comment(std::to_string(process.pid) +
                          ": alloc_objects and alloc_space are incomplete (out of memory)");
    }
    profile.add_address_space(process.pid, process.modules);
    if (options.in_use) {
      for (const AllocationTotal& total : process.allocation_totals) {
        profile.add_sample(
            process.pid, printed_frames(total.stack),
            {static_cast<int64_t>(total.blocks), static_cast<int64_t>(total.bytes), 0, 0},
            {ProfileLabel::number("pid", process.pid)});
      }
    }
    for (const LeakGroup& group : process.leaks) {
      if (!options.show_kinds.contains(group.kind) || group.runtime_internal) continue;
      if (group.sampling == LeakGroup::Sampling::kNotSampled) continue;
      bool estimated = group.sampling == LeakGroup::Sampling::kEstimated;
      uint64_t blocks = estimated ? group.estimated_blocks : group.blocks;
      uint64_t bytes = estimated ? group.estimated_bytes : group.bytes;
      std::vector<int64_t> values = {static_cast<int64_t>(blocks), static_cast<int64_t>(bytes)};
      if (options.in_use) values.insert(values.begin(), {0, 0});
      profile.add_sample(process.pid, printed_frames(group.stack), values,
                         {ProfileLabel::text("kind", core::leak_kind_name(group.kind)),
                          ProfileLabel::number("pid", process.pid)});
    }
  }
  std::string bytes = profile.gzipped();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace memtrack::report
