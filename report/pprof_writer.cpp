// The pprof profile builder (see pprof_writer.h; the format: report/profile.proto).
#include "report/pprof_writer.h"

#include <zlib.h>

#include <algorithm>

#include "common/error.h"
#include "report/profile.pb.h"

namespace memtrack::report {
namespace pp = perftools::profiles;

namespace {

std::string build_id_hex(const std::vector<uint8_t>& build_id) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : build_id) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

// The address inside the call instruction that a return address follows.
uint64_t call_address(uint64_t return_address) {
  return return_address > 0 ? return_address - 1 : 0;
}

}  // namespace

ProfileBuilder::ProfileBuilder(std::vector<ProfileValueType> sample_types,
                               const std::string& default_type)
    : profile_(std::make_unique<pp::Profile>()), value_count_(sample_types.size()) {
  string_index("");  // string_table[0] is "" by the format's rule
  for (const ProfileValueType& type : sample_types) {
    pp::ValueType* value_type = profile_->add_sample_type();
    value_type->set_type(string_index(type.type));
    value_type->set_unit(string_index(type.unit));
  }
  if (!default_type.empty()) profile_->set_default_sample_type(string_index(default_type));
}

ProfileBuilder::~ProfileBuilder() = default;

int64_t ProfileBuilder::string_index(const std::string& text) {
  auto [it, inserted] = strings_.emplace(text, profile_->string_table_size());
  if (inserted) profile_->add_string_table(text);
  return it->second;
}

void ProfileBuilder::add_address_space(uint64_t space, const std::vector<RawModule>& modules) {
  spaces_[space] = modules;
}

void ProfileBuilder::add_comment(const std::string& comment) {
  profile_->add_comment(string_index(comment));
}

// The mapping of the module that holds the frame's address in `space` (one Mapping per
// space and module: two processes may load one file at different addresses), else one per
// module path without a range.
uint64_t ProfileBuilder::mapping_for(uint64_t space, const Frame& frame) {
  const RawModule* module = nullptr;
  size_t index = 0;
  if (auto it = spaces_.find(space); it != spaces_.end()) {
    for (; index < it->second.size(); ++index) {
      const RawModule& m = it->second[index];
      if (frame.address >= m.start && frame.address < m.end &&
          (frame.module.empty() || m.path == frame.module)) {
        module = &m;
        break;
      }
    }
  }
  if (module == nullptr && frame.module.empty()) return 0;
  std::string key = module != nullptr ? std::to_string(space) + "/" + std::to_string(index)
                                      : "path:" + frame.module;
  auto [it, inserted] = mappings_.emplace(key, profile_->mapping_size() + 1);
  if (!inserted) return it->second;
  pp::Mapping* mapping = profile_->add_mapping();
  mapping->set_id(it->second);
  mapping->set_filename(string_index(module != nullptr ? module->path : frame.module));
  if (module != nullptr) {
    // The module's lowest mapped address maps file offset 0 in the layouts linkers produce
    // (the first PT_LOAD segment starts the file), so file_offset stays 0.
    mapping->set_memory_start(module->start);
    mapping->set_memory_limit(module->end);
    mapping->set_build_id(string_index(build_id_hex(module->build_id)));
  }
  // Cleared again by location_for when one of its frames lacks a name, a file or a line.
  mapping->set_has_functions(true);
  mapping->set_has_filenames(true);
  mapping->set_has_line_numbers(true);
  mapping->set_has_inline_frames(true);
  return it->second;
}

uint64_t ProfileBuilder::function_for(const Frame& frame) {
  std::string key = frame.function + '\0' + frame.file;
  auto [it, inserted] = functions_.emplace(key, profile_->function_size() + 1);
  if (!inserted) return it->second;
  pp::Function* function = profile_->add_function();
  function->set_id(it->second);
  // The symbolizer keeps only the demangled name, so the system name is the same.
  function->set_name(string_index(frame.function));
  function->set_system_name(string_index(frame.function));
  function->set_filename(string_index(frame.file));
  return it->second;
}

// frames[0..count): the inlined frames at one address, innermost first, and their function.
uint64_t ProfileBuilder::location_for(uint64_t space, const Frame* frames, size_t count) {
  const Frame& outer = frames[count - 1];
  std::string key = std::to_string(space) + ":" + std::to_string(outer.address);
  for (size_t i = 0; i < count; ++i) {
    key += '\0' + frames[i].function + '\0' + frames[i].file + ':' +
           std::to_string(frames[i].line) + ':' + std::to_string(frames[i].column);
  }
  auto [it, inserted] = locations_.emplace(key, profile_->location_size() + 1);
  if (!inserted) return it->second;
  uint64_t mapping_id = mapping_for(space, outer);
  pp::Location* location = profile_->add_location();
  location->set_id(it->second);
  location->set_mapping_id(mapping_id);
  location->set_address(call_address(outer.address));
  bool named =
      std::all_of(frames, frames + count, [](const Frame& f) { return !f.function.empty(); });
  bool filed = named && std::all_of(frames, frames + count,
                                    [](const Frame& f) { return !f.file.empty() && f.line > 0; });
  if (named) {
    for (size_t i = 0; i < count; ++i) {
      pp::Line* line = location->add_line();
      line->set_function_id(function_for(frames[i]));
      line->set_line(frames[i].line);
      line->set_column(frames[i].column);
    }
  }
  if (mapping_id != 0 && (!named || !filed)) {
    pp::Mapping* mapping = profile_->mutable_mapping(static_cast<int>(mapping_id - 1));
    if (!named) mapping->set_has_functions(false);
    mapping->set_has_filenames(false);
    mapping->set_has_line_numbers(false);
    mapping->set_has_inline_frames(false);
  }
  return it->second;
}

void ProfileBuilder::add_sample(uint64_t space, const std::vector<Frame>& stack,
                                const std::vector<int64_t>& values,
                                const std::vector<ProfileLabel>& labels) {
  if (values.size() != value_count_) {
    throw Error("pprof sample with " + std::to_string(values.size()) + " values, expected " +
                std::to_string(value_count_));
  }
  pp::Sample* sample = profile_->add_sample();
  for (size_t begin = 0; begin < stack.size();) {
    size_t end = begin;
    while (end + 1 < stack.size() && stack[end].inlined) ++end;
    sample->add_location_id(location_for(space, &stack[begin], end - begin + 1));
    begin = end + 1;
  }
  for (int64_t value : values) sample->add_value(value);
  for (const ProfileLabel& label : labels) {
    pp::Label* out = sample->add_label();
    out->set_key(string_index(label.key));
    if (label.numeric) {
      out->set_num(label.num);
      if (!label.num_unit.empty()) out->set_num_unit(string_index(label.num_unit));
    } else {
      out->set_str(string_index(label.str));
    }
  }
}

std::string ProfileBuilder::serialized() const {
  std::string bytes;
  if (!profile_->SerializeToString(&bytes)) throw Error("cannot encode the pprof profile");
  return bytes;
}

std::string ProfileBuilder::gzipped() const {
  return gzip_compress(serialized());
}

std::string gzip_compress(const std::string& data) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error("zlib: cannot start compressing");
  }
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw Error("zlib: cannot compress the profile");
  return out;
}

}  // namespace memtrack::report
