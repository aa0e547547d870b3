// memtrack-ui: the web GUI behind `memtrack ui`, an executable of its own so that every other
// command starts without loading the HTTP server library and the TLS libraries it brings
// (their start-up cost is paid by each `memtrack run` of a test suite otherwise). `memtrack
// ui ARGS` checks its options and executes this with the same arguments.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/pprof_server.h"

int main(int argc, char** argv) {
  using namespace memtrack::cli;
  // memtrack run --pprof-http starts it so: memtrack-ui --pprof-server HOST PORT.
  if (argc == 4 && std::string(argv[1]) == "--pprof-server") {
    try {
      return pprof_server_main(argv[2], std::stoi(argv[3]));
    } catch (const std::exception& e) {
      std::cout << "error: " << e.what() << std::endl;
      return memtrack::kExitToolFailed;
    }
  }
  Config config;
  int exit_code = 0;
  if (!parse_command_line(argc, argv, &config, &exit_code)) return exit_code;
  if (config.command != kUi) {
    std::cerr << "memtrack-ui: error: start it as 'memtrack ui'\n";
    return memtrack::kExitToolFailed;
  }
  try {
    return ui_command(config);
  } catch (const memtrack::Error& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "memtrack: error: " << e.what() << "\n";
  }
  return memtrack::kExitToolFailed;
}
