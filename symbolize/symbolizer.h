// Addresses -> frames (function, file, line, column, inlined chain) with elfutils libdw,
// out of process, from the module map a result file recorded. Input is untrusted (ELF and
// DWARF on disk may be anything): bad debug info degrades to "??" frames plus a note.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symbolize/frame.h"

namespace memtrack::symbolize {

// One per process (module map). Not thread safe.
class Symbolizer {
 public:
  explicit Symbolizer(const std::vector<RawModule>& modules);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The frames for one code address, innermost first: the inlined calls (inlined = true)
  // followed by the function that contains them. Return addresses (every frame but the
  // first of a stack) are looked up at address - 1, inside the call instruction. Results
  // are cached: each unique address is symbolized once, and the reference stays valid as long
  // as the Symbolizer. Always at least one frame, and nothing is thrown: an address in no
  // module gives module "" (module_offset 0), an unreadable file gives module+offset only,
  // a file without debug info gives the symbol-table name with file "" and line 0.
  const std::vector<Frame>& symbolize(uint64_t address, bool is_return_address);

  // Where the variable at data address `address` is defined (its DWARF declaration's file
  // and line), as the retention report names a root; file "" when the address is in no
  // module, its module has no DWARF, or no variable lies at exactly that address. Reads the
  // module's DWARF up to that variable on first use; cached.
  VariableLocation variable_location(uint64_t address);

  // Things the user should know, once each: modules without debug info, files that are
  // missing or whose build-id differs from the one recorded at run time. Missing and changed
  // files are noted by the constructor; "no debug info" is noted when symbolize() first
  // looks into such a module (so only for modules some stack went through): read the notes
  // after symbolizing.
  const std::vector<std::string>& notes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Demangles a C++ symbol name; returns it unchanged if it is not a mangled C++ name.
std::string demangle(const std::string& name);

}  // namespace memtrack::symbolize
