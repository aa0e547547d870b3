// Names and wording for the result file's enumerations (core/result_format.h): the spelling
// the JSON report and suppression files use, and the phrases of the text reports. Shared by
// the runtime's own text report and the CLI's renderers, so both word a report alike.
// Freestanding: no libc, no allocation; every string is a literal.
#pragma once

#include "core/result_format.h"

namespace memtrack::core {

// "definite", "indirect", "possible", "reachable", "unclassified"; nullptr for a value
// outside the enum (what a reader rejects).
const char* leak_kind_name(result::LeakKind kind);

// What "N bytes in M blocks are ..." ends with: "definitely lost", "indirectly lost",
// "possibly lost", "still reachable"; "unfreed at exit" for kUnclassified (and for a value
// outside the enum). Also the labels of the per-kind totals.
const char* leak_kind_phrase(result::LeakKind kind);

// "double_free", "invalid_free", "mismatched_free", "realloc_after_free"; nullptr for a
// value outside the enum.
const char* error_kind_name(result::ErrorKind kind);

// "unknown", "heap", "stack", "global"; nullptr for a value outside the enum.
const char* error_where_name(result::ErrorWhere where);

// "malloc", "new", "new[]", "none" (the aligned flag is not part of it); nullptr for a value
// outside the enum.
const char* alloc_call_name(result::AllocCall call);

// "free", "delete", "delete[]", "realloc"; nullptr for a value outside the enum.
const char* free_call_name(result::FreeCall call);

}  // namespace memtrack::core
