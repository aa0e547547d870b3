// How the HTML report carries its model: JSON, gzip-compressed (zlib), in base64. A report of
// 10,000 groups is 42 MiB of JSON but a few MiB so; the page inflates it with the browser's
// own DecompressionStream. Base64 has no '<', so nothing in the data can end its element.
#pragma once

#include <string>
#include <string_view>

namespace memtrack::report {

// The gzip member (RFC 1952) of `bytes`. Throws memtrack::Error if zlib fails.
std::string gzip_compressed(std::string_view bytes);

// RFC 4648 base64 with padding, no line breaks.
std::string base64_encoded(std::string_view bytes);

}  // namespace memtrack::report
