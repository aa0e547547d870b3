// Tests for the small text helpers: grouped numbers, command quoting and cutting, signal
// names, exit phrases, basenames, error descriptions.
#include "report/text_format.h"

#include <csignal>

#include <gtest/gtest.h>

namespace memtrack::report {
namespace {

TEST(TextFormat, WithCommas) {
  EXPECT_EQ(with_commas(0), "0");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(1000), "1,000");
  EXPECT_EQ(with_commas(8816), "8,816");
  EXPECT_EQ(with_commas(123456), "123,456");
  EXPECT_EQ(with_commas(1234567), "1,234,567");
  EXPECT_EQ(with_commas(UINT64_MAX), "18,446,744,073,709,551,615");
}

TEST(TextFormat, CountOf) {
  EXPECT_EQ(count_of(0, "block", "blocks"), "0 blocks");
  EXPECT_EQ(count_of(1, "block", "blocks"), "1 block");
  EXPECT_EQ(count_of(2, "block", "blocks"), "2 blocks");
  EXPECT_EQ(count_of(4096, "byte", "bytes"), "4,096 bytes");
}

TEST(TextFormat, Hex) {
  EXPECT_EQ(hex(0), "0x0");
  EXPECT_EQ(hex(0x7ffaebae11f5), "0x7ffaebae11f5");
  EXPECT_EQ(hex(UINT64_MAX), "0xffffffffffffffff");
}

TEST(TextFormat, PathBasename) {
  EXPECT_EQ(path_basename("/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
  EXPECT_EQ(path_basename("leaky"), "leaky");
  EXPECT_EQ(path_basename("./leaky"), "leaky");
  EXPECT_EQ(path_basename(""), "");
  EXPECT_EQ(path_basename("/dir/"), "/dir/");
}

TEST(TextFormat, SystemRuntimeModules) {
  EXPECT_TRUE(is_system_runtime_module("/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(is_system_runtime_module("/lib64/ld-linux-x86-64.so.2"));
  EXPECT_TRUE(is_system_runtime_module("/usr/lib/x86_64-linux-gnu/libstdc++.so.6"));
  EXPECT_TRUE(is_system_runtime_module("/lib/x86_64-linux-gnu/libgcc_s.so.1"));
  EXPECT_TRUE(is_system_runtime_module("/lib/x86_64-linux-gnu/libm.so.6"));
  EXPECT_FALSE(is_system_runtime_module("/usr/lib/libcurl.so.4"));
  EXPECT_FALSE(is_system_runtime_module("/usr/lib/libmagic.so.1"));
  EXPECT_FALSE(is_system_runtime_module(""));
}

TEST(TextFormat, IsMainFunction) {
  EXPECT_TRUE(is_main_function("main"));
  EXPECT_TRUE(is_main_function("main.cold"));
  EXPECT_FALSE(is_main_function("main_loop"));
  EXPECT_FALSE(is_main_function("domain"));
  EXPECT_FALSE(is_main_function(""));
}

TEST(TextFormat, PrintedFramesEndAtMainOrAboveTheStartUpCode) {
  auto stack = [](std::vector<std::string> functions) {
    std::vector<Frame> frames;
    for (std::string& f : functions) {
      Frame frame;
      frame.function = std::move(f);
      frames.push_back(frame);
    }
    return frames;
  };
  EXPECT_EQ(printed_frame_count(stack({"f", "main", "__libc_start_call_main", "_start"})), 2u);
  // A stripped program: main is "", the frames from the C library's start-up code on go.
  EXPECT_EQ(
      printed_frame_count(stack({"", "", "__libc_start_call_main", "__libc_start_main_impl", ""})),
      2u);
  EXPECT_EQ(printed_frame_count(stack({"", "", "__libc_start_main", "_start"})), 2u);
  EXPECT_EQ(printed_frame_count(stack({"start_thread", "clone3"})), 2u);  // a thread's stack
  EXPECT_EQ(printed_frame_count(stack({"_start"})), 1u);  // frame #0 stays, whatever it is
}

TEST(TextFormat, CommandQuoting) {
  EXPECT_EQ(format_command({"./prog", "arg1"}), "./prog arg1");
  EXPECT_EQ(format_command({"./prog", "two words", "it's", "say \"hi\"", ""}),
            "./prog 'two words' 'it'\\''s' 'say \"hi\"' ''");
  EXPECT_EQ(format_command({"a=b,c:d@e%f+g_h-i/j.k"}), "a=b,c:d@e%f+g_h-i/j.k");
  EXPECT_EQ(format_command({"$HOME", "a;b", "*"}), "'$HOME' 'a;b' '*'");
  EXPECT_EQ(format_command({"caf\xc3\xa9"}), "caf\xc3\xa9");
  EXPECT_EQ(format_command({"line\none", "tab\there", "q'\\", "\x01"}),
            "$'line\\none' $'tab\\there' 'q'\\''\\' $'\\x01'");
  EXPECT_EQ(format_command({"a\nb'c\\"}), "$'a\\nb\\'c\\\\'");
  EXPECT_EQ(format_command({}), "?");
}

TEST(TextFormat, CommandCutAt200) {
  std::string exact(200, 'x');
  EXPECT_EQ(format_command({exact}), exact);
  std::string cut = format_command({std::string(150, 'a'), std::string(150, 'b')});
  EXPECT_EQ(cut.size(), 200u);
  EXPECT_EQ(cut, std::string(150, 'a') + " " + std::string(46, 'b') + "...");
  EXPECT_EQ(format_command({"abcdef"}, 5), "ab...");
  // Never inside a UTF-8 sequence: "é" is 2 bytes at offsets 196-197 here.
  std::string utf8 = std::string(196, 'a') + "\xc3\xa9" + std::string(10, 'b');
  EXPECT_EQ(format_command({utf8}), std::string(196, 'a') + "...");
}

TEST(TextFormat, SignalNames) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGABRT), "SIGABRT");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGRTMIN), "SIGRTMIN");
  EXPECT_EQ(signal_name(SIGRTMIN + 3), "SIGRTMIN+3");
  EXPECT_EQ(signal_name(0), "");
  EXPECT_EQ(signal_name(1000), "");
  EXPECT_EQ(signal_name(-1), "");
}

TEST(TextFormat, ExitPhrase) {
  ExitInfo e;
  EXPECT_EQ(exit_phrase(e), "exit status unknown");
  e.how = ExitInfo::How::kExit;
  e.code = 0;
  EXPECT_EQ(exit_phrase(e), "exited with status 0");
  e.code = 42;
  EXPECT_EQ(exit_phrase(e), "exited with status 42");
  e.how = ExitInfo::How::kUnderscoreExit;
  e.code = 3;
  EXPECT_EQ(exit_phrase(e), "called _exit(3)");
  e.how = ExitInfo::How::kSignal;
  e.signal = 11;
  EXPECT_EQ(exit_phrase(e), "was killed by signal 11 (SIGSEGV)");
  e.signal = 250;
  EXPECT_EQ(exit_phrase(e), "was killed by signal 250");
}

ErrorReport misuse(ErrorKind kind, uint64_t address, uint64_t block_start, uint64_t size) {
  ErrorReport e;
  e.kind = kind;
  e.address = address;
  e.block_start = block_start;
  e.block_size = size;
  return e;
}

TEST(TextFormat, ErrorDescriptionOfEachKind) {
  EXPECT_EQ(error_description(misuse(ErrorKind::kDoubleFree, 0x4a5b040, 0x4a5b040, 100)),
            "Double free of 0x4a5b040 (100 bytes)");
  EXPECT_EQ(error_description(misuse(ErrorKind::kDoubleFree, 0x10, 0x10, 1)),
            "Double free of 0x10 (1 byte)");
  EXPECT_EQ(error_description(misuse(ErrorKind::kDoubleFree, 0x10, 0, 0)), "Double free of 0x10");
  EXPECT_EQ(error_description(misuse(ErrorKind::kReallocAfterFree, 0x20, 0x20, 4096)),
            "realloc of freed pointer 0x20 (4,096 bytes)");
  EXPECT_EQ(error_description(misuse(ErrorKind::kReallocAfterFree, 0x20, 0, 0)),
            "realloc of freed pointer 0x20");
  // A block of 0 bytes (malloc(0)) is still a block.
  EXPECT_EQ(error_description(misuse(ErrorKind::kDoubleFree, 0x30, 0x30, 0)),
            "Double free of 0x30 (0 bytes)");
}

TEST(TextFormat, ErrorDescriptionOfInvalidFrees) {
  ErrorReport e = misuse(ErrorKind::kInvalidFree, 0x4a5b050, 0x4a5b040, 100);
  e.where = ErrorWhere::kHeap;
  EXPECT_EQ(error_description(e),
            "Invalid free of 0x4a5b050, 16 bytes inside a block of 100 bytes");
  e.address = 0x4a5b041;
  e.block_size = 1;
  EXPECT_EQ(error_description(e), "Invalid free of 0x4a5b041, 1 byte inside a block of 1 byte");
  // Inside the heap, but no block known (or one after the address): the generic phrase.
  e.address = 0x4a5b000;
  EXPECT_EQ(error_description(e),
            "Invalid free of 0x4a5b000: not memory that malloc or new returned");
  e.block_start = 0;
  EXPECT_EQ(error_description(e),
            "Invalid free of 0x4a5b000: not memory that malloc or new returned");
  e = misuse(ErrorKind::kInvalidFree, 0x7ffc9a10, 0, 0);
  e.where = ErrorWhere::kStack;
  EXPECT_EQ(error_description(e), "Invalid free of 0x7ffc9a10: it points to the stack");
  e.where = ErrorWhere::kGlobal;
  EXPECT_EQ(error_description(e),
            "Invalid free of 0x7ffc9a10: it points to global data (not heap memory)");
  e.where = ErrorWhere::kUnknown;
  EXPECT_EQ(error_description(e),
            "Invalid free of 0x7ffc9a10: not memory that malloc or new returned");
}

TEST(TextFormat, ErrorDescriptionOfMismatchedFrees) {
  auto mismatch = [](AllocCall alloc, bool alloc_aligned, FreeCall free, bool free_aligned) {
    ErrorReport e = misuse(ErrorKind::kMismatchedFree, 0x40, 0x40, 8);
    e.alloc_call = alloc;
    e.alloc_aligned = alloc_aligned;
    e.free_call = free;
    e.free_aligned = free_aligned;
    return error_description(e);
  };
  EXPECT_EQ(mismatch(AllocCall::kNewArray, false, FreeCall::kDelete, false),
            "Mismatched free: a block from new[] released with delete");
  EXPECT_EQ(mismatch(AllocCall::kNew, false, FreeCall::kDeleteArray, false),
            "Mismatched free: a block from new released with delete[]");
  EXPECT_EQ(mismatch(AllocCall::kMalloc, false, FreeCall::kDelete, false),
            "Mismatched free: a block from malloc released with delete");
  EXPECT_EQ(mismatch(AllocCall::kNew, false, FreeCall::kFree, false),
            "Mismatched free: a block from new released with free");
  EXPECT_EQ(mismatch(AllocCall::kNew, false, FreeCall::kRealloc, false),
            "Mismatched free: a block from new released with realloc");
  EXPECT_EQ(mismatch(AllocCall::kNew, true, FreeCall::kDelete, false),
            "Mismatched free: a block from aligned new released with delete");
  EXPECT_EQ(mismatch(AllocCall::kNew, false, FreeCall::kDelete, true),
            "Mismatched free: a block from new released with aligned delete");
  EXPECT_EQ(mismatch(AllocCall::kNewArray, true, FreeCall::kDeleteArray, false),
            "Mismatched free: a block from aligned new[] released with delete[]");
  EXPECT_EQ(mismatch(AllocCall::kNewArray, false, FreeCall::kDeleteArray, true),
            "Mismatched free: a block from new[] released with aligned delete[]");
  // The aligned flags only qualify new and delete.
  EXPECT_EQ(mismatch(AllocCall::kMalloc, true, FreeCall::kFree, true),
            "Mismatched free: a block from malloc released with free");
  EXPECT_EQ(mismatch(AllocCall::kNone, false, FreeCall::kDelete, false),
            "Mismatched free: a block from an unknown allocator released with delete");
}

}  // namespace
}  // namespace memtrack::report
