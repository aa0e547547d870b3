// Small text helpers for reports (see text_format.h). Pure functions.
#include "report/text_format.h"

#include <csignal>

#include <fmt/format.h>

#include "core/fd_names.h"
#include "core/result_names.h"
#include "core/signal_names.h"

namespace memtrack::report {

namespace {

bool is_shell_safe(unsigned char c) {
  // Python's shlex.quote set, plus every non-ASCII byte (UTF-8 text needs no quoting).
  if (c >= 0x80) return true;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("@%+=:,./_-").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

// bash ANSI-C quoting: $'a\nb'.
std::string ansi_c_quote(std::string_view arg) {
  std::string out = "$'";
  for (unsigned char c : arg) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (is_control(c)) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '\'';
  return out;
}

std::string shell_quote(std::string_view arg) {
  if (arg.empty()) return "''";
  bool safe = true;
  for (unsigned char c : arg) {
    if (is_control(c)) return ansi_c_quote(arg);
    if (!is_shell_safe(c)) safe = false;
  }
  if (safe) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string alloc_call_phrase(const ErrorReport& error) {
  std::string aligned = error.alloc_aligned ? "aligned " : "";
  switch (error.alloc_call) {
    case AllocCall::kMalloc:
      return "malloc";
    case AllocCall::kNew:
      return aligned + "new";
    case AllocCall::kNewArray:
      return aligned + "new[]";
    case AllocCall::kNone:
      break;
  }
  return "an unknown allocator";
}

std::string free_call_phrase(const ErrorReport& error) {
  std::string aligned = error.free_aligned ? "aligned " : "";
  switch (error.free_call) {
    case FreeCall::kFree:
      return "free";
    case FreeCall::kDelete:
      return aligned + "delete";
    case FreeCall::kDeleteArray:
      return aligned + "delete[]";
    case FreeCall::kRealloc:
      return "realloc";
  }
  return "free";
}

std::string invalid_free_description(const ErrorReport& error) {
  std::string address = hex(error.address);
  switch (error.where) {
    case ErrorWhere::kHeap:
      // The runtime found the block containing the address; a record without one (or an
      // address before it, from a corrupt file) gets the generic phrase.
      if (error.block_start == 0 || error.address < error.block_start) break;
      return fmt::format("Invalid free of {}, {} inside a block of {}", address,
                         count_of(error.address - error.block_start, "byte", "bytes"),
                         count_of(error.block_size, "byte", "bytes"));
    case ErrorWhere::kStack:
      return fmt::format("Invalid free of {}: it points to the stack", address);
    case ErrorWhere::kGlobal:
      return fmt::format("Invalid free of {}: it points to global data (not heap memory)", address);
    case ErrorWhere::kUnknown:
      break;
  }
  return fmt::format("Invalid free of {}: not memory that malloc or new returned", address);
}

// " (100 bytes)" for a record with a block, "" without.
std::string block_size_suffix(const ErrorReport& error) {
  if (error.block_start == 0) return "";
  return fmt::format(" ({})", count_of(error.block_size, "byte", "bytes"));
}

}  // namespace

std::string block_relation(const ErrorFacts& error) {
  core::BlockRelation relation =
      core::block_relation(error.address, error.block_start, error.block_size);
  return fmt::format("{} {} a block of {}", count_of(relation.distance, "byte", "bytes"),
                     relation.where, count_of(error.block_size, "byte", "bytes"));
}

std::string error_description(const ErrorReport& error) {
  switch (error.kind) {
    case ErrorKind::kInvalidRead:
    case ErrorKind::kInvalidWrite: {
      std::string what = error.kind == ErrorKind::kInvalidRead ? "Invalid read" : "Invalid write";
      if (error.block_start == 0) {
        return fmt::format("{} at {}, near no block", what, hex(error.address));
      }
      return fmt::format("{} at {}: {}{}", what, hex(error.address), block_relation(error),
                         error.detail ? ", freed" : "");
    }
    case ErrorKind::kWriteOutsideBlock:
      return fmt::format("Bytes beside a block overwritten: {} is {}, found {}", hex(error.address),
                         block_relation(error),
                         error.detail ? "at exit" : "when the block was freed");
    case ErrorKind::kWriteAfterFree:
      return fmt::format("Write to a freed block: {} is {}, found {}", hex(error.address),
                         block_relation(error),
                         error.detail ? "at exit" : "when the block left the quarantine");
    case ErrorKind::kDoubleFree:
      return fmt::format("Double free of {}{}", hex(error.address), block_size_suffix(error));
    case ErrorKind::kInvalidFree:
      break;
    case ErrorKind::kMismatchedFree:
      return fmt::format("Mismatched free: a block from {} released with {}",
                         alloc_call_phrase(error), free_call_phrase(error));
    case ErrorKind::kReallocAfterFree:
      return fmt::format("realloc of freed pointer {}{}", hex(error.address),
                         block_size_suffix(error));
  }
  return invalid_free_description(error);
}

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string count_of(uint64_t n, std::string_view singular, std::string_view plural) {
  return fmt::format("{} {}", with_commas(n), n == 1 ? singular : plural);
}

uint64_t three_digits(uint64_t value) {
  uint64_t scale = 1;
  while (value / scale >= 1000) scale *= 10;
  return (value + scale / 2) / scale * scale;
}

std::string estimate_phrase(uint64_t estimated_bytes, uint64_t estimated_blocks,
                            uint64_t sampled_blocks) {
  uint64_t bytes = three_digits(estimated_bytes);
  uint64_t blocks = three_digits(estimated_blocks);
  return fmt::format("~{} {} in ~{} {} ({} sampled)", with_commas(bytes),
                     bytes == 1 ? "byte" : "bytes", with_commas(blocks),
                     blocks == 1 ? "block" : "blocks", with_commas(sampled_blocks));
}

std::string hex(uint64_t value) {
  return fmt::format("{:#x}", value);
}

std::string_view path_basename(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == path.size()) return path;
  return path.substr(slash + 1);
}

bool is_system_runtime_module(std::string_view module_path) {
  std::string_view base = path_basename(module_path);
  for (std::string_view prefix :
       {"libc.so", "ld-linux", "libstdc++.so", "libgcc_s.so", "libm.so"}) {
    if (base.starts_with(prefix)) return true;
  }
  return false;
}

bool is_main_function(std::string_view function) {
  return function == "main" || function.starts_with("main.");
}

bool is_start_up_function(std::string_view function) {
  return function == "__libc_start_call_main" || function == "__libc_start_main" ||
         function == "__libc_start_main_impl" || function.starts_with("__libc_start_main@") ||
         function == "_start";
}

size_t printed_frame_count(const std::vector<Frame>& stack) {
  for (size_t i = 0; i < stack.size(); ++i) {
    if (is_main_function(stack[i].function)) return i + 1;
    // main without a name (a stripped program): the C library's start-up code calls it.
    if (i > 0 && is_start_up_function(stack[i].function)) return i;
  }
  return stack.size();
}

std::string format_command(const std::vector<std::string>& argv, size_t max_chars) {
  if (argv.empty()) return "?";
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(arg);
    if (out.size() > max_chars) break;  // the rest would be cut anyway
  }
  if (out.size() <= max_chars) return out;
  constexpr std::string_view kEllipsis = "...";
  size_t keep = max_chars > kEllipsis.size() ? max_chars - kEllipsis.size() : 0;
  // Back up over UTF-8 continuation bytes (10xxxxxx) so no character is split.
  while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xc0) == 0x80) --keep;
  out.resize(keep);
  out += kEllipsis;
  return out;
}

std::string signal_name(int signal) {
  if (const char* name = core::signal_name(signal); name != nullptr) return name;
  // SIGRTMIN is a function call in glibc (it reserves the first real-time signals).
  if (signal >= SIGRTMIN && signal <= SIGRTMAX) {
    return signal == SIGRTMIN ? "SIGRTMIN" : fmt::format("SIGRTMIN+{}", signal - SIGRTMIN);
  }
  return "";
}

std::string exit_phrase(const ExitInfo& exit) {
  switch (exit.how) {
    case ExitInfo::How::kExit:
      return fmt::format("exited with status {}", exit.code);
    case ExitInfo::How::kUnderscoreExit:
      return fmt::format("called _exit({})", exit.code);
    case ExitInfo::How::kSignal: {
      std::string name = signal_name(exit.signal);
      if (name.empty()) return fmt::format("was killed by signal {}", exit.signal);
      return fmt::format("was killed by signal {} ({})", exit.signal, name);
    }
    case ExitInfo::How::kUnknown:
      break;
    case ExitInfo::How::kRunning:
      return "is running";
  }
  return "exit status unknown";
}

std::string resource_flags(const ResourceFacts& resource) {
  if (resource.stream) return resource.mode;
  core::FixedText<512> text;
  core::format_open_flags(resource.flags, text);
  return text.data();
}

std::string resource_line(const ResourceFacts& resource) {
  std::string how = resource.stream ? "\"" + resource.mode + "\"" : resource_flags(resource);
  return fmt::format("{} {}, {}({})", core::resource_kind_name(resource.kind), resource.description,
                     resource.call, how);
}

}  // namespace memtrack::report
