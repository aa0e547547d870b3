// Small text helpers shared by the renderers, suppressions and the CLI: grouped numbers,
// shell-quoted command lines, exit descriptions, basenames, error descriptions. Pure
// functions; they allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

// 1234567 -> "1,234,567".
std::string with_commas(uint64_t n);

// "1 block", "2 blocks", "1,024 bytes": the count with commas and the matching noun.
std::string count_of(uint64_t n, std::string_view singular, std::string_view plural);
// `value` rounded to its 3 leading digits: an estimate's precision (the sampled mode's "~").
uint64_t three_digits(uint64_t value);
// The sampled mode's estimate of a site: "~4,310,000 bytes in ~830 blocks (12 sampled)",
// each estimate to 3 significant digits.
std::string estimate_phrase(uint64_t estimated_bytes, uint64_t estimated_blocks,
                            uint64_t sampled_blocks);

// "0x1a2b": lowercase hex with a 0x prefix, no padding.
std::string hex(uint64_t value);

// The part after the last '/': "/lib/x86_64-linux-gnu/libc.so.6" -> "libc.so.6". A path
// without '/' is returned whole; a path ending in '/' is returned whole too (never "").
std::string_view path_basename(std::string_view path);

// True for the modules of the C/C++ runtime itself (libc.so*, ld-linux*, libstdc++.so*,
// libgcc_s.so*, libm.so*), judged by basename.
bool is_system_runtime_module(std::string_view module_path);

// True for "main" and the parts gcc splits off it ("main.cold"): frames below it are the C
// start-up code, which the text report cuts as valgrind does.
bool is_main_function(std::string_view function);

// True for the C library's start-up functions that call main (__libc_start_call_main,
// __libc_start_main and its versions, _start).
bool is_start_up_function(std::string_view function);

// How many of the stack's frames the reports print: frame #0 down to and including the first
// main frame (is_main_function), or down to the frame above the first start-up function
// (is_start_up_function: main has no name in a stripped program), or all of them when there
// is neither (a thread's stack). The one rule for the text and live reports and for what
// suppressions match.
size_t printed_frame_count(const std::vector<Frame>& stack);

// argv joined by spaces for one line of text. Arguments that a shell would split or
// interpret are single-quoted ('it'\''s'); arguments with control characters use bash
// $'...' quoting so the result never spans lines. Longer than max_chars: cut to max_chars
// bytes in total, ending in "..." (never inside a UTF-8 sequence). Empty argv: "?".
std::string format_command(const std::vector<std::string>& argv, size_t max_chars = 200);

// "SIGSEGV" for 11 on Linux, "SIGRTMIN+3" for real-time signals, "" if not a signal.
std::string signal_name(int signal);

// "exited with status 0", "called _exit(3)", "was killed by signal 11 (SIGSEGV)",
// "exit status unknown".
std::string exit_phrase(const ExitInfo& exit);

// One line saying what an allocator misuse error is, without its count (the text report's
// title and the JSON "description"):
//   Double free of 0x4a5b040 (100 bytes)
//   Invalid free of 0x4a5b050, 16 bytes inside a block of 100 bytes     (where = heap)
//   Invalid free of 0x7ffc1000: it points to the stack
//   Invalid free of 0x4c000: it points to global data (not heap memory)
//   Invalid free of 0x1234: not memory that malloc or new returned      (where = unknown)
//   Mismatched free: a block from new[] released with delete
//   realloc of freed pointer 0x4a5b040 (100 bytes)
// Calls are named malloc, new, new[], aligned new, aligned new[] and free, delete, delete[],
// aligned delete, aligned delete[], realloc. A "(N bytes)" or "inside a block" part that
// needs a block is left out when the record has none (block_start 0).
//   Invalid write at 0x7f0000001000: 0 bytes after a block of 10 bytes
//   Invalid read at 0x7f0000003004: 4 bytes inside a block of 40 bytes, freed
//   Bytes beside a block overwritten: 0x7f000000500a is 2 bytes after a block of 8 bytes,
//   found when the block was freed
std::string error_description(const ErrorReport& error);
// "0 bytes after a block of 10 bytes": an error's address against its block (block_start
// not 0), as memcheck relates them.
std::string block_relation(const ErrorFacts& error);

// How a descriptor was opened, as the JSON "flags" field says it: a stream's fopen mode
// ("w+"), otherwise its open(2) flags ("O_WRONLY|O_CREAT|O_TRUNC", core/fd_names.h).
std::string resource_flags(const ResourceFacts& resource);

// One descriptor as the text report lists it, without its "fd N: ": the kind, what it
// refers to and the call that opened it with its flags or mode:
//   file /tmp/a.log, open(O_WRONLY|O_CREAT|O_APPEND)
//   file /tmp/out.txt, fopen("w")
//   socket TCP 127.0.0.1:8080 -> 127.0.0.1:40000, accept4(O_RDWR|O_CLOEXEC)
std::string resource_line(const ResourceFacts& resource);

}  // namespace memtrack::report
