// memtrack link-flags: the flags that link the runtime into a program instead of preloading
// it (docs/static-link.md). Reads nothing but the file system.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/launcher.h"
#include "common/error.h"

namespace memtrack::cli {

std::string find_static_runtime_dir() {
  std::filesystem::path dir = std::filesystem::path(find_runtime()).parent_path();
  for (const char* file : {"libmemtrack_static.a", "libmemtrack_static.wrap"}) {
    std::filesystem::path path = dir / file;
    if (access(path.c_str(), R_OK) != 0) {
      throw Error(
          "cannot find " + path.string() +
          " (the whole build makes the link-time runtime and installs it beside libmemtrack.so: "
          "make build; make demo builds only memtrack and its runtime)");
    }
  }
  return dir.string();
}

int link_flags_command(const Config&) {
  std::string dir = find_static_runtime_dir();
  // --eh-frame-hdr: gcc -static leaves the unwind table index out, and the runtime's stacks
  // need it. The wrap list is a response file read by the linker (ld's @FILE). The group
  // with libstdc++: its objects, which g++ links after these flags, call the operator new
  // hooks even in a program with no new/delete of its own, and ld rescans only a group; in a
  // C program nothing references the archive's C++ member, and nothing of libstdc++ is linked.
  std::cout << "-Wl,--eh-frame-hdr -Wl,@" << dir << "/libmemtrack_static.wrap -Wl,--start-group "
            << dir << "/libmemtrack_static.a -lstdc++ -Wl,--end-group\n";
  return 0;
}

}  // namespace memtrack::cli
