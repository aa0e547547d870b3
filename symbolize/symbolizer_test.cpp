// Symbolizer tests against real code: libsymfix.so (testdata/, built -O2 -g at build time) is
// dlopen'ed, its hook records return addresses inside known lines, and the module map is made
// the way the runtime makes it. Line:column pairs below are those marked LINE_* in testdata/.
#include "symbolize/symbolizer.h"

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "symbolize/debuginfo_cache.h"
#include "symbolize/testdata/fixture.h"
#include "symbolize/testing_modules.h"

namespace memtrack::symbolize {
namespace {

uintptr_t g_return_address = 0;

// The fixture's hook: remembers where in the library it was called from.
extern "C" __attribute__((noinline)) int record_return_address(int n) {
  g_return_address = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  return n;
}

std::string basename_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

struct Expected {
  const char* function;
  const char* file;  // basename
  int line;
  int column;
  bool inlined;
};

void expect_frames(const std::vector<Frame>& frames, const std::vector<Expected>& expected) {
  ASSERT_EQ(frames.size(), expected.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i));
    EXPECT_EQ(frames[i].function, expected[i].function);
    EXPECT_EQ(basename_of(frames[i].file), expected[i].file);
    EXPECT_EQ(frames[i].line, expected[i].line);
    EXPECT_EQ(frames[i].column, expected[i].column);
    EXPECT_EQ(frames[i].inlined, expected[i].inlined);
  }
}

// fixture_inner (inlined) <- fixture_middle (inlined) <- fixture_outer, fixture_lib.c.
const std::vector<Expected> kOuterChain = {
    {"fixture_inner", "fixture_lib.c", 13, 10, true},   // LINE_INNER_CALL: the hook call
    {"fixture_middle", "fixture_lib.c", 17, 10, true},  // LINE_MIDDLE_CALL: inner's call site
    {"fixture_outer", "fixture_lib.c", 21, 10, false},  // LINE_OUTER_CALL: middle's call site
};

class SymbolizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(SYMFIX_LIB, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    auto set_hook = reinterpret_cast<void (*)(fixture_hook)>(dlsym(handle_, "fixture_set_hook"));
    ASSERT_NE(set_hook, nullptr);
    set_hook(record_return_address);
    ret_outer_ = call("fixture_outer");
    ret_include_ = call("fixture_from_include");
    ret_widget_ = call("fixture_widget_make");
    std::optional<LoadedModule> loaded = test_only_find_loaded_at(SYMFIX_LIB);
    ASSERT_TRUE(loaded.has_value());
    lib_ = new RawModule(loaded->module);
    text_start_ = loaded->text_start;
    text_end_ = loaded->text_end;
  }
  void SetUp() override { ASSERT_NE(lib_, nullptr) << "the fixture library did not load"; }
  static void TearDownTestSuite() {
    delete lib_;
    lib_ = nullptr;
  }

  // Calls an exported entry point and returns the hook's return address inside the library.
  static uint64_t call(const char* entry) {
    auto fn = reinterpret_cast<int (*)(int)>(dlsym(handle_, entry));
    EXPECT_NE(fn, nullptr) << entry;
    if (fn == nullptr) return 0;
    g_return_address = 0;
    fn(1);
    return g_return_address;
  }

  // The library's mapping, but naming another file (a copy, or nothing at all).
  static RawModule lib_as(const std::string& path) {
    RawModule module = *lib_;
    module.path = path;
    module.build_id.clear();
    return module;
  }

  static void* handle_;
  static RawModule* lib_;
  static uint64_t ret_outer_;
  static uint64_t ret_include_;
  static uint64_t ret_widget_;
  static uint64_t text_start_;
  static uint64_t text_end_;
};

void* SymbolizerTest::handle_ = nullptr;
RawModule* SymbolizerTest::lib_ = nullptr;
uint64_t SymbolizerTest::ret_outer_ = 0;
uint64_t SymbolizerTest::ret_include_ = 0;
uint64_t SymbolizerTest::ret_widget_ = 0;
uint64_t SymbolizerTest::text_start_ = 0;
uint64_t SymbolizerTest::text_end_ = 0;

TEST_F(SymbolizerTest, InlinedCallsAreFramesOfTheirOwnInnermostFirst) {
  Symbolizer symbolizer({*lib_});
  const std::vector<Frame>& frames = symbolizer.symbolize(ret_outer_, true);
  expect_frames(frames, kOuterChain);
  for (const Frame& frame : frames) {
    EXPECT_EQ(frame.address, ret_outer_);  // the address asked for, not address - 1
    EXPECT_EQ(frame.module, lib_->path);
    EXPECT_EQ(frame.module_offset, ret_outer_ - lib_->load_bias);
    EXPECT_EQ(
        frame.file,
        (std::filesystem::path(MEMTRACK_SOURCE_DIR) / "symbolize/testdata/fixture_lib.c").string());
  }
  EXPECT_TRUE(symbolizer.notes().empty());
}

// Data addresses name the variable's definition: a C global, a C++ static member defined out
// of its class, a function's static local; an address inside a variable or in code names none.
TEST_F(SymbolizerTest, VariablesAreLocatedAtTheirDefinition) {
  Symbolizer symbolizer({*lib_});
  auto address_of = [](const char* name) {
    return reinterpret_cast<uint64_t>(dlsym(handle_, name));
  };
  auto returned_by = [](const char* name) {
    auto fn = reinterpret_cast<void* (*)()>(dlsym(handle_, name));
    return fn != nullptr ? reinterpret_cast<uint64_t>(fn()) : uint64_t{0};
  };
  auto expect_at = [&](uint64_t address, const char* file, int line) {
    ASSERT_NE(address, 0u);
    VariableLocation where = symbolizer.variable_location(address);
    EXPECT_EQ(std::filesystem::path(where.file).filename(), file) << std::hex << address;
    EXPECT_EQ(where.line, line) << std::hex << address;
  };
  expect_at(address_of("fixture_g_hook"), "fixture_lib.c", 6);
  expect_at(returned_by("fixture_registry"), "fixture_widget.cpp", 32);  // LINE_REGISTRY
  expect_at(returned_by("fixture_counter"), "fixture_widget.cpp", 40);   // LINE_COUNTER
  EXPECT_EQ(symbolizer.variable_location(returned_by("fixture_registry") + 8).file, "");
  EXPECT_EQ(symbolizer.variable_location(ret_outer_).file, "");
  EXPECT_EQ(symbolizer.variable_location(0x10).file, "");  // in no module
  // Asked again (from the index now), the same answer.
  expect_at(address_of("fixture_g_hook"), "fixture_lib.c", 6);
}

TEST_F(SymbolizerTest, ReturnAddressIsLookedUpInsideTheCall) {
  Symbolizer symbolizer({*lib_});
  const std::vector<Frame>& as_return = symbolizer.symbolize(ret_outer_, true);
  const std::vector<Frame>& before = symbolizer.symbolize(ret_outer_ - 1, false);
  const std::vector<Frame>& as_pc = symbolizer.symbolize(ret_outer_, false);
  ASSERT_EQ(as_return.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(as_return[i].function, before[i].function);
    EXPECT_EQ(as_return[i].line, before[i].line);
    EXPECT_EQ(as_return[i].column, before[i].column);
    EXPECT_EQ(before[i].address, ret_outer_ - 1);
  }
  // The same address as a pc is a separate cache entry.
  EXPECT_NE(&as_pc, &as_return);
  ASSERT_FALSE(as_pc.empty());
  EXPECT_EQ(as_pc[0].address, ret_outer_);
}

TEST_F(SymbolizerTest, LinesFromAnIncludedFileNameThatFile) {
  Symbolizer symbolizer({*lib_});
  expect_frames(
      symbolizer.symbolize(ret_include_, true),
      {{"fixture_from_include", "fixture_included.inc", 4, 10, false}});  // LINE_INCLUDED_CALL
}

TEST_F(SymbolizerTest, CxxNamesAreDemangledWithNamespacesAndParameters) {
  Symbolizer symbolizer({*lib_});
  // C++ call columns point at the '(' of the call.
  expect_frames(
      symbolizer.symbolize(ret_widget_, true),
      {{"long demo::scaled<long>(long)", "fixture_widget.cpp", 13, 39, true},  // LINE_SCALED_CALL
       {"demo::Widget::make(int)", "fixture_widget.cpp", 17, 22, false}});     // LINE_WIDGET_CALL
}

TEST_F(SymbolizerTest, SeparateDebugInfoIsFoundThroughDebuglink) {
  Symbolizer symbolizer({lib_as(SYMFIX_DEBUGLINK)});
  expect_frames(symbolizer.symbolize(ret_outer_, true), kOuterChain);
  EXPECT_TRUE(symbolizer.notes().empty());
}

TEST_F(SymbolizerTest, WithoutDebugInfoNamesComeFromTheDynamicSymbolTable) {
  Symbolizer symbolizer({lib_as(SYMFIX_STRIPPED)});
  expect_frames(symbolizer.symbolize(ret_outer_, true), {{"fixture_outer", "", 0, 0, false}});
  expect_frames(symbolizer.symbolize(ret_widget_, true),
                {{"demo::Widget::make(int)", "", 0, 0, false}});
  EXPECT_EQ(symbolizer.symbolize(ret_outer_, true)[0].module, SYMFIX_STRIPPED);
  EXPECT_EQ(symbolizer.notes(), std::vector<std::string>{"no debug info for " SYMFIX_STRIPPED
                                                         ": its frames show function names only"});
}

TEST_F(SymbolizerTest, DebuginfodIsNeverAsked) {
  // With a server configured, libdebuginfod would create its cache directory before asking.
  std::string cache = ::testing::TempDir() + "memtrack_debuginfod_" + std::to_string(getpid());
  std::filesystem::remove_all(cache);
  setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
  setenv("DEBUGINFOD_CACHE_PATH", cache.c_str(), 1);
  {
    Symbolizer symbolizer({lib_as(SYMFIX_STRIPPED)});
    expect_frames(symbolizer.symbolize(ret_outer_, true), {{"fixture_outer", "", 0, 0, false}});
  }
  unsetenv("DEBUGINFOD_URLS");
  unsetenv("DEBUGINFOD_CACHE_PATH");
  EXPECT_FALSE(std::filesystem::exists(cache));
}

// The debug file cache (debuginfo_cache.h): copies of the library whose .gnu_debuglink file
// has its sections compressed, each in a directory of its own (the process keeps every module
// file it opened, by path, so each case needs a path not seen before), so that a test can
// also take the debug file away.
class DebuginfoCacheTest : public SymbolizerTest {
 protected:
  void SetUp() override {
    SymbolizerTest::SetUp();
    dir_ = ::testing::TempDir() + "memtrack_debuginfo_cache_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    cache_ = dir_ + "/cache/debuginfo";
    set_debuginfo_cache({cache_, 1});
  }
  void TearDown() override {
    set_debuginfo_cache(debuginfo_cache_from_environment());
    std::filesystem::remove_all(dir_);
  }

  // A new copy of the library, with `debug_file` (or none: "") beside it under its debuglink
  // name.
  std::string library_with(const std::string& debug_file) {
    static int copies = 0;  // over all tests: every path is new to the process
    std::string lib_dir = dir_ + "/lib" + std::to_string(++copies);
    std::filesystem::create_directories(lib_dir);
    std::string library = lib_dir + "/libsymfix_debuglink.so";
    std::filesystem::copy_file(SYMFIX_DEBUGLINK, library);
    if (!debug_file.empty()) std::filesystem::copy_file(debug_file, library + ".debug");
    return library;
  }
  std::string library_with_compressed_debug() {
    return library_with(SYMFIX_DEBUGLINK ".debug.compressed");
  }

  // The cache's file names: one per debug file copied.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (!std::filesystem::exists(cache_)) return names;
    for (const auto& entry : std::filesystem::directory_iterator(cache_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  std::string entry_path() const {
    std::string name;
    for (uint8_t byte : lib_->build_id) {
      name += "0123456789abcdef"[byte >> 4];
      name += "0123456789abcdef"[byte & 15];
    }
    return cache_ + "/" + name + ".debug";
  }
  std::vector<std::string> just_the_entry() const {
    return {std::filesystem::path(entry_path()).filename().string()};
  }

  static void expect_lines_of(const std::string& library) {
    Symbolizer symbolizer({lib_as(library)});
    expect_frames(symbolizer.symbolize(ret_outer_, true), kOuterChain);
    EXPECT_TRUE(symbolizer.notes().empty());
  }

  static std::string contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string dir_;
  std::string cache_;
};

TEST_F(DebuginfoCacheTest, CompressedDebugInfoIsInflatedOnceAndReadFromTheCacheAfter) {
  ASSERT_FALSE(lib_->build_id.empty());
  expect_lines_of(library_with_compressed_debug());
  ASSERT_EQ(entries(), just_the_entry());
  // The copy: that build-id, every section inflated and inside the file.
  std::string path;
  int fd =
      open_cached_debuginfo(lib_->build_id.data(), static_cast<int>(lib_->build_id.size()), &path);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(path, entry_path());
  EXPECT_GT(std::filesystem::file_size(path),
            std::filesystem::file_size(SYMFIX_DEBUGLINK ".debug.compressed"));
  // Without a debug file beside the library, the lines can only come from the cache.
  expect_lines_of(library_with(""));
  EXPECT_EQ(entries(), just_the_entry());
}

TEST_F(DebuginfoCacheTest, ABrokenEntryIsNotUsedAndIsReplaced) {
  expect_lines_of(library_with_compressed_debug());
  const std::string inflated = contents(entry_path());
  ASSERT_FALSE(inflated.empty());
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"garbage", "not an ELF file"},
      {"another build-id", contents(SYMFIX_EXE)},
      {"truncated", inflated.substr(0, inflated.size() / 2)},
      {"still compressed", contents(SYMFIX_DEBUGLINK ".debug.compressed")},
  };
  for (const auto& [what, content] : broken) {
    SCOPED_TRACE(what);
    std::ofstream(entry_path(), std::ios::binary | std::ios::trunc) << content;
    expect_lines_of(library_with_compressed_debug());
    EXPECT_EQ(contents(entry_path()), inflated);  // written again
    EXPECT_EQ(entries(), just_the_entry());
  }
}

TEST_F(DebuginfoCacheTest, NothingIsCopiedWithoutCompressionOrBelowTheSize) {
  expect_lines_of(library_with(SYMFIX_DEBUGLINK ".debug"));
  EXPECT_TRUE(entries().empty());
  set_debuginfo_cache({cache_, uint64_t{1} << 40});
  expect_lines_of(library_with_compressed_debug());
  EXPECT_TRUE(entries().empty());
}

TEST_F(DebuginfoCacheTest, WithoutAUsableDirectoryTheFileIsReadAsItIs) {
  set_debuginfo_cache({"", 1});
  expect_lines_of(library_with_compressed_debug());
  EXPECT_TRUE(entries().empty());
  // Under a regular file: no directory can be made there.
  const std::string under_a_file = std::string(SYMFIX_NOT_ELF) + "/cache";
  set_debuginfo_cache({under_a_file, 1});
  expect_lines_of(library_with_compressed_debug());
  EXPECT_FALSE(std::filesystem::exists(under_a_file));
}

// Sets the file's modification time `age_seconds` into the past.
void plant_age(const std::string& path, int64_t age_seconds) {
  std::filesystem::last_write_time(
      path, std::filesystem::file_time_type::clock::now() - std::chrono::seconds(age_seconds));
}

// A file of `bytes` bytes, last modified `age_seconds` ago.
void plant(const std::string& path, size_t bytes, int64_t age_seconds) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << std::string(bytes, 'x');
  plant_age(path, age_seconds);
}

int64_t age_of(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(time(nullptr) - st.st_mtime);
}

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(DebuginfoCacheTest, WritingAnEntrySweepsKilledWritersAndTheLeastRecentlyUsed) {
  expect_lines_of(library_with_compressed_debug());
  const uint64_t entry_bytes = std::filesystem::file_size(entry_path());
  std::filesystem::remove(entry_path());
  constexpr int64_t kDay = 24 * 3600;
  plant(cache_ + "/aaaa.debug", 1000, 10 * kDay);    // used longest ago: goes
  plant(cache_ + "/bbbb.debug", 1000, kDay);         // stays within the limit
  plant(cache_ + "/cccc.debug.Ab3xYz", 5000, 7200);  // a killed writer's: goes
  plant(cache_ + "/dddd.debug.Qr7sTu", 5000, 10);    // a writer still at work: stays
  plant(cache_ + "/notes.txt", 100000, 10 * kDay);   // not the cache's: stays
  DebuginfoCacheConfig config{cache_, 1};
  config.max_bytes = entry_bytes + 1500;
  set_debuginfo_cache(config);
  expect_lines_of(library_with_compressed_debug());
  EXPECT_EQ(sorted(entries()),
            sorted({just_the_entry()[0], "bbbb.debug", "dddd.debug.Qr7sTu", "notes.txt"}));
}

TEST_F(DebuginfoCacheTest, TheEntryJustWrittenStaysThoughAloneItIsOverTheLimit) {
  std::filesystem::create_directories(cache_);
  plant(cache_ + "/aaaa.debug", 1000, 60);
  DebuginfoCacheConfig config{cache_, 1};
  config.max_bytes = 1;
  set_debuginfo_cache(config);
  expect_lines_of(library_with_compressed_debug());
  EXPECT_EQ(entries(), just_the_entry());
  expect_lines_of(library_with(""));  // and it is used
}

TEST_F(DebuginfoCacheTest, UsingAnEntryMarksItRecentlyUsedAtMostDaily) {
  expect_lines_of(library_with_compressed_debug());
  const int build_id_len = static_cast<int>(lib_->build_id.size());
  std::string path;
  for (const auto& [age, refreshed] :
       {std::pair<int64_t, bool>{3 * 24 * 3600, true}, std::pair<int64_t, bool>{3600, false}}) {
    plant_age(entry_path(), age);
    int fd = open_cached_debuginfo(lib_->build_id.data(), build_id_len, &path);
    ASSERT_GE(fd, 0);
    close(fd);
    if (refreshed) {
      EXPECT_LT(age_of(entry_path()), 60);
    } else {
      EXPECT_GE(age_of(entry_path()), age - 60);
    }
  }
}

TEST(SymbolizerSystemTest, DebianDetachedDebugInfoIsFoundByBuildId) {
  std::optional<LoadedModule> libc =
      test_only_find_loaded([](const std::string& path) { return path.ends_with("/libc.so.6"); });
  ASSERT_TRUE(libc.has_value());
  ASSERT_FALSE(libc->module.build_id.empty());
  std::string hex;
  for (uint8_t byte : libc->module.build_id) {
    hex += "0123456789abcdef"[byte >> 4];
    hex += "0123456789abcdef"[byte & 15];
  }
  std::string debug_file =
      "/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
  if (!std::filesystem::exists(debug_file)) GTEST_SKIP() << "libc6-dbg is not installed";

  void* handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto getpid_address = reinterpret_cast<uint64_t>(dlsym(handle, "getpid"));
  dlclose(handle);
  Symbolizer symbolizer({libc->module});
  const std::vector<Frame>& frames = symbolizer.symbolize(getpid_address, false);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames.back().function.find("getpid"), std::string::npos) << frames.back().function;
  EXPECT_NE(frames.back().file, "");
  EXPECT_GT(frames.back().line, 0);
  EXPECT_TRUE(symbolizer.notes().empty());
}

// glibc's debug info names strdup by its internal alias __GI___strdup (a local symbol, and
// the DW_AT_linkage_name of the function); the frame must carry the name programs call and
// valgrind prints, which suppression files use. Without libc6-dbg the exported names
// strdup and __strdup share the address: strdup is preferred there too.
TEST(SymbolizerSystemTest, LibcAliasesAreNamedAsProgramsCallThem) {
  std::optional<LoadedModule> libc =
      test_only_find_loaded([](const std::string& path) { return path.ends_with("/libc.so.6"); });
  ASSERT_TRUE(libc.has_value());
  void* handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto strdup_address = reinterpret_cast<uint64_t>(dlsym(handle, "strdup"));
  auto strndup_address = reinterpret_cast<uint64_t>(dlsym(handle, "strndup"));
  dlclose(handle);
  Symbolizer symbolizer({libc->module});
  for (auto [address, name] : {std::pair{strdup_address, "strdup"}, {strndup_address, "strndup"}}) {
    const std::vector<Frame>& frames = symbolizer.symbolize(address, false);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back().function, name);
  }
}

TEST_F(SymbolizerTest, MissingFileGivesModulePlusOffsetAndANote) {
  const std::string path = "/nonexistent/dir/libgone.so";
  Symbolizer symbolizer({lib_as(path)});
  const std::vector<Frame>& frames = symbolizer.symbolize(ret_outer_, true);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].address, ret_outer_);
  EXPECT_EQ(frames[0].module, path);
  EXPECT_EQ(frames[0].module_offset, ret_outer_ - lib_->load_bias);
  EXPECT_EQ(frames[0].function, "");
  EXPECT_EQ(frames[0].file, "");
  EXPECT_EQ(frames[0].line, 0);
  symbolizer.symbolize(ret_widget_, true);
  EXPECT_EQ(symbolizer.notes(),
            std::vector<std::string>{"cannot open " + path +
                                     ": No such file or directory; its frames show "
                                     "module+offset only"});
}

TEST_F(SymbolizerTest, NotesAboutFilesComeWithConstruction) {
  Symbolizer symbolizer({lib_as("/nonexistent/libgone.so"), *lib_});
  EXPECT_EQ(symbolizer.notes().size(), 1u);  // before any symbolize()
}

TEST_F(SymbolizerTest, TheVdsoHasNoFileAndNoNote) {
  Symbolizer symbolizer({lib_as("linux-vdso.so.1")});
  const std::vector<Frame>& frames = symbolizer.symbolize(ret_outer_, true);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].module, "linux-vdso.so.1");
  EXPECT_EQ(frames[0].module_offset, ret_outer_ - lib_->load_bias);
  EXPECT_TRUE(symbolizer.notes().empty());
}

TEST_F(SymbolizerTest, AddressInNoModuleIsUnknown) {
  Symbolizer symbolizer({*lib_});
  for (uint64_t address : {uint64_t{0x10}, lib_->end, lib_->start - 1, ~uint64_t{0}}) {
    const std::vector<Frame>& frames = symbolizer.symbolize(address, true);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].address, address);
    EXPECT_EQ(frames[0].module, "");
    EXPECT_EQ(frames[0].module_offset, 0u);
    EXPECT_EQ(frames[0].function, "");
  }
  EXPECT_TRUE(symbolizer.notes().empty());
}

TEST_F(SymbolizerTest, GarbageModuleFilesGiveNotesNotCrashes) {
  std::string dir = ::testing::TempDir() + "memtrack_symbolize_garbage_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string empty = dir + "/empty.so";
  std::ofstream(empty).close();
  std::string fifo = dir + "/fifo.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);  // opening it for reading would block

  const std::vector<std::pair<std::string, std::string>> cases = {
      {SYMFIX_NOT_ELF, "cannot open " SYMFIX_NOT_ELF ": "},
      {empty, "cannot open " + empty + ": "},
      {fifo, "cannot open " + fifo + ": not a regular file"},
      {dir, "cannot open " + dir + ": not a regular file"},
      {"", "cannot open : No such file or directory"},
  };
  for (const auto& [path, note_prefix] : cases) {
    SCOPED_TRACE(path);
    Symbolizer symbolizer({lib_as(path)});
    const std::vector<Frame>& frames = symbolizer.symbolize(ret_outer_, true);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].module, path);
    EXPECT_EQ(frames[0].function, "");
    ASSERT_EQ(symbolizer.notes().size(), 1u);
    EXPECT_EQ(symbolizer.notes()[0].rfind(note_prefix, 0), 0u) << symbolizer.notes()[0];
  }
  std::filesystem::remove_all(dir);
}

// [offset, offset + size) of every .debug_* section of an ELF64 image (the fixture's own).
std::vector<std::pair<size_t, size_t>> debug_sections(const std::string& image) {
  std::vector<std::pair<size_t, size_t>> sections;
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, image.data(), sizeof ehdr);
  std::vector<Elf64_Shdr> shdrs(ehdr.e_shnum);
  std::memcpy(shdrs.data(), image.data() + ehdr.e_shoff, ehdr.e_shnum * sizeof(Elf64_Shdr));
  const char* names = image.data() + shdrs.at(ehdr.e_shstrndx).sh_offset;
  for (const Elf64_Shdr& shdr : shdrs) {
    if (shdr.sh_size > 0 && std::strncmp(names + shdr.sh_name, ".debug_", 7) == 0) {
      sections.emplace_back(shdr.sh_offset, shdr.sh_size);
    }
  }
  return sections;
}

TEST_F(SymbolizerTest, CorruptedDebugInfoDegradesWithoutCrashing) {
  std::ifstream in(SYMFIX_LIB, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::pair<size_t, size_t>> sections = debug_sections(image);
  ASSERT_GE(sections.size(), 4u);
  const std::string path = ::testing::TempDir() + "libsymfix_corrupt_" + std::to_string(getpid());

  uint64_t state = 0x9e3779b97f4a7c15;  // xorshift64: the same corruptions on every run
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 200; ++round) {
    std::string corrupt = image;
    if (round % 8 == 7) {
      corrupt.resize(next() % image.size());  // truncated mid-file
    } else {
      for (int flip = 0; flip <= round % 8; ++flip) {  // a few bytes: most of the DWARF survives
        const auto& [offset, size] = sections[next() % sections.size()];
        corrupt[offset + next() % size] ^= static_cast<char>(1 + next() % 255);
      }
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << corrupt;
    Symbolizer symbolizer({lib_as(path)});
    for (uint64_t address = text_start_; address < text_end_; ++address) {
      EXPECT_FALSE(symbolizer.symbolize(address, round % 2 == 0).empty());
    }
  }
  std::filesystem::remove(path);
}

TEST_F(SymbolizerTest, ChangedBuildIdIsNotedAndStillSymbolized) {
  ASSERT_FALSE(lib_->build_id.empty());
  Symbolizer same({*lib_});
  expect_frames(same.symbolize(ret_outer_, true), kOuterChain);
  EXPECT_TRUE(same.notes().empty());

  RawModule changed = *lib_;
  changed.build_id = {0xde, 0xad, 0xbe, 0xef};
  Symbolizer symbolizer({changed});
  expect_frames(symbolizer.symbolize(ret_outer_, true), kOuterChain);
  symbolizer.symbolize(ret_widget_, true);
  EXPECT_EQ(symbolizer.notes(),
            std::vector<std::string>{lib_->path +
                                     " changed since the run (build-id differs); frames may be "
                                     "wrong"});
}

TEST_F(SymbolizerTest, LoadedModulesWinOverUnloadedOnesAtTheSameAddress) {
  RawModule gone = lib_as("/nonexistent/unloaded.so");
  gone.unloaded = true;
  Symbolizer both({gone, *lib_});
  EXPECT_EQ(both.symbolize(ret_outer_, true)[0].module, lib_->path);

  Symbolizer only_unloaded({gone});
  EXPECT_EQ(only_unloaded.symbolize(ret_outer_, true)[0].module, gone.path);
}

TEST_F(SymbolizerTest, OneFileMappedTwiceAtDifferentBiases) {
  // A library dlclose'd and loaded again elsewhere: both mappings symbolize alike.
  constexpr uint64_t kShift = uint64_t{1} << 40;
  RawModule first = *lib_;
  first.unloaded = true;
  RawModule again = *lib_;
  again.load_bias += kShift;
  again.start += kShift;
  again.end += kShift;
  Symbolizer symbolizer({first, again});
  expect_frames(symbolizer.symbolize(ret_outer_, true), kOuterChain);
  const std::vector<Frame>& moved = symbolizer.symbolize(ret_outer_ + kShift, true);
  expect_frames(moved, kOuterChain);
  EXPECT_EQ(moved[0].module_offset, ret_outer_ - lib_->load_bias);
}

TEST_F(SymbolizerTest, EachAddressIsSymbolizedOnceAndStaysPut) {
  Symbolizer symbolizer({*lib_});
  const std::vector<Frame>& first = symbolizer.symbolize(ret_outer_, true);
  // Enough other addresses to rehash the cache several times.
  for (uint64_t address = lib_->start; address < lib_->start + 4096; ++address) {
    symbolizer.symbolize(address, true);
  }
  const std::vector<Frame>& second = symbolizer.symbolize(ret_outer_, true);
  EXPECT_EQ(&first, &second);
  expect_frames(first, kOuterChain);
}

TEST_F(SymbolizerTest, MainExecutableIsSymbolizedToo) {
  std::optional<LoadedModule> exe = test_only_find_loaded_at("/proc/self/exe");
  ASSERT_TRUE(exe.has_value());
  const int call_line = (record_return_address(0), __LINE__);  // the call's line
  Symbolizer symbolizer({exe->module});
  const std::vector<Frame>& frames = symbolizer.symbolize(g_return_address, true);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames.back().function.find("MainExecutableIsSymbolizedToo"), std::string::npos)
      << frames.back().function;
  EXPECT_EQ(basename_of(frames.back().file), "symbolizer_test.cpp");
  EXPECT_EQ(frames.back().line, call_line);
}

TEST(SymbolizerExecTest, NonPieExecutableHasBiasZero) {
  FILE* pipe = popen(SYMFIX_EXE_COMMAND, "r");
  ASSERT_NE(pipe, nullptr);
  unsigned long long function = 0, start = 0, end = 0;
  int fields = fscanf(pipe, "%llx %llx %llx", &function, &start, &end);
  pclose(pipe);
  ASSERT_EQ(fields, 3);
  RawModule exe;
  exe.path = SYMFIX_EXE;
  exe.start = start;
  exe.end = end;
  Symbolizer symbolizer({exe});
  const std::vector<Frame>& frames = symbolizer.symbolize(function, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "fixture_exe_function");
  EXPECT_EQ(basename_of(frames[0].file), "fixture_exe.c");
#if defined(__aarch64__)
  // aarch64 gcc 12 gives the body's one instruction (at the entry) the closing brace's line
  // in its last line-table row there, as binutils' addr2line reports too.
  EXPECT_EQ(frames[0].line, 10);
#else
  EXPECT_EQ(frames[0].line, 9);  // LINE_EXE_FN
#endif
  EXPECT_EQ(frames[0].module_offset, function);
}

TEST(DemangleTest, OnlyItaniumNamesAreDemangled) {
  EXPECT_EQ(demangle("_ZN4demo6Widget4makeEi"), "demo::Widget::make(int)");
  EXPECT_EQ(demangle("_ZN4demo6Widget4makeEi.cold"), "demo::Widget::make(int) [clone .cold]");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("fixture_outer"), "fixture_outer");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Zgarbage(("), "_Zgarbage((");
  EXPECT_EQ(demangle("Z3foov"), "Z3foov");
  // Deep nesting must not blow the stack (the demangler bounds its recursion).
  std::string deep = "_Z1f" + std::string(100000, 'P') + "v";
  EXPECT_EQ(demangle(deep), deep);
}

}  // namespace
}  // namespace memtrack::symbolize
