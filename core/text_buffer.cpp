// Fixed-buffer formatting. Runtime-safe: no allocation, no libc.
#include "core/text_buffer.h"

#include "core/sys_linux.h"

namespace memtrack::core {

TextBuffer::TextBuffer(char* storage, size_t capacity) : storage_(storage), capacity_(capacity) {
  if (capacity_ > 0) storage_[0] = '\0';
}

void TextBuffer::clear() {
  size_ = 0;
  truncated_ = false;
  if (capacity_ > 0) storage_[0] = '\0';
}

TextBuffer& TextBuffer::chr(char c) {
  if (size_ + 1 < capacity_) {
    storage_[size_++] = c;
    storage_[size_] = '\0';
  } else {
    truncated_ = true;
  }
  return *this;
}

TextBuffer& TextBuffer::str(const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i) chr(s[i]);
  return *this;
}

TextBuffer& TextBuffer::str(const char* s) {
  if (s == nullptr) return str("(null)");
  while (*s != '\0') chr(*s++);
  return *this;
}

int format_decimal(uint64_t value, char* out) {
  char reversed[20];
  int n = 0;
  do {
    reversed[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (int i = 0; i < n; ++i) out[i] = reversed[n - 1 - i];
  return n;
}

TextBuffer& TextBuffer::u64(uint64_t value) {
  char digits[20];
  return str(digits, static_cast<size_t>(format_decimal(value, digits)));
}

TextBuffer& TextBuffer::i64(int64_t value) {
  if (value < 0) {
    chr('-');
    return u64(0 - static_cast<uint64_t>(value));
  }
  return u64(static_cast<uint64_t>(value));
}

TextBuffer& TextBuffer::grouped(uint64_t value) {
  char digits[32];
  int n = 0;
  int in_group = 0;
  do {
    if (in_group == 3) {
      digits[n++] = ',';
      in_group = 0;
    }
    digits[n++] = static_cast<char>('0' + value % 10);
    ++in_group;
    value /= 10;
  } while (value != 0);
  while (n > 0) chr(digits[--n]);
  return *this;
}

TextBuffer& TextBuffer::hex(uint64_t value, int min_digits) {
  static const char kDigits[] = "0123456789abcdef";
  char digits[16];
  int n = 0;
  do {
    digits[n++] = kDigits[value & 0xf];
    value >>= 4;
  } while (value != 0);
  str("0x");
  for (int i = n; i < min_digits && i < 16; ++i) chr('0');
  while (n > 0) chr(digits[--n]);
  return *this;
}

TextBuffer& TextBuffer::plural(uint64_t count, const char* word) {
  str(word);
  if (count != 1) chr('s');
  return *this;
}

void FdWriter::write(const char* data, size_t size) {
  while (size > 0) {
    if (used_ == sizeof(buffer_)) flush();
    size_t n = sizeof(buffer_) - used_;
    if (n > size) n = size;
    copy_bytes(buffer_ + used_, data, n);
    used_ += n;
    data += n;
    size -= n;
  }
}

void FdWriter::flush() {
  if (used_ > 0 && !sys::write_all(fd_, buffer_, used_)) failed_ = true;
  used_ = 0;
}

bool parse_int64(const char* s, size_t n, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < n && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  if (i == n) return false;
  // INT64_MIN has no positive counterpart, so a negative number may reach INT64_MAX + 1.
  uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0);
  uint64_t value = 0;
  for (; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

size_t string_length(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

bool strings_equal(const char* a, size_t a_len, const char* b) {
  size_t i = 0;
  for (; i < a_len; ++i) {
    if (b[i] == '\0' || a[i] != b[i]) return false;
  }
  return b[i] == '\0';
}

void copy_bytes(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < n; ++i) d[i] = s[i];
}

}  // namespace memtrack::core
