// valgrind command-line options that have no meaning for memtrack: recognised so that a
// valgrind command line copied from a script runs, each with one warning saying why.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace memtrack::cli {

// If `arg` is "--NAME" or "--NAME=VALUE" for a valgrind option memtrack ignores, returns the
// warning line to print (without "memtrack: warning: " and the newline), or "" for one that
// is accepted silently (--tool=memcheck). std::nullopt: not such an option. Throws Error for
// a valgrind tool other than memcheck. Thread safe.
std::optional<std::string> try_valgrind_ignored_option(const std::string& arg);

// Removes the ignored valgrind options from `args`, memtrack's arguments before PROG (the
// first argument that is neither an option nor the value of the option before it; `takes_value`
// says whether an option name without '=' takes the next argument), and prints one warning
// line for each to stderr. Throws Error (see try_valgrind_ignored_option).
void drop_valgrind_ignored_options(std::vector<std::string>& args,
                                   bool (*takes_value)(const std::string& name));

// memtrack-valgrind: when argv[0]'s file name starts with "memtrack-valgrind" (a link to
// memtrack, installed beside it), the command line as `memtrack run` takes it: argv[0], "run",
// then the arguments as valgrind takes them (options, then the program without "--"; the
// options memcheck's callers pass, CTest's among them, are understood: docs/switching.md).
// Empty for any other name. The pointers stay valid as long as argv's strings.
std::vector<char*> valgrind_command_line(int argc, char** argv);

}  // namespace memtrack::cli
