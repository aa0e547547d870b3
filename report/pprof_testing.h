// Test-only: a gzipped pprof profile decoded back into its message, and lookups that name
// what `go tool pprof` prints.
#pragma once

#include <zlib.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "report/profile.pb.h"

namespace memtrack::report::testing {

inline std::string gunzip(const std::string& data) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[4096];
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("not a complete gzip stream");
  return out;
}

inline perftools::profiles::Profile decode_profile(const std::string& gzipped) {
  perftools::profiles::Profile profile;
  if (!profile.ParseFromString(gunzip(gzipped))) throw std::runtime_error("not a profile");
  return profile;
}

inline const std::string& text_of(const perftools::profiles::Profile& p, int64_t index) {
  return p.string_table(static_cast<int>(index));
}

inline const perftools::profiles::Location& location_of(const perftools::profiles::Profile& p,
                                                        uint64_t id) {
  return p.location(static_cast<int>(id - 1));  // the builder numbers them 1, 2, ...
}

inline const perftools::profiles::Function& function_of(const perftools::profiles::Profile& p,
                                                        uint64_t id) {
  return p.function(static_cast<int>(id - 1));
}

// The sample's string label `key`, "" if it has none.
inline std::string label_of(const perftools::profiles::Profile& p,
                            const perftools::profiles::Sample& s, const std::string& key) {
  for (const auto& label : s.label()) {
    if (text_of(p, label.key()) == key) return text_of(p, label.str());
  }
  return "";
}

inline int64_t num_label_of(const perftools::profiles::Profile& p,
                            const perftools::profiles::Sample& s, const std::string& key) {
  for (const auto& label : s.label()) {
    if (text_of(p, label.key()) == key) return label.num();
  }
  return -1;
}

// The function names of the sample's stack, leaf first, inlined frames included.
inline std::vector<std::string> stack_names(const perftools::profiles::Profile& p,
                                            const perftools::profiles::Sample& s) {
  std::vector<std::string> names;
  for (uint64_t id : s.location_id()) {
    for (const auto& line : location_of(p, id).line()) {
      names.push_back(text_of(p, function_of(p, line.function_id()).name()));
    }
  }
  return names;
}

}  // namespace memtrack::report::testing
