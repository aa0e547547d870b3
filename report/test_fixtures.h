// Test-only: a fixed report shared by the text and JSON golden tests, and frame builders.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/model.h"

namespace memtrack::report::testing {

inline Frame debug_frame(uint64_t address, std::string function, std::string file, int line,
                         int column, bool inlined = false) {
  Frame f;
  f.address = address;
  f.module = "/work/build/leaky";
  f.module_offset = address - 0x555555554000;
  f.function = std::move(function);
  f.file = std::move(file);
  f.line = line;
  f.column = column;
  f.inlined = inlined;
  return f;
}

inline Frame symbol_frame(uint64_t address, std::string module, uint64_t offset,
                          std::string function) {
  Frame f;
  f.address = address;
  f.module = std::move(module);
  f.module_offset = offset;
  f.function = std::move(function);
  return f;
}

// A leak group of `kind` with `bytes` in `blocks` allocated at `stack`.
inline LeakGroup group(LeakKind kind, uint64_t bytes, uint64_t blocks, std::vector<Frame> stack) {
  LeakGroup g;
  g.kind = kind;
  g.bytes = bytes;
  g.blocks = blocks;
  g.stack = std::move(stack);
  return g;
}

inline constexpr const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";

// Allocator misuse errors: a double free seen twice (all three stacks, frames below main),
// a free of a stack address (no block, no allocation stack) and an aligned new released
// with delete (allocation stack only).
inline std::vector<ErrorReport> sample_errors() {
  ErrorReport twice;
  twice.kind = ErrorKind::kDoubleFree;
  twice.alloc_call = AllocCall::kMalloc;
  twice.free_call = FreeCall::kFree;
  twice.occurrences = 2;
  twice.address = 0x4a5b040;
  twice.block_start = 0x4a5b040;
  twice.block_size = 100;
  twice.stack = {
      debug_frame(0x5555555551c4, "free_twice", "examples/misuse.c", 12, 3),
      debug_frame(0x555555555240, "main", "examples/misuse.c", 30, 3),
      symbol_frame(0x7ffff7dd21ca, kLibc, 0x271ca, "__libc_start_call_main"),
  };
  twice.free_stack = {
      debug_frame(0x5555555551a6, "free_once", "examples/misuse.c", 8, 3),
      debug_frame(0x555555555238, "main", "examples/misuse.c", 29, 3),
  };
  twice.alloc_stack = {
      debug_frame(0x555555555187, "make_block", "examples/misuse.c", 4, 13),
      debug_frame(0x555555555230, "main", "examples/misuse.c", 28, 20),
  };
  ErrorReport on_stack;
  on_stack.kind = ErrorKind::kInvalidFree;
  on_stack.where = ErrorWhere::kStack;
  on_stack.alloc_call = AllocCall::kNone;
  on_stack.free_call = FreeCall::kFree;
  on_stack.occurrences = 1;
  on_stack.address = 0x7fffffffe0c0;
  on_stack.stack = {debug_frame(0x5555555551e0, "free_pointer", "examples/misuse.c", 16, 3)};
  ErrorReport aligned;
  aligned.kind = ErrorKind::kMismatchedFree;
  aligned.alloc_call = AllocCall::kNew;
  aligned.alloc_aligned = true;
  aligned.free_call = FreeCall::kDelete;
  aligned.occurrences = 1;
  aligned.address = 0x4a5c0c0;
  aligned.block_start = 0x4a5c0c0;
  aligned.block_size = 128;
  aligned.stack = {debug_frame(0x555555555300, "release(Big*)", "examples/misuse.cpp", 22, 3)};
  aligned.alloc_stack = {debug_frame(0x5555555552c0, "make_big()", "examples/misuse.cpp", 17, 10)};
  return {twice, on_stack, aligned};
}

// Classified groups of every kind: a definitely lost 4,096-byte block with 96 bytes hanging
// off it (the indirectly lost group), a possibly lost group, a still reachable one (hidden by
// default), a suppressed group, one runtime-internal block, untracked allocations, a
// symbolizer note and the misuse errors of sample_errors(): every line of the text report
// appears.
inline ProcessReport sample_process() {
  ProcessReport p;
  p.pid = 1234;
  p.ppid = 1200;
  p.command = {"./prog", "arg1"};
  p.exit.how = ExitInfo::How::kExit;
  p.exit.code = 0;
  Summary& s = p.summary;
  s.allocations = 15;
  s.frees = 6;
  s.bytes_allocated = 8816;
  s.peak_bytes = 6240;
  s.of_kind(LeakKind::kDefinite).bytes = 4096;
  s.of_kind(LeakKind::kDefinite).blocks = 1;
  s.of_kind(LeakKind::kIndirect).bytes = 96;
  s.of_kind(LeakKind::kIndirect).blocks = 2;
  s.of_kind(LeakKind::kPossible).bytes = 144;
  s.of_kind(LeakKind::kPossible).blocks = 3;
  s.of_kind(LeakKind::kReachable).bytes = 1024;
  s.of_kind(LeakKind::kReachable).blocks = 1;
  s.suppressed.bytes = 100;
  s.suppressed.blocks = 1;
  s.runtime_internal.bytes = 288;
  s.runtime_internal.blocks = 1;
  s.untracked_allocations = 5;
  s.untracked_bytes = 400;
  s.errors = 3;
  s.error_occurrences = 4;

  LeakGroup config;
  config.kind = LeakKind::kDefinite;
  config.bytes = 4096;
  config.blocks = 1;
  config.indirect_bytes = 96;
  config.indirect_blocks = 2;
  config.stack = {
      debug_frame(0x5555555552fb, "read_config", "examples/leaky.c", 37, 45),
      debug_frame(0x555555555093, "inline_helper", "examples/leaky.c", 30, 3, true),
      debug_frame(0x555555555093, "main", "examples/leaky.c", 55, 18),
      symbol_frame(0x7ffff7dd21ca, kLibc, 0x271ca, "__libc_start_call_main"),
      symbol_frame(0x555555555105, "/work/build/leaky", 0x1105, "_start"),
  };
  LeakGroup cache;
  cache.kind = LeakKind::kReachable;
  cache.bytes = 1024;
  cache.blocks = 1;
  cache.stack = {debug_frame(0x555555555321, "init_cache", "examples/leaky.c", 62, 11)};
  LeakGroup sessions;
  sessions.kind = LeakKind::kPossible;
  sessions.bytes = 144;
  sessions.blocks = 3;
  sessions.stack = {
      debug_frame(0x55555555524e, "open_session(int, char const*)", "examples/leaky.c", 21, 0),
      debug_frame(0x5555555552a5, "accept_clients", "examples/leaky.c", 44, 5),
  };
  LeakGroup worker;
  worker.kind = LeakKind::kIndirect;
  worker.bytes = 96;
  worker.blocks = 2;
  worker.stack = {
      symbol_frame(0x5555555551ce, "/work/build/leaky", 0x11ce, "worker"),
      symbol_frame(0x7ffff7e3d1f5, kLibc, 0x891f5, ""),
      symbol_frame(0x7ffff7ebd8ec, "", 0, ""),
  };
  p.leaks = {config, cache, sessions, worker};

  LeakGroup vendor;
  vendor.kind = LeakKind::kDefinite;
  vendor.bytes = 100;
  vendor.blocks = 1;
  vendor.stack = {
      symbol_frame(0x7ffff7f1a0e0, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 0xa90e0,
                   "operator new(unsigned long)"),
      symbol_frame(0x7ffff7fb0010, "/usr/lib/libvendor.so.1", 0x1010, "vendor_init"),
  };
  p.suppressed = {vendor};
  p.errors = sample_errors();
  p.notes = {
      "no debug info for /lib/x86_64-linux-gnu/libc.so.6: its frames show function "
      "names only"};
  return p;
}

// Descriptors left open: a log file opened with open() and its FILE twin from fopen() at one
// site, an accepted socket at another.
inline std::vector<ResourceSite> sample_resource_sites() {
  ResourceFacts log;
  log.fd = 3;
  log.kind = ResourceKind::kFile;
  log.call = "open";
  log.flags = 02101;  // O_WRONLY|O_CREAT|O_APPEND
  log.description = "/var/log/app.log";
  ResourceFacts err = log;
  err.fd = 4;
  err.call = "fopen";
  err.stream = true;
  err.mode = "a";
  err.description = "/var/log/app.err";
  ResourceFacts client;
  client.fd = 7;
  client.kind = ResourceKind::kSocket;
  client.call = "accept4";
  client.flags = 02000002;  // O_RDWR|O_CLOEXEC
  client.description = "TCP 127.0.0.1:8080 -> 127.0.0.1:40000";
  ResourceSite logs;
  logs.stack = {
      debug_frame(0x555555555400, "open_logs", "examples/server.c", 70, 15),
      debug_frame(0x555555555460, "main", "examples/server.c", 90, 3),
      symbol_frame(0x7ffff7dd21ca, kLibc, 0x271ca, "__libc_start_call_main"),
  };
  logs.resources = {log, err};
  ResourceSite clients;
  clients.stack = {debug_frame(0x555555555500, "serve", "examples/server.c", 44, 20)};
  clients.resources = {client};
  return {logs, clients};
}

// `p` with sample_resource_sites(), one more descriptor suppressed and two untracked.
inline ProcessReport with_resources(ProcessReport p) {
  p.tracks_resources = true;
  p.resource_sites = sample_resource_sites();
  p.summary.open_descriptors = 3;
  p.summary.suppressed_descriptors = 1;
  p.summary.untracked_descriptors = 2;
  return p;
}

inline Report sample_report() {
  Report r;
  r.processes.push_back(sample_process());
  return r;
}

}  // namespace memtrack::report::testing
