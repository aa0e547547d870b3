// Names for the shared leak model (report/model.h). No state.
#include "report/model.h"

namespace memtrack::report {

const char* kind_name(LeakKind kind) {
  switch (kind) {
    case LeakKind::kDefinite:
      return "definite";
    case LeakKind::kIndirect:
      return "indirect";
    case LeakKind::kPossible:
      return "possible";
    case LeakKind::kReachable:
      return "reachable";
    case LeakKind::kUnclassified:
      return "unclassified";
  }
  return "unclassified";  // an out-of-range value read from a corrupt file
}

}  // namespace memtrack::report
