// Suppression entries made for the groups and descriptor sites of one report
// (--gen-suppressions): a valgrind-style block that hides exactly its group, and a
// LeakSanitizer "leak:" line when one pattern can single the group out.
// Ordinary C++: allocates. Pure functions.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

// What --gen-suppressions writes under each group and site.
enum class GenSuppressions {
  kNo,
  kBlock,  // yes: the valgrind-style block
  kLsan,   // lsan: a leak: line, or a note that none singles the group out
};

// One group's or site's entries.
struct SuggestedSuppression {
  // The block, lines joined by '\n' without a final one:
  //   {
  //      memtrack:leak:read_config
  //      Memcheck:Leak
  //      match-leak-kinds: definite
  //      fun:read_config
  //      fun:main
  //   }
  // naming every printed frame (printed_frame_count()), fun: for frames with a function
  // name, obj: for the others. When another group of the report has the same names, lines
  // of frames with a source line become src:FILE:LINE; when even that does not tell them
  // apart, a "# also matches ..." comment line comes first.
  std::string block;
  // "leak:^NAME$" for a function, module or source file that appears in this group's
  // printed frames and in no other group's or site's, never main nor a C/C++ runtime frame;
  // "" when there is none.
  std::string lsan;
  // Both are "" for a stack that was not recorded.
};

struct ProcessSuggestions {
  std::vector<SuggestedSuppression> leaks;           // parallel to ProcessReport::leaks
  std::vector<SuggestedSuppression> resource_sites;  // parallel to resource_sites
};

// Guarantee: parsing an entry (Suppressions::parse) gives a suppression that matches its
// group or site; a block matches no other group or site of `process` unless it says so in
// its comment line, a leak: line never does.
ProcessSuggestions suggest_suppressions(const ProcessReport& process);

// suggest_suppressions for the processes of one report, computed once for processes whose
// groups and descriptor sites have the same kinds and stacks (the subshells of one script, a
// test program run many times): a report of 500 such processes spent most of its rendering
// time making the same suggestions again. The processes must outlive the cache. Not thread
// safe; one per rendering.
class SuggestionCache {
 public:
  const ProcessSuggestions& of(const ProcessReport& process);

 private:
  struct Entry {
    const ProcessReport* process;
    ProcessSuggestions suggestions;
  };
  // by process_signature; a deque keeps the references of() returned valid
  std::unordered_map<uint64_t, std::deque<Entry>> entries_;
};

}  // namespace memtrack::report
