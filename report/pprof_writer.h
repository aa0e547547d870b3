// A pprof profile (google/pprof's profile.proto, gzip-compressed) built from samples: a
// stack of symbolized frames plus one value per sample type the caller names, and labels.
// Knows nothing of leaks: the leak report (pprof_renderer.h) is one user, heap profiles can
// be another. Ordinary C++; throws memtrack::Error when the output cannot be written.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "symbolize/frame.h"

namespace perftools::profiles {
class Profile;
}

namespace memtrack::report {

// What one value of a sample counts: ("leaked_space", "bytes"), ("alloc_objects", "count").
struct ProfileValueType {
  std::string type;
  std::string unit;
};

// A sample's label: a string (str) or a number (num, with num_unit such as "bytes" or "").
struct ProfileLabel {
  std::string key;
  std::string str;
  int64_t num = 0;
  std::string num_unit;
  bool numeric = false;

  static ProfileLabel text(std::string key, std::string value) {
    return {std::move(key), std::move(value), 0, "", false};
  }
  static ProfileLabel number(std::string key, int64_t value, std::string unit = "") {
    return {std::move(key), "", value, std::move(unit), true};
  }
};

// Collects samples and writes them as one profile. Functions, locations and mappings are
// shared between samples (each distinct one is written once). Not thread safe.
class ProfileBuilder {
 public:
  // sample_types: the values every sample carries, in order. default_type: the one pprof
  // shows unless told otherwise (-sample_index); "" for pprof's choice (the last).
  ProfileBuilder(std::vector<ProfileValueType> sample_types, const std::string& default_type);
  ~ProfileBuilder();
  ProfileBuilder(const ProfileBuilder&) = delete;
  ProfileBuilder& operator=(const ProfileBuilder&) = delete;

  // The modules of one address space (a process), so that its frames get mappings with
  // their address ranges and build-ids. `space` is the caller's name for it (a pid); frames
  // of spaces without modules, or outside every module, get a mapping per module path with
  // an empty range.
  void add_address_space(uint64_t space, const std::vector<RawModule>& modules);

  // One sample. stack: innermost first, as the symbolizer gives it: a frame with inlined ==
  // true is an inlined call inside the next frame's function, at the same address, so a run
  // of inlined frames and the frame after it become one Location with several Lines
  // (innermost first, pprof's convention). Frame addresses are return addresses; the
  // location is the call instruction's (address - 1), as the symbolizer looked it up.
  // Frames without a function name become locations without lines (pprof then shows the
  // address, and may symbolize it from the mapping's file). values: one per sample type.
  // Throws Error when values has the wrong size.
  void add_sample(uint64_t space, const std::vector<Frame>& stack,
                  const std::vector<int64_t>& values, const std::vector<ProfileLabel>& labels);

  // A line shown by `pprof -comments` (the program, the tool's version).
  void add_comment(const std::string& comment);

  // The profile as protobuf bytes, uncompressed (tests) or gzip-compressed (what pprof reads
  // from a file).
  std::string serialized() const;
  std::string gzipped() const;

 private:
  struct MappingKey;
  int64_t string_index(const std::string& text);
  uint64_t mapping_for(uint64_t space, const Frame& frame);
  uint64_t function_for(const Frame& frame);
  uint64_t location_for(uint64_t space, const Frame* frames, size_t count);

  std::unique_ptr<perftools::profiles::Profile> profile_;
  size_t value_count_;
  std::map<std::string, int64_t> strings_;
  std::map<uint64_t, std::vector<RawModule>> spaces_;
  std::map<std::string, uint64_t> mappings_;   // "space/module index" or "path" -> id
  std::map<std::string, uint64_t> functions_;  // name + file -> id
  std::map<std::string, uint64_t> locations_;  // space + address + lines -> id
};

// gzip (RFC 1952) of `data` with zlib, as pprof files are stored. Throws Error if zlib fails.
std::string gzip_compress(const std::string& data);

}  // namespace memtrack::report
