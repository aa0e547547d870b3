// The leak report as a pprof profile (see pprof_renderer.h and docs/cli.md, "Output").
#include "report/pprof_renderer.h"

#include "core/result_names.h"
#include "report/pprof_writer.h"
#include "report/text_format.h"

namespace memtrack::report {

void render_pprof(const Report& report, std::ostream& out, const PprofOptions& options) {
  const char* objects = options.in_use ? kInuseObjects : kLeakedObjects;
  const char* space = options.in_use ? kInuseSpace : kLeakedSpace;
  ProfileBuilder profile({{objects, "count"}, {space, "bytes"}}, space);
  profile.add_comment("memtrack " + (options.version.empty() ? "?" : options.version));
  for (const ProcessReport& process : report.processes) {
    profile.add_comment(std::to_string(process.pid) + ": " + format_command(process.command, 400));
    profile.add_address_space(process.pid, process.modules);
    for (const LeakGroup& group : process.leaks) {
      if (!options.show_kinds.contains(group.kind) || group.runtime_internal) continue;
      if (group.sampling == LeakGroup::Sampling::kNotSampled) continue;
      bool estimated = group.sampling == LeakGroup::Sampling::kEstimated;
      uint64_t blocks = estimated ? group.estimated_blocks : group.blocks;
      uint64_t bytes = estimated ? group.estimated_bytes : group.bytes;
      std::vector<Frame> printed(
          group.stack.begin(),
          group.stack.begin() + static_cast<std::ptrdiff_t>(printed_frame_count(group.stack)));
      profile.add_sample(process.pid, printed,
                         {static_cast<int64_t>(blocks), static_cast<int64_t>(bytes)},
                         {ProfileLabel::text("kind", core::leak_kind_name(group.kind)),
                          ProfileLabel::number("pid", process.pid)});
    }
  }
  std::string bytes = profile.gzipped();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace memtrack::report
