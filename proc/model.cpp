// Helpers of the memtrack top model.
#include "proc/model.h"

namespace memtrack::top {

std::string display_command(const ProcessInfo& info) {
  return info.cmdline.empty() ? "[" + info.name + "]" : info.cmdline;
}

}  // namespace memtrack::top
