// XML 1.0 character data for the XML renderers (JUnit, valgrind XML): escaping and the
// characters XML cannot carry. Pure functions; they allocate.
#pragma once

#include <string>

namespace memtrack::report {

// `text` as XML 1.0 text or attribute value: markup characters escaped (&amp; &lt; &gt;
// &quot; &apos;); control characters other than tab, line feed and carriage return, and bytes
// that are not valid UTF-8 (names come from untrusted ELF and DWARF data), which XML 1.0
// cannot carry, become '?'. The result is always well-formed inside an element or a quoted
// attribute.
std::string xml_escaped(const std::string& text);

}  // namespace memtrack::report
