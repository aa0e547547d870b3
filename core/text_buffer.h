// Formatting into a caller-provided fixed buffer, for diagnostics and reports in the runtime.
// Runtime-safe: never allocates; output past the capacity is dropped and flagged.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::core {

// Writes `value` in decimal to `out` (at least 20 chars), without a NUL. Returns the length.
int format_decimal(uint64_t value, char* out);

// Not thread safe; one per use. Always keeps the text NUL-terminated.
class TextBuffer {
 public:
  TextBuffer(char* storage, size_t capacity);

  TextBuffer& str(const char* s);
  TextBuffer& str(const char* s, size_t n);
  TextBuffer& chr(char c);
  TextBuffer& u64(uint64_t value);
  TextBuffer& i64(int64_t value);
  // Decimal with ',' every three digits ("1,234,567"), as valgrind prints sizes.
  TextBuffer& grouped(uint64_t value);
  // "0x" followed by at least `min_digits` lowercase hex digits.
  TextBuffer& hex(uint64_t value, int min_digits = 1);
  // Appends `word` or `word` + "s" depending on `count`.
  TextBuffer& plural(uint64_t count, const char* word);

  const char* data() const { return storage_; }
  size_t size() const { return size_; }
  bool truncated() const { return truncated_; }
  void clear();

 private:
  char* storage_;
  size_t capacity_;
  size_t size_ = 0;
  bool truncated_ = false;
};

template <size_t N>
class FixedText : public TextBuffer {
 public:
  FixedText() : TextBuffer(buffer_, N) {}

 private:
  char buffer_[N];
};

// Buffers text and writes it to a file descriptor in large chunks. Not thread safe.
class FdWriter {
 public:
  explicit FdWriter(int fd) : fd_(fd) {}
  ~FdWriter() { flush(); }
  FdWriter(const FdWriter&) = delete;
  FdWriter& operator=(const FdWriter&) = delete;

  void write(const char* data, size_t size);
  void write(const TextBuffer& text) { write(text.data(), text.size()); }
  void flush();
  bool failed() const { return failed_; }

 private:
  int fd_;
  size_t used_ = 0;
  bool failed_ = false;
  char buffer_[4096];
};

// Parses a decimal integer (optional leading '-'). Returns false on empty input, junk, or
// overflow. Used by the flag parser.
bool parse_int64(const char* s, size_t n, int64_t* out);

size_t string_length(const char* s);
bool strings_equal(const char* a, size_t a_len, const char* b);
void copy_bytes(void* dst, const void* src, size_t n);

}  // namespace memtrack::core
