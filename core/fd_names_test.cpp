// Unit tests for the names of the resources section: open(2) flags, fopen modes, kinds and
// calls. Test-only code.
#include "core/fd_names.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>

namespace memtrack::core {
namespace {

std::string flags_text(uint32_t flags) {
  FixedText<256> out;
  format_open_flags(flags, out);
  return out.data();
}

// The stored values are x86-64's; from_native maps this machine's (ARM numbers four flags
// differently), so the tests pass the native flags through it as the runtime does.
TEST(FdNames, FlagValuesAreTheKernels) {
  EXPECT_EQ(open_flags::kWriteOnly, open_flags::from_native(O_WRONLY));
  EXPECT_EQ(open_flags::kReadWrite, open_flags::from_native(O_RDWR));
  EXPECT_EQ(open_flags::kCreate, open_flags::from_native(O_CREAT));
  EXPECT_EQ(open_flags::kExclusive, open_flags::from_native(O_EXCL));
  EXPECT_EQ(open_flags::kTruncate, open_flags::from_native(O_TRUNC));
  EXPECT_EQ(open_flags::kAppend, open_flags::from_native(O_APPEND));
  EXPECT_EQ(open_flags::kNonBlock, open_flags::from_native(O_NONBLOCK));
  EXPECT_EQ(open_flags::kDirectory, open_flags::from_native(O_DIRECTORY));
  EXPECT_EQ(open_flags::kCloseOnExec, open_flags::from_native(O_CLOEXEC));
  EXPECT_EQ(open_flags::kSync, open_flags::from_native(O_SYNC));
  EXPECT_EQ(open_flags::kPath, open_flags::from_native(O_PATH));
  EXPECT_EQ(open_flags::kTmpFile, open_flags::from_native(O_TMPFILE));
}

TEST(FdNames, FlagsText) {
  EXPECT_EQ(flags_text(open_flags::from_native(O_RDONLY)), "O_RDONLY");
  EXPECT_EQ(flags_text(open_flags::from_native(O_WRONLY | O_CREAT | O_TRUNC)),
            "O_WRONLY|O_CREAT|O_TRUNC");
  EXPECT_EQ(flags_text(open_flags::from_native(O_RDWR | O_CLOEXEC | O_NONBLOCK)),
            "O_RDWR|O_NONBLOCK|O_CLOEXEC");
  EXPECT_EQ(flags_text(open_flags::from_native(O_RDONLY | O_DIRECTORY | O_NOFOLLOW)),
            "O_RDONLY|O_DIRECTORY|O_NOFOLLOW");
  EXPECT_EQ(flags_text(open_flags::from_native(O_WRONLY | O_APPEND | O_SYNC)),
            "O_WRONLY|O_APPEND|O_SYNC");
  EXPECT_EQ(flags_text(open_flags::from_native(O_WRONLY | O_DSYNC)), "O_WRONLY|O_DSYNC");
  EXPECT_EQ(flags_text(open_flags::from_native(O_RDWR | O_TMPFILE)), "O_RDWR|O_TMPFILE");
  EXPECT_EQ(flags_text(open_flags::from_native(O_RDONLY | O_DIRECTORY)), "O_RDONLY|O_DIRECTORY");
  EXPECT_EQ(flags_text(open_flags::from_native(O_PATH | O_CLOEXEC)), "O_RDONLY|O_CLOEXEC|O_PATH");
  EXPECT_EQ(flags_text(3), "O_ACCMODE");
  EXPECT_EQ(flags_text(open_flags::from_native(O_WRONLY | 040000000u | 0x80000000u)),
            "O_WRONLY|020040000000");
}

TEST(FdNames, ModeFlagsAsGlibcOpens) {
  EXPECT_EQ(open_flags_of_mode("r"), static_cast<uint32_t>(O_RDONLY));
  EXPECT_EQ(open_flags_of_mode("rb"), static_cast<uint32_t>(O_RDONLY));
  EXPECT_EQ(open_flags_of_mode("r+"), static_cast<uint32_t>(O_RDWR));
  EXPECT_EQ(open_flags_of_mode("w"), static_cast<uint32_t>(O_WRONLY | O_CREAT | O_TRUNC));
  EXPECT_EQ(open_flags_of_mode("w+bx"), static_cast<uint32_t>(O_RDWR | O_CREAT | O_TRUNC | O_EXCL));
  EXPECT_EQ(open_flags_of_mode("ae"),
            static_cast<uint32_t>(O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC));
  EXPECT_EQ(open_flags_of_mode("a+,ccs=UTF-8"), static_cast<uint32_t>(O_RDWR | O_CREAT | O_APPEND));
  EXPECT_EQ(open_flags_of_mode("r,e"), static_cast<uint32_t>(O_RDONLY));  // 'e' after ','
  EXPECT_EQ(open_flags_of_mode("q"), static_cast<uint32_t>(O_RDONLY));
  EXPECT_EQ(open_flags_of_mode(""), static_cast<uint32_t>(O_RDONLY));
  EXPECT_EQ(open_flags_of_mode(nullptr), static_cast<uint32_t>(O_RDONLY));
}

TEST(FdNames, StreamModeCopy) {
  char out[result::kMaxStreamModeSize + 1];
  EXPECT_EQ(copy_stream_mode("w+", out, sizeof(out)), 2u);
  EXPECT_STREQ(out, "w+");
  EXPECT_EQ(copy_stream_mode("r,ccs=UTF-8", out, sizeof(out)), 1u);
  EXPECT_STREQ(out, "r");
  EXPECT_EQ(copy_stream_mode("rb+ecmx", out, sizeof(out)), 6u);  // cut to what fits
  EXPECT_STREQ(out, "rb+ecm");
  EXPECT_EQ(copy_stream_mode("r\"\\\n b", out, sizeof(out)), 2u);  // never breaks quoting
  EXPECT_STREQ(out, "rb");
  EXPECT_EQ(copy_stream_mode(nullptr, out, sizeof(out)), 0u);
  EXPECT_STREQ(out, "");
  EXPECT_EQ(copy_stream_mode("w", out, 0), 0u);
}

TEST(FdNames, KindsAndCalls) {
  EXPECT_STREQ(resource_kind_name(result::ResourceKind::kFile), "file");
  EXPECT_STREQ(resource_kind_name(result::ResourceKind::kEpoll), "epoll");
  EXPECT_STREQ(resource_kind_name(result::ResourceKind::kMemfd), "memfd");
  EXPECT_STREQ(resource_kind_name(static_cast<result::ResourceKind>(200)), "other");
  EXPECT_STREQ(resource_call_name(result::ResourceCall::kOpen), "open");
  EXPECT_STREQ(resource_call_name(result::ResourceCall::kTimerfdCreate), "timerfd_create");
  EXPECT_STREQ(resource_call_name(result::ResourceCall::kFreopen), "freopen");
  EXPECT_EQ(resource_call_name(static_cast<result::ResourceCall>(0)), nullptr);
  EXPECT_EQ(resource_call_name(static_cast<result::ResourceCall>(25)), nullptr);
  for (int call = 1; call <= static_cast<int>(result::ResourceCall::kLast); ++call) {
    EXPECT_NE(resource_call_name(static_cast<result::ResourceCall>(call)), nullptr) << call;
  }
}

}  // namespace
}  // namespace memtrack::core
