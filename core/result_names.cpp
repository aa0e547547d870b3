// Names and wording for the result file's enumerations (see result_names.h). No state.
#include "core/result_names.h"

namespace memtrack::core {

const char* leak_kind_name(result::LeakKind kind) {
  switch (kind) {
    case result::LeakKind::kDefinite:
      return "definite";
    case result::LeakKind::kIndirect:
      return "indirect";
    case result::LeakKind::kPossible:
      return "possible";
    case result::LeakKind::kReachable:
      return "reachable";
    case result::LeakKind::kUnclassified:
      return "unclassified";
  }
  return nullptr;
}

const char* leak_kind_phrase(result::LeakKind kind) {
  switch (kind) {
    case result::LeakKind::kDefinite:
      return "definitely lost";
    case result::LeakKind::kIndirect:
      return "indirectly lost";
    case result::LeakKind::kPossible:
      return "possibly lost";
    case result::LeakKind::kReachable:
      return "still reachable";
    case result::LeakKind::kUnclassified:
      break;
  }
  return "unfreed at exit";
}

const char* error_kind_name(result::ErrorKind kind) {
  switch (kind) {
    case result::ErrorKind::kDoubleFree:
      return "double_free";
    case result::ErrorKind::kInvalidFree:
      return "invalid_free";
    case result::ErrorKind::kMismatchedFree:
      return "mismatched_free";
    case result::ErrorKind::kReallocAfterFree:
      return "realloc_after_free";
    case result::ErrorKind::kInvalidRead:
      return "invalid_read";
    case result::ErrorKind::kInvalidWrite:
      return "invalid_write";
    case result::ErrorKind::kWriteOutsideBlock:
      return "write_outside_block";
    case result::ErrorKind::kWriteAfterFree:
      return "write_after_free";
  }
  return nullptr;
}

const char* error_where_name(result::ErrorWhere where) {
  switch (where) {
    case result::ErrorWhere::kUnknown:
      return "unknown";
    case result::ErrorWhere::kHeap:
      return "heap";
    case result::ErrorWhere::kStack:
      return "stack";
    case result::ErrorWhere::kGlobal:
      return "global";
  }
  return nullptr;
}

const char* alloc_call_name(result::AllocCall call) {
  switch (call) {
    case result::AllocCall::kMalloc:
      return "malloc";
    case result::AllocCall::kNew:
      return "new";
    case result::AllocCall::kNewArray:
      return "new[]";
    case result::AllocCall::kNone:
      return "none";
  }
  return nullptr;
}

const char* free_call_name(result::FreeCall call) {
  switch (call) {
    case result::FreeCall::kFree:
      return "free";
    case result::FreeCall::kDelete:
      return "delete";
    case result::FreeCall::kDeleteArray:
      return "delete[]";
    case result::FreeCall::kRealloc:
      return "realloc";
  }
  return nullptr;
}

}  // namespace memtrack::core
