// The JUnit XML report for CI test views: one <testcase> per process, failing when the
// process has leaks of the failing kinds, allocator misuse errors or a crash. No I/O but the
// given stream.
#pragma once

#include <ostream>

#include "report/model.h"

namespace memtrack::report {

struct JunitOptions {
  // A process fails when it has an unsuppressed group of one of these kinds
  // (--errors-for-leak-kinds).
  LeakKinds fail_kinds = {LeakKind::kDefinite, LeakKind::kPossible, LeakKind::kUnclassified};
};

// <testsuites name="memtrack" tests= failures= errors=> with one <testsuite name="memtrack">
// holding a <testcase classname="memtrack" name="PID COMMAND"> per process of
// report.processes (on-demand checks are left out). A failing one holds one
// <failure message="..." type="leaks|errors|crash"> whose text lists the leak groups and
// errors with their stacks as the text report cuts them; a process without leak data holds an
// <error type="no_data">. Names are XML-escaped; characters XML 1.0 cannot carry become '?'.
void render_junit(const Report& report, std::ostream& out, const JunitOptions& options = {});

}  // namespace memtrack::report
