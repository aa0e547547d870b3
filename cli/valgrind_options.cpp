// The valgrind options memtrack ignores, and why. No state; prints only warnings.
#include "cli/valgrind_options.h"

#include <iostream>
#include <string_view>

#include "common/error.h"

namespace memtrack::cli {
namespace {

struct IgnoredOption {
  const char* name;  // without the leading "--"; a trailing '*' matches any suffix
  const char* why;
};

constexpr const char* kNoUninit = "memtrack does not track uninitialised values";
constexpr const char* kNoJit = "memtrack runs the program natively, not on a synthetic CPU";
constexpr const char* kNoDebugger = "memtrack has no gdb server";
constexpr const char* kNoFill = "memtrack does not change the contents of blocks";
constexpr const char* kNoAccess = "memtrack does not check memory accesses";
constexpr const char* kSymbols =
    "memtrack reads debug info after the program ends (inlined frames and demangled names "
    "always)";
constexpr const char* kOutput = "memtrack's report has one format";

// valgrind 3.x core and memcheck options (valgrind --help, --help-debug).
constexpr IgnoredOption kIgnored[] = {
    {"track-origins", kNoUninit},
    {"undef-value-errors", kNoUninit},
    {"expensive-definedness-checks", kNoUninit},
    {"partial-loads-ok", kNoAccess},
    {"workaround-gcc296-bugs", kNoAccess},
    {"ignore-ranges", kNoAccess},
    {"ignore-range-below-sp", kNoAccess},
    {"max-stackframe", kNoAccess},
    {"main-stacksize", kNoJit},
    {"valgrind-stacksize", kNoJit},
    {"smc-check", kNoJit},
    {"vex-*", kNoJit},
    {"fair-sched", kNoJit},
    {"sim-hints", kNoJit},
    {"kernel-variant", kNoJit},
    {"alignment", "memtrack does not replace the program's allocator"},
    {"redzone-size", "memtrack does not replace the program's allocator"},
    {"realloc-zero-bytes-frees", "memtrack does not replace the program's allocator"},
    {"xtree-memory*", kOutput},
    {"xtree-leak*", kOutput},
    {"time-stamp", kOutput},
    {"log-socket", "memtrack writes its report to a file or a descriptor"},
    {"malloc-fill", kNoFill},
    {"free-fill", kNoFill},
    {"freelist-vol", "memtrack does not delay the reuse of freed blocks"},
    {"freelist-big-blocks", "memtrack does not delay the reuse of freed blocks"},
    {"keep-stacktraces",
     "memtrack records the allocation stack of every block (MEMTRACK_OPTIONS=free_stacks=1 adds "
     "free stacks)"},
    {"show-mismatched-frees", "memtrack always reports mismatched frees"},
    {"show-realloc-size-zero", "memtrack does not report realloc with size 0"},
    {"ignore-fn", "memtrack's leak scan has no function-ignore list (use suppressions)"},
    {"leak-resolution", "memtrack groups leaks by their whole stack"},
    {"leak-check-heuristics", "memtrack's leak scan has fixed rules (docs/runtime.md)"},
    {"show-possibly-lost", "memtrack's equivalent is --show-leak-kinds"},
    {"vgdb*", kNoDebugger},
    {"db-attach", kNoDebugger},
    {"db-command", kNoDebugger},
    {"read-var-info", kSymbols},
    {"read-inline-info", kSymbols},
    {"demangle", kSymbols},
    {"keep-debuginfo", kSymbols},
    {"extra-debuginfo-path", kSymbols},
    {"debuginfo-server", kSymbols},
    {"allow-mismatched-debuginfo", kSymbols},
    {"run-libc-freeres", "memtrack leaves glibc's shutdown to the program"},
    {"run-cxx-freeres", "memtrack leaves libstdc++'s shutdown to the program"},
    {"trace-children-skip*", "memtrack traces every exec'd child (see --trace-children)"},
    {"sigill-diagnostics", kNoJit},
    {"show-below-main", "memtrack's stacks always end at main"},
    {"show-error-list", "memtrack lists every error in its report"},
    {"show-emwarns", kNoJit},
    {"error-limit", "memtrack reports every error"},
    {"error-markers", kOutput},
    {"exit-on-first-error", "memtrack's equivalent is --halt-on-error=yes"},
    {"require-text-symbol", kSymbols},
    {"soname-synonyms", "memtrack interposes the allocator of every loaded library"},
    {"merge-recursive-frames", "memtrack keeps every frame of a stack"},
    {"num-transtab-sectors", kNoJit},
    {"avg-transtab-entry-size", kNoJit},
    {"aspace-minaddr", kNoJit},
    {"resync-filter", kNoJit},
    {"max-threads", kNoJit},
    {"input-fd", "memtrack never asks questions"},
    {"fullpath-after", "memtrack prints file names as the debug info has them"},
    {"default-suppressions",
     "memtrack has no default suppression file (runtime-internal "
     "blocks are left out of reports instead)"},
    {"dsymutil", "memtrack runs on Linux only"},
    {"progress-interval", kOutput},
    {"stats", kOutput},
};

bool name_matches(const char* pattern, const std::string& name) {
  std::string p = pattern;
  if (!p.empty() && p.back() == '*') {
    return name.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0;
  }
  return name == p;
}

}  // namespace

std::optional<std::string> try_valgrind_ignored_option(const std::string& arg) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) return std::nullopt;
  size_t equals = arg.find('=');
  std::string name = arg.substr(2, equals == std::string::npos ? equals : equals - 2);
  if (name == "tool") {
    std::string tool = equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (tool == "memcheck") return std::string();
    throw Error("--tool=" + tool +
                " (valgrind): memtrack does the work of valgrind's memcheck only");
  }
  for (const IgnoredOption& option : kIgnored) {
    if (!name_matches(option.name, name)) continue;
    return "--" + name + " (valgrind) has no meaning here: " + option.why + "; ignored";
  }
  return std::nullopt;
}

void drop_valgrind_ignored_options(std::vector<std::string>& args,
                                   bool (*takes_value)(const std::string& name)) {
  std::vector<std::string> kept;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.empty() || arg[0] != '-') break;  // PROG
    if (std::optional<std::string> warning = try_valgrind_ignored_option(arg)) {
      if (!warning->empty()) std::cerr << "memtrack: warning: " << *warning << "\n";
      continue;
    }
    kept.push_back(arg);
    if (arg.find('=') == std::string::npos && takes_value(arg) && i + 1 < args.size()) {
      kept.push_back(args[++i]);
    }
  }
  kept.insert(kept.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  args = std::move(kept);
}

}  // namespace memtrack::cli

namespace memtrack::cli {

std::vector<char*> valgrind_command_line(int argc, char** argv) {
  if (argc < 1) return {};
  std::string_view name = argv[0];
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  if (!name.starts_with("memtrack-valgrind")) return {};
  static char run[] = "run";
  std::vector<char*> args{argv[0], run};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  return args;
}

}  // namespace memtrack::cli
