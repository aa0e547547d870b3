// The SARIF 2.1.0 log (see sarif_renderer.h; the OASIS SARIF 2.1.0 standard, sections 3.14
// run, 3.27 result, 3.36 codeFlow, 3.44 stack, 3.49 reportingDescriptor).
#include "report/sarif_renderer.h"

#include <array>
#include <cctype>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/result_names.h"
#include "report/diff.h"
#include "report/json_text.h"
#include "report/text_format.h"

namespace memtrack::report {
namespace {

using nlohmann::ordered_json;

struct Rule {
  const char* id;
  const char* name;
  const char* level;  // the results' level: error, warning or note
  const char* short_description;
  const char* full_description;
  const char* help;  // markdown; its plain text is the same without the backquotes
};

// One per leak kind (LeakKind order), then misuse errors (ErrorKind order), then descriptors.
constexpr std::array<Rule, 14> kRules = {{
    {"definite-leak", "DefinitelyLostMemory", "error", "Memory definitely lost.",
     "Heap blocks still allocated at exit that no pointer anywhere in the program's memory "
     "reaches: the program can never free them.",
     "Free the block when its last pointer goes away, or give it an owner (a smart pointer, a "
     "container) that frees it. The location is where it was allocated; the code flow is the "
     "allocation stack."},
    {"indirect-leak", "IndirectlyLostMemory", "warning", "Memory indirectly lost.",
     "Heap blocks reached only through definitely lost blocks: they are lost because the block "
     "that points to them is.",
     "Fixing the definitely lost block that points to this one usually fixes this one too."},
    {"possible-leak", "PossiblyLostMemory", "warning", "Memory possibly lost.",
     "Heap blocks reached only through pointers into their middle (interior pointers): either "
     "the program keeps such pointers on purpose or the block is lost.",
     "Check whether the program still holds a pointer into this block; if it does not, free "
     "the block as for a definite leak."},
    {"reachable-block", "StillReachableMemory", "note", "Memory still reachable at exit.",
     "Heap blocks still allocated at exit that a pointer in global data, a thread's stack or "
     "registers still reaches. Often caches kept on purpose until the process ends.",
     "Free it at exit if you want a clean report; it is listed only with "
     "`--show-leak-kinds=all`."},
    {"unclassified-leak", "UnclassifiedMemory", "warning", "Memory not freed at exit.",
     "Heap blocks still allocated at exit that the leak scan did not classify (the scan did "
     "not run, or could not read the program's memory).",
     "See the report's notes for why the blocks were not classified."},
    {"double-free", "DoubleFree", "error", "Block freed twice.",
     "free, delete or delete[] of a block that was already freed. The second release is "
     "undefined behaviour and often corrupts the allocator.",
     "Release each block once; set pointers to null after freeing them. The stacks show the "
     "second release, the first one and the allocation."},
    {"invalid-free", "InvalidFree", "error", "Free of memory that is not a heap block.",
     "free, delete or delete[] of a pointer that malloc or new did not return: a stack or "
     "global address, or a pointer into the middle of a block.",
     "Release only pointers that the allocator returned, unchanged."},
    {"mismatched-free", "MismatchedFree", "error", "Block released with the wrong function.",
     "A block released by a function of another family: malloc with delete, new with free, "
     "new[] with delete, an aligned new with a plain delete.",
     "Pair `malloc` with `free`, `new` with `delete` and `new[]` with `delete[]`."},
    {"realloc-after-free", "ReallocOfFreedPointer", "error", "realloc of a freed block.",
     "realloc called with a pointer whose block was already freed.",
     "Use the pointer realloc returned, never the one passed to it or a freed one."},
    {"invalid-read", "InvalidRead", "error", "Read outside a heap block or of a freed one.",
     "A read just outside a heap block (a buffer overflow or underflow) or of a block already "
     "freed (a use after free), caught at the instruction by a guard page (--check-heap).",
     "Keep accesses within the block's size, and stop using a block once it is freed. The "
     "stacks show the access, the allocation and, for a freed block, the free."},
    {"invalid-write", "InvalidWrite", "error", "Write outside a heap block or to a freed one.",
     "A write just outside a heap block (a buffer overflow or underflow) or to a block already "
     "freed (a use after free), caught at the instruction by a guard page (--check-heap).",
     "Keep accesses within the block's size, and stop using a block once it is freed. The "
     "stacks show the access, the allocation and, for a freed block, the free."},
    {"write-outside-block", "WriteOutsideBlock", "error", "Bytes beside a heap block overwritten.",
     "Bytes next to a heap block changed: a buffer overflow or underflow that no guard page "
     "caught, found when the block was freed or at exit (--check-heap).",
     "Keep writes within the block's size. The location is where it was found (the free); the "
     "allocation stack shows which block it was."},
    {"write-after-free", "WriteAfterFree", "error", "A freed heap block written to.",
     "Bytes of a heap block changed after it was freed: a use after free that wrote, found "
     "when the block left the quarantine of freed blocks or at exit (--check-heap=full).",
     "Stop using a block once it is freed (clear the pointers to it). The location is where "
     "the block was freed; the allocation stack shows which block it was."},
    {"descriptor-left-open", "DescriptorLeftOpen", "warning", "File descriptor left open.",
     "A descriptor (file, socket, pipe, ...) the program opened and never closed before it "
     "exited.",
     "Close the descriptor (close, fclose) when it is no longer needed, or open it with "
     "O_CLOEXEC and keep it on purpose. The location is where it was opened."},
}};

constexpr size_t kFirstErrorRule = 5;  // ErrorKind::kDoubleFree
constexpr size_t kDescriptorRule = 13;
static_assert(kFirstErrorRule + static_cast<size_t>(ErrorKind::kWriteAfterFree) -
                      static_cast<size_t>(ErrorKind::kDoubleFree) + 1 ==
                  kDescriptorRule,
              "one rule per error kind, in ErrorKind order, before the descriptors'");

size_t leak_rule(LeakKind kind) {
  return static_cast<size_t>(kind);
}

size_t error_rule(ErrorKind kind) {
  return kFirstErrorRule + static_cast<size_t>(kind) - static_cast<size_t>(ErrorKind::kDoubleFree);
}

ordered_json rule_to_json(const Rule& rule) {
  std::string plain_help = rule.help;
  std::erase(plain_help, '`');
  return {
      {"id", rule.id},
      {"name", rule.name},
      {"shortDescription", {{"text", rule.short_description}}},
      {"fullDescription", {{"text", rule.full_description}}},
      {"defaultConfiguration", {{"level", rule.level}}},
      {"help", {{"text", plain_help}, {"markdown", rule.help}}},
      {"properties", {{"tags", ordered_json::array({"memory", "reliability"})}}},
  };
}

// RFC 3986 path characters kept; everything else percent-encoded.
std::string uri_path(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(path.size());
  for (unsigned char c : path) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alnum || std::string_view("/-._~!$&'()*+,;=:@").find(static_cast<char>(c)) !=
                     std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

class SarifWriter {
 public:
  explicit SarifWriter(const SarifOptions& options) : options_(options) {
    root_ = options.source_root;
    if (!root_.empty() && root_.back() != '/') root_ += '/';
  }

  bool under_root(const std::string& path) const {
    return !root_.empty() && path.size() > root_.size() &&
           path.compare(0, root_.size(), root_) == 0;
  }

  // 3: a source file under the root; 2: a source file of a program module outside /usr;
  // 1: any source file; 0: no source file.
  int site_rank(const Frame& frame) const {
    if (frame.file.empty()) return 0;
    if (under_root(frame.file)) return 3;
    if (!is_system_runtime_module(frame.module) && !frame.file.starts_with("/usr/")) return 2;
    return 1;
  }

  void write_artifact_location(JsonText& j, const std::string& path) const {
    j.begin_object();
    if (under_root(path)) {
      j.member("uri", uri_path(path.substr(root_.size())));
      j.member("uriBaseId", "SRCROOT");
    } else if (!path.empty() && path[0] == '/') {
      j.member("uri", "file://" + uri_path(path));
    } else {
      j.member("uri", uri_path(path));
      j.member("uriBaseId", "SRCROOT");
    }
    j.end_object();
  }

  // A frame's location: its source file and line, or its module; and its function. With
  // `message`, a "message" member last (the code flow's).
  void write_frame_location(JsonText& j, const Frame& frame,
                            const std::string* message = nullptr) const {
    j.begin_object();
    if (!frame.file.empty()) {
      j.key("physicalLocation").begin_object();
      write_artifact_location(j.key("artifactLocation"), frame.file);
      if (frame.line > 0) {
        j.key("region").begin_object();
        j.member("startLine", frame.line);
        if (frame.column > 0) j.member("startColumn", frame.column);
        j.end_object();
      }
      j.end_object();
    } else if (!frame.module.empty()) {
      j.key("physicalLocation").begin_object();
      write_artifact_location(j.key("artifactLocation"), frame.module);
      j.end_object();
    }
    if (!frame.function.empty()) {
      j.key("logicalLocations").begin_array();
      j.begin_object();
      j.member("fullyQualifiedName", frame.function);
      j.member("kind", "function");
      j.end_object();
      j.end_array();
    }
    if (message != nullptr) {
      j.key("message").begin_object();
      j.member("text", *message);
      j.end_object();
    }
    j.end_object();
  }

  // The frame a result points at (sarif_renderer.h): the first of the best rank, or nullptr
  // for an empty stack.
  const Frame* site_frame(const std::vector<Frame>& stack) const {
    size_t count = printed_frame_count(stack);
    const Frame* best = nullptr;
    int best_rank = -1;
    for (size_t i = 0; i < count; ++i) {
      int rank = site_rank(stack[i]);
      if (rank > best_rank) {
        best = &stack[i];
        best_rank = rank;
      }
    }
    return best;
  }

  void write_primary_location(JsonText& j, const std::vector<Frame>& stack) const {
    const Frame* site = site_frame(stack);
    if (site != nullptr) {
      write_frame_location(j, *site);
      return;
    }
    j.begin_object();
    j.key("message").begin_object();
    j.member("text", "no stack");
    j.end_object();
    j.end_object();
  }

  void write_stack(JsonText& j, const std::vector<Frame>& stack, const char* what) const {
    j.begin_object();
    j.key("message").begin_object();
    j.member("text", what);
    j.end_object();
    j.key("frames").begin_array();
    size_t count = printed_frame_count(stack);
    for (size_t i = 0; i < count; ++i) {
      j.begin_object();
      write_frame_location(j.key("location"), stack[i]);
      if (!stack[i].module.empty()) j.member("module", stack[i].module);
      j.key("properties").begin_object();
      j.member("address", hex(stack[i].address));
      j.end_object();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }

  // main first, the site last, each location with its function as the message.
  void write_code_flow(JsonText& j, const std::vector<Frame>& stack) const {
    j.begin_object();
    j.key("threadFlows").begin_array();
    j.begin_object();
    j.key("locations").begin_array();
    size_t count = printed_frame_count(stack);
    for (size_t i = count; i-- > 0;) {
      std::string message = stack[i].function.empty() ? "??" : stack[i].function;
      j.begin_object();
      write_frame_location(j.key("location"), stack[i], &message);
      j.member("nestingLevel", static_cast<uint64_t>(count - 1 - i));
      j.end_object();
    }
    j.end_array();
    j.end_object();
    j.end_array();
    j.end_object();
  }

  // One result. `more_stacks` (name, stack) follow the main one in "stacks"; `properties`
  // writes the members of "properties".
  template <typename Properties>
  void write_result(
      JsonText& j, size_t rule, const std::string& message, const std::vector<Frame>& stack,
      const char* stack_name, size_t ordinal,
      const std::vector<std::pair<const char*, const std::vector<Frame>*>>& more_stacks,
      Properties&& properties) const {
    j.begin_object();
    j.member("ruleId", kRules[rule].id);
    j.member("ruleIndex", static_cast<uint64_t>(rule));
    j.member("level", kRules[rule].level);
    j.key("message").begin_object();
    j.member("text", message);
    j.end_object();
    j.key("locations").begin_array();
    write_primary_location(j, stack);
    j.end_array();
    j.key("partialFingerprints").begin_object();
    j.member("memtrackStack/v1", sarif_fingerprint(kRules[rule].id, stack, ordinal));
    j.end_object();
    bool has_stack = printed_frame_count(stack) > 0;
    if (has_stack) {
      j.key("codeFlows").begin_array();
      write_code_flow(j, stack);
      j.end_array();
    }
    // Stacks only where a result has more than the code flow's (misuse errors: the first
    // free's and the allocation's): the same frames again doubled a large log's size.
    if (!more_stacks.empty()) {
      j.key("stacks").begin_array();
      if (has_stack) write_stack(j, stack, stack_name);
      for (const auto& [name, more] : more_stacks) write_stack(j, *more, name);
      j.end_array();
    }
    j.key("properties").begin_object();
    properties();
    j.end_object();
    j.end_object();
  }

  const SarifOptions& options() const { return options_; }
  const std::string& root() const { return root_; }

 private:
  const SarifOptions& options_;
  std::string root_;  // source_root ending in '/', or ""
};

// " in make_leak (leak.c:6)": where a result's site is, for its message.
std::string site_phrase(const SarifWriter& writer, const std::vector<Frame>& stack) {
  const Frame* frame = writer.site_frame(stack);
  if (frame == nullptr) return "";
  std::string function = frame->function.empty() ? "??" : frame->function;
  if (frame->file.empty()) return " in " + function;
  return " in " + function + " (" + std::string(path_basename(frame->file)) + ":" +
         std::to_string(frame->line) + ")";
}

void write_leaks(const SarifWriter& writer, const ProcessReport& p, JsonText& j) {
  for (const LeakGroup& group : p.leaks) {
    if (!writer.options().show_kinds.contains(group.kind)) continue;
    std::string message = count_of(group.bytes, "byte", "bytes") + " in " +
                          count_of(group.blocks, "block", "blocks") + " " +
                          core::leak_kind_phrase(group.kind);
    if (group.indirect_blocks > 0) {
      message += " (and " + count_of(group.indirect_bytes, "byte", "bytes") + " in " +
                 count_of(group.indirect_blocks, "block", "blocks") + " indirectly lost through " +
                 (group.blocks == 1 ? "it" : "them") + ")";
    }
    message += ", allocated" + site_phrase(writer, group.stack);
    writer.write_result(j, leak_rule(group.kind), message, group.stack, "Allocation stack", 0, {},
                        [&] {
                          j.member("pid", p.pid);
                          j.member("kind", core::leak_kind_name(group.kind));
                          j.member("bytes", group.bytes);
                          j.member("blocks", group.blocks);
                          j.member("indirect_bytes", group.indirect_bytes);
                          j.member("indirect_blocks", group.indirect_blocks);
                        });
  }
}

void write_errors(const SarifWriter& writer, const ProcessReport& p, JsonText& j) {
  for (const ErrorReport& error : p.errors) {
    std::string message = error_description(error) + site_phrase(writer, error.stack);
    if (error.occurrences > 1) message += ", " + with_commas(error.occurrences) + " times";
    std::vector<std::pair<const char*, const std::vector<Frame>*>> more;
    bool heap_error = core::is_heap_error(error.kind);
    // A write after free's own location is its free.
    if (!error.free_stack.empty() && error.kind != ErrorKind::kWriteAfterFree) {
      more.emplace_back(heap_error ? "Freed at" : "First freed at", &error.free_stack);
    }
    if (!error.alloc_stack.empty()) more.emplace_back("Allocated at", &error.alloc_stack);
    const char* stack_name = !heap_error                                ? "Bad call"
                             : error.kind == ErrorKind::kWriteAfterFree ? "Freed at"
                             : error.kind == ErrorKind::kWriteOutsideBlock
                                 ? (error.detail ? "Allocated at" : "Found at")
                                 : "Access";
    writer.write_result(j, error_rule(error.kind), message, error.stack, stack_name, 0, more, [&] {
      j.member("pid", p.pid);
      j.member("kind", core::error_kind_name(error.kind));
      j.member("occurrences", error.occurrences);
    });
  }
}

void write_descriptors(const SarifWriter& writer, const ProcessReport& p, JsonText& j) {
  for (const ResourceSite& site : p.resource_sites) {
    for (size_t i = 0; i < site.resources.size(); ++i) {
      const ResourceFacts& resource = site.resources[i];
      std::string message = "Descriptor " + std::to_string(resource.fd) +
                            " left open: " + resource_line(resource) + ", opened" +
                            site_phrase(writer, site.stack);
      writer.write_result(j, kDescriptorRule, message, site.stack, "Opened at", i, {}, [&] {
        j.member("pid", p.pid);
        j.member("fd", resource.fd);
      });
    }
  }
}

ordered_json process_to_json(const ProcessReport& p) {
  const Summary& s = p.summary;
  return {{"pid", p.pid},
          {"ppid", p.ppid},
          {"command", p.command},
          {"has_leak_data", p.has_leak_data},
          {"leaked_bytes", s.leaked().bytes},
          {"leaked_blocks", s.leaked().blocks},
          {"definite_bytes", s.of_kind(LeakKind::kDefinite).bytes},
          {"indirect_bytes", s.of_kind(LeakKind::kIndirect).bytes},
          {"possible_bytes", s.of_kind(LeakKind::kPossible).bytes},
          {"reachable_bytes", s.of_kind(LeakKind::kReachable).bytes},
          {"suppressed_bytes", s.suppressed.bytes},
          {"errors", s.errors},
          {"open_descriptors", s.open_descriptors}};
}

ordered_json tool_to_json(const SarifOptions& options) {
  ordered_json rules = ordered_json::array();
  for (const Rule& rule : kRules) rules.push_back(rule_to_json(rule));
  std::string version = options.version.empty() ? "0.0.0" : options.version;
  ordered_json driver = {{"name", "memtrack"},
                         {"fullName", "memtrack memory leak detector"},
                         {"version", version},
                         {"semanticVersion", version}};
  if (!options.information_uri.empty()) driver["informationUri"] = options.information_uri;
  driver["rules"] = rules;
  return {{"driver", driver}};
}

}  // namespace

std::vector<std::string> sarif_rule_ids() {
  std::vector<std::string> ids;
  for (const Rule& rule : kRules) ids.emplace_back(rule.id);
  return ids;
}

std::string sarif_fingerprint(const std::string& rule_id, const std::vector<Frame>& stack,
                              size_t ordinal) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis and prime
  auto add = [&](const std::string& text) {
    for (unsigned char c : text + '\n') {
      hash ^= c;
      hash *= 0x100000001b3ull;
    }
  };
  add(rule_id);
  add(std::to_string(ordinal));
  size_t count = printed_frame_count(stack);
  for (size_t i = 0; i < count; ++i) add(key_frame(stack[i]));
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

// The log is written process by process, each process's results as text (json_text.h): a
// report of 100,000 groups made a document of gigabytes in memory, copied twice, before a byte
// of it was written. "results" and the run's "properties" come last; one line, a final line
// break.
void render_sarif(const Report& report, std::ostream& out, const SarifOptions& options) {
  SarifWriter writer(options);
  std::string text;
  auto flush = [&] {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
  };
  // On one line: a SARIF log is read by tools (and uploaded, where size limits apply), and
  // indentation was half of its bytes.
  JsonText j(text, -1);
  j.begin_object();
  j.member("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  j.member("version", "2.1.0");
  j.key("runs").begin_array();
  j.begin_object();
  j.key("tool").value(tool_to_json(options));
  if (!writer.root().empty()) {
    j.key("originalUriBaseIds").begin_object();
    j.key("SRCROOT").begin_object();
    j.member("uri", "file://" + uri_path(writer.root()));
    j.end_object();
    j.end_object();
  }
  j.key("invocations").begin_array();
  j.begin_object();
  j.member("executionSuccessful", true);
  j.end_object();
  j.end_array();
  j.member("columnKind", "unicodeCodePoints");
  j.key("results").begin_array();
  ordered_json processes = ordered_json::array();
  for (const ProcessReport& p : report.processes) {
    write_leaks(writer, p, j);
    write_errors(writer, p, j);
    write_descriptors(writer, p, j);
    flush();
    processes.push_back(process_to_json(p));
  }
  j.end_array();
  j.key("properties").begin_object();
  j.key("processes").value(processes);
  j.end_object();
  j.end_object();
  j.end_array();
  j.end_object();
  text += '\n';
  flush();
}

}  // namespace memtrack::report
