// Unit tests for TextBuffer formatting, FdWriter buffering, parse_int64 and string helpers.
// Test-only code: may allocate and use libc freely.
#include "core/text_buffer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace memtrack::core {
namespace {

TEST(TextBufferTest, StartsEmptyAndTerminated) {
  FixedText<16> text;
  EXPECT_EQ(text.size(), 0u);
  EXPECT_STREQ(text.data(), "");
  EXPECT_FALSE(text.truncated());
}

TEST(TextBufferTest, StrAndChr) {
  FixedText<64> text;
  text.str("leak").chr(':').chr(' ').str("abcdef", 3).str(nullptr);
  EXPECT_STREQ(text.data(), "leak: abc(null)");
  EXPECT_EQ(text.size(), 15u);
  EXPECT_FALSE(text.truncated());
}

TEST(TextBufferTest, Unsigned) {
  FixedText<64> text;
  text.u64(0).chr(' ').u64(7).chr(' ').u64(1234567890).chr(' ').u64(UINT64_MAX);
  EXPECT_STREQ(text.data(), "0 7 1234567890 18446744073709551615");
}

TEST(TextBufferTest, Signed) {
  FixedText<64> text;
  text.i64(0).chr(' ').i64(-1).chr(' ').i64(42).chr(' ').i64(INT64_MIN).chr(' ').i64(INT64_MAX);
  EXPECT_STREQ(text.data(), "0 -1 42 -9223372036854775808 9223372036854775807");
}

TEST(TextBufferTest, Grouped) {
  const struct {
    uint64_t value;
    const char* expected;
  } kCases[] = {
      {0, "0"},
      {7, "7"},
      {999, "999"},
      {1000, "1,000"},
      {65536, "65,536"},
      {100000, "100,000"},
      {1234567, "1,234,567"},
      {UINT64_MAX, "18,446,744,073,709,551,615"},
  };
  for (const auto& c : kCases) {
    FixedText<64> text;
    text.grouped(c.value);
    EXPECT_STREQ(text.data(), c.expected);
  }
}

TEST(TextBufferTest, Hex) {
  const struct {
    uint64_t value;
    int min_digits;
    const char* expected;
  } kCases[] = {
      {0, 1, "0x0"},
      {0x1a, 4, "0x001a"},
      {0x1a, 1, "0x1a"},
      {0x12345, 2, "0x12345"},
      {0xdeadbeef, 0, "0xdeadbeef"},
      {1, 20, "0x0000000000000001"},  // never more than 16 digits
      {UINT64_MAX, 1, "0xffffffffffffffff"},
  };
  for (const auto& c : kCases) {
    FixedText<64> text;
    text.hex(c.value, c.min_digits);
    EXPECT_STREQ(text.data(), c.expected);
  }
  FixedText<16> text;
  text.hex(0xabc);
  EXPECT_STREQ(text.data(), "0xabc");
}

TEST(TextBufferTest, Plural) {
  FixedText<64> text;
  text.u64(0).chr(' ').plural(0, "block").str(", ");
  text.u64(1).chr(' ').plural(1, "block").str(", ");
  text.u64(2).chr(' ').plural(2, "byte");
  EXPECT_STREQ(text.data(), "0 blocks, 1 block, 2 bytes");
}

TEST(TextBufferTest, TruncationKeepsTerminator) {
  FixedText<8> text;
  text.str("abcdefghij");
  EXPECT_TRUE(text.truncated());
  EXPECT_EQ(text.size(), 7u);
  EXPECT_STREQ(text.data(), "abcdefg");
  EXPECT_EQ(text.data()[7], '\0');
  text.chr('z');  // a full buffer drops more text and stays flagged
  EXPECT_STREQ(text.data(), "abcdefg");
  EXPECT_TRUE(text.truncated());
}

TEST(TextBufferTest, ExactFitIsNotTruncated) {
  FixedText<8> text;
  text.str("1234567");
  EXPECT_FALSE(text.truncated());
  EXPECT_STREQ(text.data(), "1234567");
}

TEST(TextBufferTest, NumbersAreCutAtTheEnd) {
  FixedText<4> text;
  text.grouped(1234567);
  EXPECT_STREQ(text.data(), "1,2");
  EXPECT_TRUE(text.truncated());
}

TEST(TextBufferTest, ClearResetsEverything) {
  FixedText<4> text;
  text.str("overflow");
  ASSERT_TRUE(text.truncated());
  text.clear();
  EXPECT_EQ(text.size(), 0u);
  EXPECT_STREQ(text.data(), "");
  EXPECT_FALSE(text.truncated());
  text.u64(12);
  EXPECT_STREQ(text.data(), "12");
}

TEST(TextBufferTest, ExternalStorage) {
  char storage[6] = {'x', 'x', 'x', 'x', 'x', 'x'};
  TextBuffer text(storage, sizeof(storage));
  EXPECT_EQ(storage[0], '\0');
  text.str("hello world");
  EXPECT_STREQ(storage, "hello");
  EXPECT_TRUE(text.truncated());

  TextBuffer empty(nullptr, 0);  // a zero-capacity buffer only records truncation
  empty.chr('a');
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_TRUE(empty.truncated());
}

TEST(ParseInt64Test, AcceptsDecimal) {
  const struct {
    const char* text;
    int64_t value;
  } kCases[] = {
      {"0", 0},
      {"-0", 0},
      {"+7", 7},
      {"42", 42},
      {"-42", -42},
      {"007", 7},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775807", -INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
  };
  for (const auto& c : kCases) {
    int64_t out = 99;
    EXPECT_TRUE(parse_int64(c.text, string_length(c.text), &out)) << c.text;
    EXPECT_EQ(out, c.value) << c.text;
  }
}

TEST(ParseInt64Test, RejectsJunkAndOverflow) {
  const char* const kCases[] = {
      "",
      "-",
      "+",
      "12a",
      "a12",
      " 1",
      "1 ",
      "1.5",
      "0x10",
      "--1",
      "9223372036854775808",
      "-9223372036854775809",
      "18446744073709551616",
      "99999999999999999999999",
  };
  for (const char* text : kCases) {
    int64_t out = 99;
    EXPECT_FALSE(parse_int64(text, string_length(text), &out)) << '"' << text << '"';
    EXPECT_EQ(out, 99) << '"' << text << '"';
  }
}

TEST(ParseInt64Test, UsesOnlyTheGivenLength) {
  int64_t out = 0;
  EXPECT_TRUE(parse_int64("123junk", 3, &out));
  EXPECT_EQ(out, 123);
  EXPECT_FALSE(parse_int64("123", 0, &out));
  EXPECT_EQ(out, 123);
}

TEST(StringHelpersTest, LengthEqualAndCopy) {
  EXPECT_EQ(string_length(""), 0u);
  EXPECT_EQ(string_length("memtrack"), 8u);
  EXPECT_TRUE(strings_equal("help=1", 4, "help"));
  EXPECT_FALSE(strings_equal("help=1", 3, "help"));  // shorter than b
  EXPECT_FALSE(strings_equal("helper", 6, "help"));  // longer than b
  EXPECT_FALSE(strings_equal("hexp", 4, "help"));
  EXPECT_TRUE(strings_equal("", 0, ""));
  char dst[6] = "-----";
  copy_bytes(dst, "abc", 3);
  EXPECT_STREQ(dst, "abc--");
  copy_bytes(dst, "zzz", 0);
  EXPECT_STREQ(dst, "abc--");
}

// A pipe whose ends close at scope exit; the read end is non-blocking so tests can ask how
// much has been written so far.
class Pipe {
 public:
  Pipe() {
    EXPECT_EQ(pipe(fds_), 0);
    fcntl(fds_[0], F_SETFL, O_NONBLOCK);
  }
  ~Pipe() {
    close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  int write_fd() const { return fds_[1]; }
  int pending() const {
    int n = -1;
    ioctl(fds_[0], FIONREAD, &n);
    return n;
  }
  std::string read_available() const {
    std::string text;
    char chunk[4096];
    for (ssize_t n; (n = read(fds_[0], chunk, sizeof(chunk))) > 0;) text.append(chunk, n);
    return text;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(FdWriterTest, BuffersUntilFlush) {
  Pipe pipe;
  FdWriter out(pipe.write_fd());
  FixedText<32> text;
  text.str("1,234 bytes");
  out.write(text);
  out.write("\n", 1);
  EXPECT_EQ(pipe.pending(), 0);
  out.flush();
  EXPECT_EQ(pipe.read_available(), "1,234 bytes\n");
  out.flush();  // nothing left: writes nothing
  EXPECT_EQ(pipe.pending(), 0);
  EXPECT_FALSE(out.failed());
}

TEST(FdWriterTest, WritesWholeBufferWhenItOverflows) {
  Pipe pipe;
  std::string expected;
  {
    FdWriter out(pipe.write_fd());
    std::string first(4095, 'a');
    out.write(first.data(), first.size());
    expected += first;
    EXPECT_EQ(pipe.pending(), 0);
    out.write("b", 1);  // exactly fills the 4096-byte buffer; still nothing written
    expected += "b";
    EXPECT_EQ(pipe.pending(), 0);
    out.write("cd", 2);  // needs room: the full buffer goes out first
    expected += "cd";
    EXPECT_EQ(pipe.pending(), 4096);
  }  // the destructor flushes the rest
  EXPECT_EQ(pipe.pending(), 4098);
  EXPECT_EQ(pipe.read_available(), expected);
}

TEST(FdWriterTest, LargeWritesAcrossManyBuffersToAFile) {
  char path[] = "/tmp/memtrack_fdwriter_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  std::string expected;
  {
    FdWriter out(fd);
    // Sizes around the buffer size, so that writes start at many different offsets.
    const size_t kSizes[] = {1, 4095, 4096, 4097, 3, 10000, 8192, 17, 12289};
    uint32_t state = 12345;
    for (size_t size : kSizes) {
      std::string chunk(size, '\0');
      for (char& c : chunk) {
        state = state * 1103515245u + 12345u;
        c = static_cast<char>('a' + (state >> 16) % 26);
      }
      out.write(chunk.data(), chunk.size());
      expected += chunk;
    }
    out.flush();
    EXPECT_FALSE(out.failed());
  }
  ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
  std::string actual;
  char chunk[8192];
  for (ssize_t n; (n = read(fd, chunk, sizeof(chunk))) > 0;) actual.append(chunk, n);
  close(fd);
  EXPECT_EQ(actual.size(), 42790u);
  EXPECT_EQ(actual, expected);
}

TEST(FdWriterTest, ReportsFailedWrites) {
  FdWriter out(-1);
  out.write("x", 1);
  EXPECT_FALSE(out.failed());  // still buffered
  out.flush();
  EXPECT_TRUE(out.failed());
}

}  // namespace
}  // namespace memtrack::core
