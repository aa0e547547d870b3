// valgrind's XML output (see valgrind_xml_renderer.h; valgrind's docs/internals/
// xml-output-protocol4.txt and protocol5.txt describe the elements).
#include "report/valgrind_xml_renderer.h"

#include <algorithm>
#include <cstdio>

#include "core/result_names.h"
#include "report/text_format.h"
#include "report/xml_text.h"

namespace memtrack::report {
namespace {

// valgrind's <ip>: 0x and upper-case hex digits.
std::string valgrind_ip(uint64_t address) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llX", static_cast<unsigned long long>(address));
  return buffer;
}

// One document's writer: numbers the errors and remembers the counts of the non-leak ones.
class XmlWriter {
 public:
  explicit XmlWriter(std::ostream& out) : out_(out) {}

  void element(const char* indent, const char* name, const std::string& text) {
    out_ << indent << "<" << name << ">" << xml_escaped(text) << "</" << name << ">\n";
  }

  void stack(const std::vector<Frame>& frames) {
    out_ << "  <stack>\n";
    size_t count = printed_frame_count(frames);
    for (size_t i = 0; i < count; ++i) write_frame(frames[i]);
    out_ << "  </stack>\n";
  }

  // Opens an <error> with its unique id and kind; the caller closes it.
  std::string open_error(const char* kind) {
    std::string unique = hex(next_unique_++);
    out_ << "<error>\n";
    element("  ", "unique", unique);
    element("  ", "tid", "1");
    element("  ", "kind", kind);
    return unique;
  }

  void close_error() { out_ << "</error>\n\n"; }

  std::ostream& out() { return out_; }

 private:
  void write_frame(const Frame& frame) {
    out_ << "    <frame>\n";
    element("      ", "ip", valgrind_ip(frame.address));
    if (!frame.module.empty()) element("      ", "obj", frame.module);
    if (!frame.function.empty()) element("      ", "fn", frame.function);
    if (!frame.file.empty()) {
      size_t slash = frame.file.rfind('/');
      if (slash != std::string::npos && slash > 0) {
        element("      ", "dir", frame.file.substr(0, slash));
      }
      element("      ", "file", std::string(path_basename(frame.file)));
      if (frame.line > 0) element("      ", "line", std::to_string(frame.line));
    }
    out_ << "    </frame>\n";
  }

  std::ostream& out_;
  uint64_t next_unique_ = 0;
};

void write_status(XmlWriter& xml, const char* state) {
  xml.out() << "<status>\n";
  xml.element("  ", "state", state);
  xml.element("  ", "time", "00:00:00:00.000 ");
  xml.out() << "</status>\n\n";
}

void write_args(XmlWriter& xml, const std::vector<std::string>& argv, const char* element) {
  xml.out() << "  <" << element << ">\n";
  for (size_t i = 0; i < argv.size(); ++i) xml.element("    ", i == 0 ? "exe" : "arg", argv[i]);
  xml.out() << "  </" << element << ">\n";
}

void write_head(XmlWriter& xml, const Report& report, const ValgrindXmlOptions& options,
                int protocol) {
  const ProcessReport* first = report.processes.empty() ? nullptr : &report.processes.front();
  std::vector<std::string> command = first ? first->command : std::vector<std::string>{};
  xml.out() << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<valgrindoutput>\n\n";
  xml.element("", "protocolversion", std::to_string(protocol));
  xml.element("", "protocoltool", "memcheck");
  xml.out() << "\n<preamble>\n";
  xml.element("  ", "line", "memtrack, a memory leak detector: valgrind memcheck's XML format");
  xml.element("  ", "line", "Using memtrack " + options.version);
  xml.element("  ", "line", "Command: " + format_command(command, 10000));
  if (report.processes.size() > 1) {
    std::string pids;
    for (const ProcessReport& p : report.processes) pids += " " + std::to_string(p.pid);
    xml.element("  ", "line",
                "Errors of " + std::to_string(report.processes.size()) + " processes:" + pids);
  }
  xml.out() << "</preamble>\n\n";
  xml.element("", "pid", std::to_string(first ? first->pid : 0));
  xml.element("", "ppid", std::to_string(first ? first->ppid : 0));
  xml.element("", "tool", "memcheck");
  xml.out() << "\n<args>\n";
  write_args(xml,
             options.tool_argv.empty() ? std::vector<std::string>{"memtrack"} : options.tool_argv,
             "vargv");
  write_args(xml, command, "argv");
  xml.out() << "</args>\n\n";
}

// "Address 0x4a5b040 is 0 bytes inside a block of size 100 free'd", as memcheck words it.
std::string inside_block(const ErrorReport& error, const char* how) {
  return "Address " + hex(error.address) + " is " +
         std::to_string(error.address - error.block_start) + " bytes inside a block of size " +
         with_commas(error.block_size) + " " + how;
}

// The auxwhat lines and stacks after the bad call's stack.
void write_error_details(XmlWriter& xml, const ErrorReport& error) {
  bool has_block = error.block_start != 0 && error.address >= error.block_start;
  bool freed = error.kind == ErrorKind::kDoubleFree || error.kind == ErrorKind::kReallocAfterFree;
  if (freed && has_block) {
    xml.element("  ", "auxwhat", inside_block(error, "free'd"));
    if (!error.free_stack.empty()) xml.stack(error.free_stack);
    if (!error.alloc_stack.empty()) {
      xml.element("  ", "auxwhat", "Block was alloc'd at");
      xml.stack(error.alloc_stack);
    }
    return;
  }
  if (has_block) {
    xml.element("  ", "auxwhat", inside_block(error, "alloc'd"));
    if (!error.alloc_stack.empty()) xml.stack(error.alloc_stack);
    return;
  }
  std::string address = "Address " + hex(error.address);
  switch (error.where) {
    case ErrorWhere::kStack:
      xml.element("  ", "auxwhat", address + " is on a thread's stack");
      break;
    case ErrorWhere::kGlobal:
      xml.element("  ", "auxwhat", address + " is in global data");
      break;
    default:
      xml.element("  ", "auxwhat", address + " is not stack'd, malloc'd or (recently) free'd");
  }
}

struct Counted {
  std::string unique;
  uint64_t count;
};

// memcheck's error for a bad access: <kind>InvalidRead</kind> or InvalidWrite (also for bytes
// found overwritten at the free), <what>, the access's stack, and the block's story.
void write_heap_error(XmlWriter& xml, const ErrorReport& error, std::vector<Counted>& counts) {
  bool read = error.kind == ErrorKind::kInvalidRead;
  counts.push_back({xml.open_error(read ? "InvalidRead" : "InvalidWrite"),
                    std::max<uint64_t>(error.occurrences, 1)});
  bool found_later =
      error.kind == ErrorKind::kWriteOutsideBlock || error.kind == ErrorKind::kWriteAfterFree;
  const char* when = error.detail ? "at exit"
                     : error.kind == ErrorKind::kWriteOutsideBlock
                         ? "when the block was freed"
                         : "when the freed block left the quarantine";
  xml.element("  ", "what",
              found_later ? "Invalid write (found " + std::string(when) + ")"
                          : std::string(read ? "Invalid read" : "Invalid write"));
  // A write after free has no stack of its own: the free's stands first, as memcheck's
  // error's first stack is where it happened.
  xml.stack(error.kind == ErrorKind::kWriteAfterFree ? error.free_stack : error.stack);
  std::string address = "Address " + hex(error.address);
  if (error.block_start == 0) {
    xml.element("  ", "auxwhat", address + " is not stack'd, malloc'd or (recently) free'd");
  } else {
    bool freed = (!found_later && error.detail) || error.kind == ErrorKind::kWriteAfterFree;
    // memcheck's words: "is 0 bytes after a block of size 10 alloc'd".
    core::BlockRelation relation =
        core::block_relation(error.address, error.block_start, error.block_size);
    xml.element("  ", "auxwhat",
                address + " is " + std::to_string(relation.distance) + " bytes " + relation.where +
                    " a block of size " + with_commas(error.block_size) +
                    (freed ? " free'd" : " alloc'd"));
    if (error.kind == ErrorKind::kWriteAfterFree) {
      if (!error.alloc_stack.empty()) {
        xml.element("  ", "auxwhat", "Block was alloc'd at");
        xml.stack(error.alloc_stack);
      }
    } else if (freed) {
      if (!error.free_stack.empty()) xml.stack(error.free_stack);
      if (!error.alloc_stack.empty()) {
        xml.element("  ", "auxwhat", "Block was alloc'd at");
        xml.stack(error.alloc_stack);
      }
    } else if (!error.alloc_stack.empty()) {
      xml.stack(error.alloc_stack);
    }
  }
  xml.close_error();
}

void write_misuse(XmlWriter& xml, const ErrorReport& error, std::vector<Counted>& counts) {
  if (core::is_heap_error(error.kind)) {
    write_heap_error(xml, error, counts);
    return;
  }
  bool mismatched = error.kind == ErrorKind::kMismatchedFree;
  counts.push_back({xml.open_error(mismatched ? "MismatchedFree" : "InvalidFree"),
                    std::max<uint64_t>(error.occurrences, 1)});
  xml.element("  ", "what",
              mismatched ? "Mismatched free() / delete / delete []"
                         : "Invalid free() / delete / delete[] / realloc()");
  xml.stack(error.stack);
  write_error_details(xml, error);
  xml.close_error();
}

void write_descriptors(XmlWriter& xml, const ResourceSite& site) {
  for (const ResourceFacts& resource : site.resources) {
    xml.open_error("FdNotClosed");
    xml.element("  ", "fd", std::to_string(resource.fd));
    bool is_path = !resource.description.empty() && resource.description[0] == '/';
    if (is_path) xml.element("  ", "path", resource.description);
    xml.element(
        "  ", "what",
        "Open file descriptor " + std::to_string(resource.fd) + ": " + resource_line(resource));
    xml.stack(site.stack);
    xml.close_error();
  }
}

// The shown leak groups of every process, smallest first as memcheck lists its loss records.
void write_leaks(XmlWriter& xml, const Report& report, LeakKinds shown) {
  std::vector<const LeakGroup*> groups;
  for (const ProcessReport& p : report.processes) {
    for (const LeakGroup& group : p.leaks) groups.push_back(&group);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const LeakGroup* a, const LeakGroup* b) {
    return a->bytes + a->indirect_bytes < b->bytes + b->indirect_bytes;
  });
  for (size_t i = 0; i < groups.size(); ++i) {
    const LeakGroup& group = *groups[i];
    if (!shown.contains(group.kind)) continue;
    xml.open_error(valgrind_leak_kind(group.kind));
    uint64_t total = group.bytes + group.indirect_bytes;
    std::string bytes = with_commas(total);
    if (group.indirect_bytes > 0) {
      bytes += " (" + with_commas(group.bytes) + " direct, " + with_commas(group.indirect_bytes) +
               " indirect)";
    }
    xml.out() << "  <xwhat>\n";
    xml.element("    ", "text",
                bytes + " bytes in " + with_commas(group.blocks) + " blocks are " +
                    (group.kind == LeakKind::kUnclassified ? "possibly lost"
                                                           : core::leak_kind_phrase(group.kind)) +
                    " in loss record " + with_commas(i + 1) + " of " + with_commas(groups.size()));
    xml.element("    ", "leakedbytes", std::to_string(total));
    xml.element("    ", "leakedblocks", std::to_string(group.blocks));
    xml.out() << "  </xwhat>\n";
    xml.stack(group.stack);
    xml.close_error();
  }
}

// valgrind's <suppcounts>: per suppression that matched, the leak records and descriptor
// records it hid, summed over the processes of the document, in the order first used.
void write_suppcounts(XmlWriter& xml, const Report& report) {
  std::ostream& out = xml.out();
  std::vector<std::pair<std::string, uint64_t>> counts;
  for (const ProcessReport& p : report.processes) {
    for (const UsedSuppression& used : p.used_suppressions) {
      auto same = [&](const auto& c) { return c.first == used.name; };
      auto it = std::find_if(counts.begin(), counts.end(), same);
      if (it == counts.end()) it = counts.insert(counts.end(), {used.name, 0});
      it->second += used.groups + used.descriptors;
    }
  }
  out << "<suppcounts>\n";
  for (const auto& [name, count] : counts) {
    out << "  <pair>\n";
    xml.element("    ", "count", std::to_string(count));
    xml.element("    ", "name", name);
    out << "  </pair>\n";
  }
  out << "</suppcounts>\n\n";
}

}  // namespace

const char* valgrind_leak_kind(LeakKind kind) {
  switch (kind) {
    case LeakKind::kDefinite:
      return "Leak_DefinitelyLost";
    case LeakKind::kIndirect:
      return "Leak_IndirectlyLost";
    case LeakKind::kReachable:
      return "Leak_StillReachable";
    case LeakKind::kPossible:
    case LeakKind::kUnclassified:
      break;
  }
  return "Leak_PossiblyLost";
}

void render_valgrind_xml(const Report& report, std::ostream& out,
                         const ValgrindXmlOptions& options) {
  bool descriptors = std::any_of(report.processes.begin(), report.processes.end(),
                                 [](const ProcessReport& p) { return !p.resource_sites.empty(); });
  XmlWriter xml(out);
  write_head(xml, report, options, descriptors ? 5 : 4);
  write_status(xml, "RUNNING");
  std::vector<Counted> counts;
  for (const ProcessReport& p : report.processes) {
    for (const ErrorReport& error : p.errors) write_misuse(xml, error, counts);
  }
  write_status(xml, "FINISHED");
  for (const ProcessReport& p : report.processes) {
    for (const ResourceSite& site : p.resource_sites) write_descriptors(xml, site);
  }
  write_leaks(xml, report, options.show_kinds);
  out << "<errorcounts>\n";
  for (const Counted& counted : counts) {
    out << "  <pair>\n";
    xml.element("    ", "count", std::to_string(counted.count));
    xml.element("    ", "unique", counted.unique);
    out << "  </pair>\n";
  }
  out << "</errorcounts>\n\n";
  write_suppcounts(xml, report);
  out << "</valgrindoutput>\n\n";
}

}  // namespace memtrack::report
