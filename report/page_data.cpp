// gzip and base64 for the HTML report's data (see page_data.h).
#include "report/page_data.h"

#include <zlib.h>

#include <cstdint>

#include "common/error.h"

namespace memtrack::report {

std::string gzip_compressed(std::string_view bytes) {
  if (bytes.size() > UINT32_MAX) throw Error("the HTML report's data is over 4 GiB");
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error("cannot compress the HTML report's data: zlib failed to start");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(bytes.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw Error("cannot compress the HTML report's data: zlib failed");
  return out;
}

struct GzipWriter::State {
  z_stream stream{};
};

GzipWriter::GzipWriter() : state_(new State) {
  if (deflateInit2(&state_->stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    delete state_;
    throw Error("cannot compress the HTML report's data: zlib failed to start");
  }
}

GzipWriter::~GzipWriter() {
  deflateEnd(&state_->stream);
  delete state_;
}

void GzipWriter::deflate_into_out(int flush) {
  z_stream& stream = state_->stream;
  constexpr size_t kChunk = 1 << 16;
  int status = Z_OK;
  do {
    size_t at = out_.size();
    out_.resize(at + kChunk);
    stream.next_out = reinterpret_cast<Bytef*>(out_.data() + at);
    stream.avail_out = static_cast<uInt>(kChunk);
    status = deflate(&stream, flush);
    out_.resize(at + kChunk - stream.avail_out);
    if (status == Z_STREAM_ERROR)
      throw Error("cannot compress the HTML report's data: zlib failed");
  } while (stream.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
}

void GzipWriter::write(std::string_view bytes) {
  z_stream& stream = state_->stream;
  while (!bytes.empty()) {
    size_t n = bytes.size() < UINT32_MAX ? bytes.size() : UINT32_MAX;
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(n);
    deflate_into_out(Z_NO_FLUSH);
    bytes.remove_prefix(n);
  }
}

std::string GzipWriter::finish() {
  state_->stream.next_in = nullptr;
  state_->stream.avail_in = 0;
  deflate_into_out(Z_FINISH);
  return std::move(out_);
}

std::string base64_encoded(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[at]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  size_t left = bytes.size() - i;
  if (left > 0) {
    uint32_t n = byte(i) << 16 | (left == 2 ? byte(i + 1) << 8 : 0);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += left == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace memtrack::report
