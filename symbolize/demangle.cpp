// C++ symbol demangling through the C++ runtime's demangler. Input is untrusted symbol text.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "symbolize/symbolizer.h"

namespace memtrack::symbolize {

std::string demangle(const std::string& name) {
  // Only Itanium C++ names: "_Z..." (C names and "main" pass through). Clone suffixes such as
  // ".cold" or ".constprop.0" are understood by the demangler ("f() [clone .cold]"). The
  // demangler bounds its own recursion (since GCC 9), so hostile names cannot overflow the
  // stack.
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || out == nullptr) return name;
  return out.get();
}

}  // namespace memtrack::symbolize
