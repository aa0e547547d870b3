// The SARIF 2.1.0 log for code-scanning dashboards (GitHub code scanning, GitLab, Azure
// DevOps): one result per leak group, allocator misuse error and descriptor left open
// (docs/cli.md, "Output formats"). No I/O but the given stream.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

struct SarifOptions {
  LeakKinds show_kinds = kDefaultShownKinds;  // the leak groups listed (--show-leak-kinds)
  std::string version;                        // memtrack's: tool.driver.version
  // An absolute directory (the working directory): source files under it are given relative
  // to the uriBaseId SRCROOT, which code scanning resolves against the checkout; others get
  // absolute file:// URIs. "" gives every file an absolute URI.
  std::string source_root;
  // tool.driver.informationUri: where the tool's documentation is (an absolute URI); none if
  // "".
  std::string information_uri;
};

// One run of tool "memtrack" with every rule (fixed ids and order: sarif_rule_ids()) and
// the results of every process of report.processes (on-demand checks are left out):
//  - location: the allocation site (misuse: the bad call; descriptors: the open call), the
//    first printed frame of a program module (not libc, libstdc++, ...) with a source file,
//    else the first with one, else the first frame's module;
//  - codeFlows: the printed frames as one threadFlow, main first, the site last; misuse errors
//    also have stacks: the bad call's frames innermost first, the first free's, the allocation's;
//  - partialFingerprints "memtrackStack/v1": sarif_fingerprint() of the rule and the stack;
//  - properties: pid, bytes and blocks (leaks), occurrences (misuse), fd (descriptors).
// run.properties.processes lists each process's pid, command and leak totals.
void render_sarif(const Report& report, std::ostream& out, const SarifOptions& options = {});

// The rule ids, in the order of tool.driver.rules: definite-leak, indirect-leak,
// possible-leak, reachable-block, unclassified-leak, double-free, invalid-free,
// mismatched-free, realloc-after-free, descriptor-left-open.
std::vector<std::string> sarif_rule_ids();

// 16 hex digits: the 64-bit FNV-1a hash of the rule id, `ordinal` and the match key of each
// printed frame (diff.h key_frame: function and file basename, never addresses or line
// numbers), so a result keeps its fingerprint across runs, rebuilds and edits elsewhere in
// the file, as memtrack diff matches groups. `ordinal` tells apart descriptors opened at one
// site (0 otherwise).
std::string sarif_fingerprint(const std::string& rule_id, const std::vector<Frame>& stack,
                              size_t ordinal = 0);

}  // namespace memtrack::report
