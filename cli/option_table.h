// The table of memtrack's command-line options: one row per option (name, value, help, the
// commands that take it, what it does to a Config), from which options.cpp builds the CLI11
// parser and memtrack run the runtime's MEMTRACK_OPTIONS. Internal to cli/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/options.h"

namespace memtrack::cli {

struct OptionSpec {
  const char* name;
  const char* metavar;  // nullptr: a flag, which takes no value
  std::string help;
  unsigned commands;
  bool repeatable;  // every occurrence applies; otherwise the last one wins
  std::function<void(Config&, const std::string&)> apply;  // called once per occurrence
  // Rows for runtime flags only: the flag (core/flags.inc) and its MEMTRACK_OPTIONS value for
  // a Config ("" leaves the runtime's default).
  const char* flag = nullptr;
  std::function<std::string(const Config&)> runtime_value = nullptr;
};

// Every option of every command, in the order --help lists them.
const std::vector<OptionSpec>& option_table();

}  // namespace memtrack::cli
