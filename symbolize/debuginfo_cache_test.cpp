// Where the debug file cache lives (debuginfo_cache.h); its use is tested with the symbolizer
// (symbolizer_test.cpp, DebuginfoCacheTest).
#include "symbolize/debuginfo_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace memtrack::symbolize {
namespace {

// Sets (or, with nullopt, unsets) the three variables for one test, and puts them back.
class CacheEnvironment {
 public:
  CacheEnvironment(std::optional<std::string> memtrack, std::optional<std::string> xdg,
                   std::optional<std::string> home) {
    save_and_set("MEMTRACK_CACHE_DIR", memtrack, 0);
    save_and_set("XDG_CACHE_HOME", xdg, 1);
    save_and_set("HOME", home, 2);
  }
  ~CacheEnvironment() {
    const char* names[] = {"MEMTRACK_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
    for (int i = 0; i < 3; ++i) apply(names[i], saved_[i]);
  }
  CacheEnvironment(const CacheEnvironment&) = delete;
  CacheEnvironment& operator=(const CacheEnvironment&) = delete;

 private:
  static void apply(const char* name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  void save_and_set(const char* name, const std::optional<std::string>& value, int slot) {
    if (const char* old = std::getenv(name)) saved_[slot] = old;
    apply(name, value);
  }
  std::optional<std::string> saved_[3];
};

TEST(DebuginfoCacheConfigTest, MemtracksVariableFirstThenXdgThenHome) {
  {
    CacheEnvironment env("/srv/cache", "/xdg", "/home/u");
    EXPECT_EQ(debuginfo_cache_from_environment().dir, "/srv/cache/debuginfo");
  }
  {
    CacheEnvironment env(std::nullopt, "/xdg", "/home/u");
    EXPECT_EQ(debuginfo_cache_from_environment().dir, "/xdg/memtrack/debuginfo");
  }
  {
    CacheEnvironment env(std::nullopt, std::nullopt, "/home/u");
    EXPECT_EQ(debuginfo_cache_from_environment().dir, "/home/u/.cache/memtrack/debuginfo");
  }
  {
    // The XDG specification ignores a relative path; so does memtrack.
    CacheEnvironment env(std::nullopt, "relative", "/home/u");
    EXPECT_EQ(debuginfo_cache_from_environment().dir, "/home/u/.cache/memtrack/debuginfo");
  }
}

TEST(DebuginfoCacheConfigTest, AnEmptyVariableOrNoHomeMeansNoCache) {
  {
    CacheEnvironment env("", "/xdg", "/home/u");
    EXPECT_EQ(debuginfo_cache_from_environment().dir, "");
  }
  {
    CacheEnvironment env(std::nullopt, std::nullopt, std::nullopt);
    EXPECT_EQ(debuginfo_cache_from_environment().dir, "");
  }
}

}  // namespace
}  // namespace memtrack::symbolize
