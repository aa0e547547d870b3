// memtrack: the command-line tool. One place catches every error and prints it once.
#include <iostream>

#include "cli/commands.h"
#include "cli/inherited_signals.h"
#include "cli/launcher.h"
#include "cli/options.h"
#include "cli/valgrind_options.h"

int main(int argc, char** argv) {
  using namespace memtrack::cli;
  remember_inherited_signals();  // before any handler of memtrack's is set
  Config config;
  int exit_code = 0;
  // memtrack-valgrind (a link to memtrack): valgrind's command line, `memtrack run`'s meaning.
  std::vector<char*> valgrind_argv = valgrind_command_line(argc, argv);
  if (!valgrind_argv.empty()) {
    argc = static_cast<int>(valgrind_argv.size()) - 1;
    argv = valgrind_argv.data();
    config.valgrind_wording = true;
  }
  if (!parse_command_line(argc, argv, &config, &exit_code)) return exit_code;
  try {
    switch (config.command) {
      case kRun:
        return run_command(config);
      case kReport:
        return report_command(config);
      case kTop:
        return top_command(config);
      case kSnapshot:
        return snapshot_command(config);
      case kDiff:
        return diff_command(config);
      case kUi:
        exec_ui(argv);
      case kLinkFlags:
        return link_flags_command(config);
      case kAttach:
        return attach_command(config);
      case kDetach:
        return detach_command(config);
    }
  } catch (const LaunchError& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const memtrack::Error& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
  }
  return memtrack::kExitToolFailed;
}
