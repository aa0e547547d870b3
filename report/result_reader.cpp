// Result-file reader: bounds-checked decoding of every section, checksum verification.
#include "report/result_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "core/fd_names.h"
#include "core/result_names.h"
#include "core/result_records.h"

namespace memtrack::report {
namespace {

namespace result = core::result;

// A bounded little-endian reader over one region of the file.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> data, const std::string& name, const char* what)
      : data_(data), name_(name), what_(what) {}

  template <typename T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  // One record of core/result_records.inc, field by field.
  template <typename Record>
  Record record() {
    Record r;
    result::visit_fields(r, [this](auto& field) {
      using Field = std::remove_reference_t<decltype(field)>;
      field = this->get<Field>();
    });
    return r;
  }
  std::string string(uint64_t size) {
    const uint8_t* p = take(size);
    return std::string(reinterpret_cast<const char*>(p), size);
  }
  std::span<const uint8_t> bytes(uint64_t size) { return {take(size), size}; }
  uint64_t left() const { return data_.size() - pos_; }
  // A count of records of at least `min_record_size` bytes each must fit in what is left.
  uint32_t count(uint64_t min_record_size) {
    auto n = get<uint32_t>();
    if (min_record_size > 0 && n > left() / min_record_size) fail("record count too large");
    return n;
  }
  void expect_end() {
    if (left() != 0) fail("unexpected bytes at the end of the section");
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(name_ + ": corrupt result file (" + what_ + ": " + problem + ")");
  }

 private:
  const uint8_t* take(uint64_t size) {
    if (size > left()) fail("truncated");
    const uint8_t* p = data_.data() + pos_;
    pos_ += size;
    return p;
  }

  std::span<const uint8_t> data_;
  const std::string& name_;
  const char* what_;
  uint64_t pos_ = 0;
};

std::vector<std::string> split_command(const std::string& text) {
  std::vector<std::string> args;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

void read_process(Cursor c, ResultFile& file) {
  auto process = c.record<result::ProcessRecord>();
  file.pid = process.pid;
  file.ppid = process.ppid;
  if (process.exit_how > result::ExitHow::kRunning) {
    c.fail("unknown exit kind " + std::to_string(static_cast<uint32_t>(process.exit_how)));
  }
  file.exit.how = process.exit_how;
  if (file.exit.how == ExitInfo::How::kSignal) {
    file.exit.signal = process.exit_status;
  } else {
    file.exit.code = process.exit_status;
  }
  file.command = split_command(c.string(c.get<uint32_t>()));
  file.executable = c.string(c.get<uint32_t>());
  c.expect_end();
}

void read_stats(Cursor c, ResultFile& file) {
  uint32_t count = c.count(8);
  uint64_t values[static_cast<int>(result::Counter::kCount)] = {};
  for (uint32_t i = 0; i < count; ++i) {
    auto v = c.get<uint64_t>();
    if (i < std::size(values)) values[i] = v;  // newer writers may append counters
  }
  c.expect_end();
  auto at = [&](result::Counter counter) { return values[static_cast<int>(counter)]; };
#define MEMTRACK_COUNTER(Enumerator, name, description) \
  file.stats.name = at(result::Counter::Enumerator);
#include "core/stats.inc"
#undef MEMTRACK_COUNTER
}

void read_modules(Cursor c, ResultFile& file) {
  uint32_t count = c.count(result::ModuleRecord::kSize);
  for (uint32_t i = 0; i < count; ++i) {
    auto record = c.record<result::ModuleRecord>();
    RawModule m;
    m.load_bias = record.load_bias;
    m.start = record.start;
    m.end = record.end;
    auto build_id = c.bytes(record.build_id_size);
    m.build_id.assign(build_id.begin(), build_id.end());
    m.path = c.string(record.path_size);
    m.unloaded = (record.flags & result::kModuleUnloaded) != 0;
    if (m.end < m.start) c.fail("module " + m.path + " ends before it starts");
    file.modules.push_back(std::move(m));
  }
  c.expect_end();
}

void read_stacks(Cursor c, ResultFile& file) {
  uint32_t count = c.count(result::StackRecord::kSize);
  for (uint32_t i = 0; i < count; ++i) {
    auto [id, depth] = c.record<result::StackRecord>();
    if (depth > c.left() / 8) c.fail("stack " + std::to_string(id) + " is cut off");
    std::vector<uint64_t> frames(depth);
    for (uint64_t& f : frames) f = c.get<uint64_t>();
    if (!file.stacks.emplace(id, std::move(frames)).second) {
      c.fail("stack " + std::to_string(id) + " appears twice");
    }
  }
  c.expect_end();
}

void read_leaks(Cursor c, ResultFile& file) {
  uint32_t count = c.count(result::LeakRecord::kSize);
  for (uint32_t i = 0; i < count; ++i) {
    auto record = c.record<result::LeakRecord>();
    RawLeak leak;
    leak.stack_id = record.stack_id;
    leak.bytes = record.bytes;
    leak.blocks = record.blocks;
    leak.kind = record.kind;
    if (core::leak_kind_name(leak.kind) == nullptr) {
      c.fail("unknown leak kind " + std::to_string(static_cast<int>(record.kind)));
    }
    leak.runtime_internal = (record.flags & result::kLeakRuntimeInternal) != 0;
    if (!file.stacks.contains(leak.stack_id)) {
      c.fail("leak refers to unknown stack " + std::to_string(leak.stack_id));
    }
    file.leaks.push_back(leak);
  }
  c.expect_end();
}

// Section 6: what hangs off definitely lost groups. Each record names a leak of kind
// definite, at most once.
void read_indirect(Cursor c, ResultFile& file) {
  uint32_t count = c.count(result::IndirectRecord::kSize);
  std::vector<bool> seen(file.leaks.size(), false);
  for (uint32_t i = 0; i < count; ++i) {
    auto [index, reserved, bytes, blocks] = c.record<result::IndirectRecord>();
    std::string leak = "leak " + std::to_string(index);
    if (reserved != 0) c.fail("reserved field of " + leak + " is not 0");
    if (index >= file.leaks.size()) {
      c.fail(leak + " does not exist (" + std::to_string(file.leaks.size()) + " leaks)");
    }
    RawLeak& raw = file.leaks[index];
    if (raw.kind != LeakKind::kDefinite) c.fail(leak + " is not definitely lost");
    if (seen[index]) c.fail(leak + " appears twice");
    seen[index] = true;
    raw.indirect_bytes = bytes;
    raw.indirect_blocks = blocks;
  }
  c.expect_end();
}

// Section 12: the sampled mode's interval and an estimate per leak group, in the leaks
// section's order, or, in a live report (after its section 9), per live site in its order.
void read_sampling(Cursor c, ResultFile& file) {
  auto head = c.record<result::SamplingHead>();
  if (head.interval == 0) c.fail("sampling interval is 0");
  if (head.reserved != 0) c.fail("reserved field is not 0");
  auto fill = [&](auto& items, const char* what) {
    if (head.count != items.size()) {
      c.fail(std::to_string(head.count) + " estimates for " + std::to_string(items.size()) + " " +
             what);
    }
    for (auto& item : items) {
      auto estimate = c.record<result::EstimateRecord>();
      item.estimated_bytes = estimate.estimated_bytes;
      item.estimated_blocks = estimate.estimated_blocks;
    }
  };
  if (file.live) {
    fill(file.live->sites, "live sites");
  } else {
    fill(file.leaks, "leak groups");
  }
  file.sample_interval = head.interval;
  file.sample_seed = head.seed;
  file.sampled_allocations = head.sampled;
  c.expect_end();
}

// A field of an error record: a value of `Enum` that `name_of` knows (core/result_names.h).
template <typename Enum>
Enum error_field(const Cursor& c, Enum value, const char* (*name_of)(Enum), const char* what) {
  if (name_of(value) == nullptr) {
    c.fail(std::string("unknown ") + what + " " + std::to_string(static_cast<int>(value)));
  }
  return value;
}

bool aligned_flag(const Cursor& c, uint8_t value, const char* field, uint32_t index) {
  if (value > 1) {
    c.fail(std::string(field) + " of error " + std::to_string(index) + " is not 0 or 1");
  }
  return value == 1;
}

// Section 7: allocator misuse. Every value must be one this reader knows, and every non-zero
// stack id must be in the stacks section; the bad call's stack is always written, so its id
// is never 0 ("not known" is for the allocation and first-free stacks only).
void read_errors(Cursor c, ResultFile& file) {
  uint32_t count = c.count(result::ErrorRecord::kSize);
  for (uint32_t i = 0; i < count; ++i) {
    auto record = c.record<result::ErrorRecord>();
    RawError e;
    e.kind = error_field(c, record.kind, core::error_kind_name, "error kind");
    e.where = error_field(c, record.where, core::error_where_name, "error location");
    e.alloc_call = error_field(c, record.alloc_call, core::alloc_call_name, "allocation call");
    e.free_call = error_field(c, record.free_call, core::free_call_name, "free call");
    e.alloc_aligned = aligned_flag(c, record.alloc_aligned, "alloc_aligned", i);
    e.free_aligned = aligned_flag(c, record.free_aligned, "free_aligned", i);
    e.detail = aligned_flag(c, record.detail, "detail", i);
    if (record.reserved != 0) {
      c.fail("reserved field of error " + std::to_string(i) + " is not 0");
    }
    e.occurrences = record.occurrences;
    e.bad_stack = record.bad_stack;
    e.alloc_stack = record.alloc_stack;
    e.free_stack = record.free_stack;
    e.address = record.address;
    e.block_start = record.block_start;
    e.block_size = record.block_size;
    if (!file.stacks.contains(e.bad_stack)) {
      c.fail("error refers to unknown stack " + std::to_string(e.bad_stack));
    }
    if (e.alloc_stack != 0 && !file.stacks.contains(e.alloc_stack)) {
      c.fail("error refers to unknown allocation stack " + std::to_string(e.alloc_stack));
    }
    if (e.free_stack != 0 && !file.stacks.contains(e.free_stack)) {
      c.fail("error refers to unknown free stack " + std::to_string(e.free_stack));
    }
    file.errors.push_back(e);
  }
  c.expect_end();
}

// Section 10: the crash that ended the process. The stack must be in the stacks section.
void read_crash(Cursor c, ResultFile& file) {
  auto record = c.record<result::CrashRecord>();
  RawCrash crash;
  crash.signal = static_cast<int>(record.signal);
  crash.code = record.code;
  crash.address = record.address;
  crash.tid = record.tid;
  uint32_t flags = record.flags;
  crash.has_address = (flags & result::kCrashHasAddress) != 0;
  crash.stack_id = record.stack_id;
  if (record.reserved != 0) c.fail("reserved field is not 0");
  if (crash.signal <= 0 || crash.signal > 64)
    c.fail("signal " + std::to_string(crash.signal) + " out of range");
  if ((flags & ~result::kCrashHasAddress) != 0) c.fail("unknown flags");
  if (!file.stacks.contains(crash.stack_id)) {
    c.fail("refers to unknown stack " + std::to_string(crash.stack_id));
  }
  file.crash = crash;
  c.expect_end();
}

// Section 13: what each stack allocated since the start, by increasing stack id.
void read_stack_totals(Cursor c, ResultFile& file) {
  auto head = c.record<result::StackTotalsHead>();
  if (head.incomplete > 1) c.fail("incomplete is neither 0 nor 1");
  if (head.count > c.left() / result::StackTotalRecord::kSize) c.fail("count too large");
  uint32_t previous = 0;
  for (uint32_t i = 0; i < head.count; ++i) {
    auto record = c.record<result::StackTotalRecord>();
    if (record.reserved != 0) c.fail("reserved field is not 0");
    if (record.stack_id <= previous) c.fail("stack ids out of order");
    previous = record.stack_id;
    if (!file.stacks.contains(record.stack_id)) {
      c.fail("refers to unknown stack " + std::to_string(record.stack_id));
    }
    file.stack_totals.push_back(record);
  }
  file.stack_totals_incomplete = head.incomplete != 0;
  c.expect_end();
}

// Section 14: the retainers, then the groups, whose stacks must be in the stacks section and
// whose retainers must be among those listed.
void read_retention(Cursor c, ResultFile& file) {
  ResultFile::RawRetention retention;
  retention.head = c.record<result::RetentionHead>();
  const result::RetentionHead& head = retention.head;
  if ((head.flags & ~result::kRetentionApproximate) != 0) c.fail("unknown flags");
  if (head.retainer_count > c.left() / result::RetainerRecord::kSize) {
    c.fail("retainer count too large");
  }
  for (uint32_t i = 0; i < head.retainer_count; ++i) {
    ResultFile::RawRetainer r;
    static_cast<result::RetainerRecord&>(r) = c.record<result::RetainerRecord>();
    if (static_cast<uint8_t>(r.kind) > result::kMaxRootKind) {
      c.fail("unknown kind of retainer " + std::to_string(i));
    }
    if (r.reserved != 0 || r.reserved2 != 0) c.fail("reserved field is not 0");
    r.symbol = c.string(r.symbol_size);
    r.module = c.string(r.module_size);
    retention.retainers.push_back(std::move(r));
  }
  if (head.group_count > c.left() / result::RetentionGroupRecord::kSize) {
    c.fail("group count too large");
  }
  for (uint32_t i = 0; i < head.group_count; ++i) {
    auto g = c.record<result::RetentionGroupRecord>();
    if (g.reserved != 0 || g.reserved2 != 0 || g.reserved3 != 0) {
      c.fail("reserved field is not 0");
    }
    if (static_cast<uint8_t>(g.holder_kind) > result::kMaxHolderKind) {
      c.fail("unknown holder kind of group " + std::to_string(i));
    }
    if (!file.stacks.contains(g.stack_id) ||
        (g.holder_kind == result::HolderKind::kSite && !file.stacks.contains(g.holder))) {
      c.fail("group " + std::to_string(i) + " refers to an unknown stack");
    }
    if ((g.holder_kind == result::HolderKind::kRetainer && g.holder >= head.retainer_count) ||
        (g.root != result::kNoRetainer && g.root >= head.retainer_count)) {
      c.fail("group " + std::to_string(i) + " refers to an unknown retainer");
    }
    // A tree: a holding group comes first, and holds blocks of the site it names.
    if ((g.holder_kind == result::HolderKind::kSite) != (g.parent != result::kNoGroup) ||
        (g.parent != result::kNoGroup &&
         (g.parent >= i || retention.groups[g.parent].stack_id != g.holder))) {
      c.fail("group " + std::to_string(i) + " has a bad parent group");
    }
    retention.groups.push_back(g);
  }
  c.expect_end();
  file.retention = std::move(retention);
}

// Section 15: one block's chain and referrers; retainers refer to section 14, which comes first.
void read_block_retention(Cursor c, ResultFile& file) {
  ResultFile::RawBlockRetention block;
  block.head = c.record<result::BlockRetentionHead>();
  const result::BlockRetentionHead& head = block.head;
  if (head.found > 1 || head.reserved != 0) c.fail("bad found or reserved field");
  if (static_cast<uint8_t>(head.kind) > static_cast<uint8_t>(result::LeakKind::kReachable)) {
    c.fail("unknown kind");
  }
  if (head.chain_count > result::kMaxBlockLinks || head.referrer_count > result::kMaxBlockLinks) {
    c.fail("more than " + std::to_string(result::kMaxBlockLinks) + " links");
  }
  if (head.found == 1 && !file.stacks.contains(head.stack_id)) c.fail("unknown stack");
  const size_t retainers = file.retention ? file.retention->retainers.size() : 0;
  auto link = [&](const char* what) {
    auto record = c.record<result::BlockLinkRecord>();
    if (static_cast<uint8_t>(record.kind) > result::kMaxLinkKind || record.reserved != 0 ||
        record.reserved2 != 0 || record.reserved3 != 0) {
      c.fail(std::string("bad ") + what);
    }
    if (record.kind == result::LinkKind::kBlock && !file.stacks.contains(record.stack_id)) {
      c.fail(std::string(what) + " refers to an unknown stack");
    }
    if (record.kind == result::LinkKind::kRetainer && record.retainer >= retainers) {
      c.fail(std::string(what) + " refers to an unknown retainer");
    }
    return record;
  };
  for (uint16_t i = 0; i < head.chain_count; ++i) block.chain.push_back(link("chain link"));
  for (uint16_t i = 0; i < head.referrer_count; ++i) block.referrers.push_back(link("referrer"));
  c.expect_end();
  file.block_retention = std::move(block);
}

// Section 9: a live report. Every site's stack must be in the stacks section.
void read_live(Cursor c, ResultFile& file) {
  auto head = c.record<result::LiveHead>();
  RawLive live;
  static_cast<result::LiveHead&>(live) = head;
  if (head.reserved != 0 || head.reserved2 != 0) c.fail("reserved field is not 0");
  uint32_t count = head.site_count;
  if (count > c.left() / result::LiveSiteRecord::kSize) c.fail("site count exceeds its size");
  for (uint32_t i = 0; i < count; ++i) {
    auto record = c.record<result::LiveSiteRecord>();
    if ((record.flags & ~(result::kLiveSiteRuntimeInternal | result::kLiveSiteNotSampled)) != 0) {
      c.fail("unknown flags of site " + std::to_string(i));
    }
    RawLiveSite site;
    site.stack_id = record.stack_id;
    site.runtime_internal = (record.flags & result::kLiveSiteRuntimeInternal) != 0;
    site.not_sampled = (record.flags & result::kLiveSiteNotSampled) != 0;
    if (site.not_sampled && (site.stack_id != 0 || site.runtime_internal)) {
      c.fail("site " + std::to_string(i) + " of blocks not sampled has a stack or another flag");
    }
    site.old_blocks = record.old_blocks;
    site.old_bytes = record.old_bytes;
    site.freed_after_report = record.freed_after_report;
    if (!file.stacks.contains(site.stack_id)) {
      c.fail("site refers to unknown stack " + std::to_string(site.stack_id));
    }
    live.sites.push_back(site);
  }
  c.expect_end();
  file.live = std::move(live);
}

// Section 8: descriptors open at exit. Every value must be one this reader knows, and the
// stack id must be in the stacks section.
void read_resources(Cursor c, ResultFile& file) {
  auto head = c.record<result::ResourcesHead>();
  if (head.reserved != 0) c.fail("reserved field is not 0");
  file.untracked_resources = head.untracked;
  uint32_t count = head.count;
  if (count > c.left() / result::ResourceRecord::kSize) c.fail("record count too large");
  file.tracks_resources = true;
  for (uint32_t i = 0; i < count; ++i) {
    auto record = c.record<result::ResourceRecord>();
    RawResource r;
    std::string what = "descriptor record " + std::to_string(i);
    r.fd = record.fd;
    r.flags = record.flags;
    r.stack_id = record.stack_id;
    r.mode = c.string(record.mode_size);
    r.description = c.string(record.description_size);
    if (r.fd < 0) c.fail(what + " has a negative fd");
    if (record.kind > result::ResourceKind::kLast) {
      c.fail(what + " has an unknown kind " + std::to_string(static_cast<int>(record.kind)));
    }
    r.kind = record.kind;
    const char* name = core::resource_call_name(record.call);
    if (name == nullptr) {
      c.fail(what + " has an unknown call " + std::to_string(static_cast<int>(record.call)));
    }
    r.call = name;
    if (record.stream > 1) c.fail(what + ": stream is not 0 or 1");
    r.stream = record.stream == 1;
    if (!r.stream && record.mode_size != 0) c.fail(what + " has a mode but is no stream");
    if (!file.stacks.contains(r.stack_id)) {
      c.fail(what + " refers to unknown stack " + std::to_string(r.stack_id));
    }
    file.resources.push_back(std::move(r));
  }
  c.expect_end();
}

// Section 11: the program's LeakSanitizer defaults, two length-prefixed strings.
void read_lsan(Cursor c, ResultFile& file) {
  for (std::string* text : {&file.lsan_default_options, &file.lsan_default_suppressions}) {
    uint32_t size = c.get<uint32_t>();
    if (size > result::kMaxLsanText)
      c.fail("text longer than " + std::to_string(result::kMaxLsanText) + " bytes");
    *text = c.string(size);
  }
  c.expect_end();
}

// Section 16: what the runtime could not see, a count and (kind, length-prefixed text) each.
void read_notes(Cursor c, ResultFile& file) {
  uint32_t count = c.get<uint32_t>();
  if (count > result::kMaxNotes)
    c.fail("more than " + std::to_string(result::kMaxNotes) + " notes");
  for (uint32_t i = 0; i < count; ++i) {
    auto kind = static_cast<result::NoteKind>(c.get<uint8_t>());
    uint32_t size = c.get<uint32_t>();
    if (size > result::kMaxNoteText) {
      c.fail("note longer than " + std::to_string(result::kMaxNoteText) + " bytes");
    }
    std::string text = c.string(size);
    if (kind == result::NoteKind::kMallocUnseen || kind == result::NoteKind::kAllocatorUnseen) {
      file.notes.push_back({kind, std::move(text)});
    }
  }
  c.expect_end();
}

const char* section_name(uint32_t type) {
  switch (static_cast<result::Section>(type)) {
    case result::Section::kProcess:
      return "process section";
    case result::Section::kStats:
      return "stats section";
    case result::Section::kModules:
      return "modules section";
    case result::Section::kStacks:
      return "stacks section";
    case result::Section::kLeaks:
      return "leaks section";
    case result::Section::kIndirect:
      return "indirect section";
    case result::Section::kErrors:
      return "errors section";
    case result::Section::kLive:
      return "live section";
    case result::Section::kResources:
      return "resources section";
    case result::Section::kCrash:
      return "crash section";
    case result::Section::kLsan:
      return "lsan section";
    case result::Section::kSampling:
      return "sampling section";
    case result::Section::kStackTotals:
      return "stack totals section";
    case result::Section::kRetention:
      return "retention section";
    case result::Section::kBlockRetention:
      return "block retention section";
    case result::Section::kNotes:
      return "notes section";
    case result::Section::kEnd:
      return "end section";
  }
  return "unknown section";
}

void read_header(std::span<const uint8_t> data, const std::string& name) {
  if (data.size() < result::kHeaderSize ||
      std::memcmp(data.data(), result::kMagic, sizeof(result::kMagic)) != 0) {
    throw Error(name + ": not a memtrack result file");
  }
  uint32_t version = 0;
  uint32_t header_size = 0;
  std::memcpy(&version, data.data() + 8, 4);
  std::memcpy(&header_size, data.data() + 12, 4);
  if (version != result::kVersion) {
    throw Error(name + ": result file version " + std::to_string(version) +
                " is not supported (this memtrack reads version " +
                std::to_string(result::kVersion) + ")");
  }
  if (header_size != result::kHeaderSize) {
    throw Error(name + ": corrupt result file (bad header size)");
  }
}

}  // namespace

ResultFile parse_result(std::span<const uint8_t> data, const std::string& name) {
  read_header(data, name);
  ResultFile file;
  file.path = name;
  file.version = result::kVersion;
  uint64_t pos = result::kHeaderSize;
  std::set<uint32_t> seen;
  // Sections are decoded in file order; the stacks section precedes the leaks and errors that
  // use it, and the leaks section the indirect section that refers to them.
  for (;;) {
    if (data.size() - pos < result::kSectionHeaderSize) {
      throw Error(name +
                  ": truncated result file (no end marker; the process may still be "
                  "running or was killed while writing)");
    }
    uint32_t type = 0;
    uint32_t reserved = 0;
    uint64_t size = 0;
    std::memcpy(&type, data.data() + pos, 4);
    std::memcpy(&reserved, data.data() + pos + 4, 4);
    std::memcpy(&size, data.data() + pos + 8, 8);
    if (reserved != 0) throw Error(name + ": corrupt result file (bad section header)");
    uint64_t payload = pos + result::kSectionHeaderSize;
    if (size > data.size() - payload) {
      throw Error(name + ": truncated result file (" + section_name(type) + " is cut off)");
    }
    Cursor c(data.subspan(payload, size), name, section_name(type));
    if (!seen.insert(type).second) c.fail("appears twice");
    if (type == static_cast<uint32_t>(result::Section::kEnd)) {
      uint64_t expected = c.get<uint64_t>();
      c.expect_end();
      if (expected != result::checksum_update(result::kChecksumSeed, data.data(), pos)) {
        throw Error(name + ": corrupt result file (checksum mismatch)");
      }
      if (payload + size != data.size()) c.fail("data after the end marker");
      break;
    }
    switch (static_cast<result::Section>(type)) {
      case result::Section::kProcess:
        read_process(c, file);
        break;
      case result::Section::kStats:
        read_stats(c, file);
        break;
      case result::Section::kModules:
        read_modules(c, file);
        break;
      case result::Section::kStacks:
        read_stacks(c, file);
        break;
      case result::Section::kLeaks:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_leaks(c, file);
        break;
      case result::Section::kIndirect:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kLeaks))) {
          c.fail("comes before the leaks section");
        }
        read_indirect(c, file);
        break;
      case result::Section::kErrors:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_errors(c, file);
        break;
      case result::Section::kLive:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_live(c, file);
        break;
      case result::Section::kResources:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_resources(c, file);
        break;
      case result::Section::kCrash:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_crash(c, file);
        break;
      case result::Section::kLsan:
        read_lsan(c, file);
        break;
      case result::Section::kSampling:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kLeaks)) &&
            !seen.contains(static_cast<uint32_t>(result::Section::kLive))) {
          c.fail("comes before the leaks or live section");
        }
        read_sampling(c, file);
        break;
      case result::Section::kStackTotals:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_stack_totals(c, file);
        break;
      case result::Section::kRetention:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_retention(c, file);
        break;
      case result::Section::kBlockRetention:
        if (!seen.contains(static_cast<uint32_t>(result::Section::kStacks))) {
          c.fail("comes before the stacks section");
        }
        read_block_retention(c, file);
        break;
      case result::Section::kNotes:
        read_notes(c, file);
        break;
      default:
        break;  // a section from a newer writer: skipped
    }
    pos = payload + size;
  }
  // A live report has a live section instead of the leaks section.
  auto leaks_or_live = file.live ? result::Section::kLive : result::Section::kLeaks;
  for (auto required : {result::Section::kProcess, result::Section::kStats,
                        result::Section::kModules, result::Section::kStacks, leaks_or_live}) {
    if (!seen.contains(static_cast<uint32_t>(required))) {
      throw Error(name + ": corrupt result file (" + section_name(static_cast<uint32_t>(required)) +
                  " missing)");
    }
  }
  return file;
}

ResultFile read_result_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open result file: " + std::strerror(errno));
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path + ": cannot read result file: " + std::strerror(errno));
  return parse_result(data, path);
}

std::vector<RawModule> parse_modules_section(std::span<const uint8_t> payload,
                                             const std::string& name) {
  ResultFile file;
  read_modules(Cursor(payload, name, "modules section"), file);
  return std::move(file.modules);
}

}  // namespace memtrack::report
