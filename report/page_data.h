// How the HTML report carries its model: JSON, gzip-compressed (zlib), in base64. A report of
// 10,000 groups is 42 MiB of JSON but a few MiB so; the page inflates it with the browser's
// own DecompressionStream. Base64 has no '<', so nothing in the data can end its element.
#pragma once

#include <string>
#include <string_view>

namespace memtrack::report {

// The gzip member (RFC 1952) of `bytes`. Throws memtrack::Error if zlib fails.
std::string gzip_compressed(std::string_view bytes);

// gzip_compressed of everything written, compressed as it comes: the data of a large report
// never has to be in memory whole (hundreds of megabytes of JSON for a few of gzip). Throws
// memtrack::Error if zlib fails. One per member; not thread safe.
class GzipWriter {
 public:
  GzipWriter();
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(std::string_view bytes);
  // The whole member; nothing may be written after.
  std::string finish();

 private:
  void deflate_into_out(int flush);
  struct State;
  State* state_;
  std::string out_;
};

// RFC 4648 base64 with padding, no line breaks.
std::string base64_encoded(std::string_view bytes);

}  // namespace memtrack::report
