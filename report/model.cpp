// Names for the shared leak and error model (report/model.h). No state.
#include "report/model.h"

#include "core/fd_names.h"

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

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kDoubleFree:
      return "double_free";
    case ErrorKind::kInvalidFree:
      return "invalid_free";
    case ErrorKind::kMismatchedFree:
      return "mismatched_free";
    case ErrorKind::kReallocAfterFree:
      return "realloc_after_free";
  }
  return "invalid_free";
}

const char* alloc_call_name(AllocCall call) {
  switch (call) {
    case AllocCall::kMalloc:
      return "malloc";
    case AllocCall::kNew:
      return "new";
    case AllocCall::kNewArray:
      return "new[]";
    case AllocCall::kNone:
      break;
  }
  return "none";
}

const char* free_call_name(FreeCall call) {
  switch (call) {
    case FreeCall::kFree:
      return "free";
    case FreeCall::kDelete:
      return "delete";
    case FreeCall::kDeleteArray:
      return "delete[]";
    case FreeCall::kRealloc:
      return "realloc";
  }
  return "free";
}

static_assert(static_cast<int>(ResourceKind::kMemfd) ==
              static_cast<int>(core::result::ResourceKind::kMemfd));

const char* resource_kind_name(ResourceKind kind) {
  return core::resource_kind_name(static_cast<core::result::ResourceKind>(kind));
}

}  // namespace memtrack::report
