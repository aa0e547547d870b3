// A module as the runtime recorded it (the symbolizer's input), a symbolized frame and a
// variable's location (its output). Plain values shared by symbolize/, report/ and cli/.
// Ordinary C++ (std::string, std::vector); never in the preload runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memtrack {

// One loaded object of a process, with raw addresses (result-file section 3).
struct RawModule {
  std::string path;
  uint64_t load_bias = 0;  // l_addr: file vaddr + load_bias = runtime address
  uint64_t start = 0;      // mapped range [start, end)
  uint64_t end = 0;
  std::vector<uint8_t> build_id;  // GNU build-id note, empty if none
  bool unloaded = false;          // dlclose'd before the process exited
};

// One code address after symbolization.
struct Frame {
  uint64_t address = 0;
  std::string module;  // path of the module, "" if unknown
  uint64_t module_offset = 0;
  std::string function;  // demangled; "" if unknown
  std::string file;      // source file, "" without debug info
  int line = 0;
  int column = 0;
  bool inlined = false;  // an inlined call inside the next frame's function
};

// Where a variable is declared (its definition's DWARF file and line).
struct VariableLocation {
  std::string file;  // "" if not known
  int line = 0;
};

}  // namespace memtrack
