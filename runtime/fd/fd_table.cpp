// The descriptor table (see fd_table.h). Runtime-safe: no malloc, no libc.
#include "runtime/fd/fd_table.h"

#include "core/spin_lock.h"
#include "core/sys_linux.h"

namespace memtrack::rt {

namespace {
constexpr size_t kTableBytes = size_t{FdTable::kCapacity} * 32;  // at least sizeof(Entry)
}  // namespace

// A test-and-test-and-set lock on one entry. Held for a few stores: no call is made under it.
class FdTable::EntryLock {
 public:
  explicit EntryLock(Entry& entry) : entry_(entry) {
    for (int spins = 0; entry_.lock.exchange(1, std::memory_order_acquire) != 0;) {
      while (entry_.lock.load(std::memory_order_relaxed) != 0) {
        if (++spins > 64) {
          core::sys::yield_cpu();
          spins = 0;
        } else {
          core::cpu_relax();
        }
      }
    }
  }
  ~EntryLock() { entry_.lock.store(0, std::memory_order_release); }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  Entry& entry_;
};

FdTable::Entry* FdTable::entries_or_map() {
  Entry* entries = entries_.load(std::memory_order_acquire);
  if (entries != nullptr || map_failed_.load(std::memory_order_relaxed)) return entries;
  auto* fresh = static_cast<Entry*>(core::sys::reserve_pages(kTableBytes));
  if (fresh == nullptr) {
    map_failed_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  if (!entries_.compare_exchange_strong(entries, fresh, std::memory_order_acq_rel)) {
    core::sys::unmap_pages(fresh, kTableBytes);  // another thread mapped it first
    return entries;
  }
  return fresh;
}

namespace {

// Both under the entry's lock.
template <typename Entry>
void load(const Entry& entry, FdInfo* out) {
  out->call = static_cast<core::result::ResourceCall>(entry.call);
  out->stack_id = entry.stack_id;
  out->flags = entry.flags;
  for (uint32_t i = 0; i < core::result::kMaxStreamModeSize; ++i) out->mode[i] = entry.mode[i];
  out->mode[core::result::kMaxStreamModeSize] = '\0';
  out->stream_object = entry.stream_object;
  out->stream_size = entry.stream_size;
}

template <typename Entry>
void store(const FdInfo& info, Entry* entry) {
  entry->call = static_cast<uint8_t>(info.call);
  entry->stack_id = info.stack_id;
  entry->flags = info.flags;
  for (uint32_t i = 0; i < core::result::kMaxStreamModeSize; ++i) entry->mode[i] = info.mode[i];
  entry->stream_object = info.stream_object;
  entry->stream_size = info.stream_size;
}

}  // namespace

bool FdTable::copy_entry(Entry& entry, FdInfo* out) {
  EntryLock lock(entry);
  if (entry.call == 0) return false;
  load(entry, out);
  return true;
}

bool FdTable::record(int fd, const FdInfo& info) {
  if (fd < 0) return false;
  Entry* entries = fd < kCapacity ? entries_or_map() : nullptr;
  if (entries == nullptr) {
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  {
    Entry& entry = entries[fd];
    EntryLock lock(entry);
    store(info, &entry);
  }
  int seen = high_water_.load(std::memory_order_relaxed);
  while (seen <= fd &&
         !high_water_.compare_exchange_weak(seen, fd + 1, std::memory_order_release)) {
  }
  return true;
}

bool FdTable::erase(int fd, FdInfo* out) {
  Entry* entries = entries_.load(std::memory_order_acquire);
  if (entries == nullptr || fd < 0 || fd >= kCapacity) return false;
  Entry& entry = entries[fd];
  EntryLock lock(entry);
  if (entry.call == 0) return false;
  if (out != nullptr) load(entry, out);
  entry.call = 0;
  return true;
}

bool FdTable::restore(int fd, const FdInfo& info) {
  Entry* entries = entries_.load(std::memory_order_acquire);
  if (entries == nullptr || fd < 0 || fd >= kCapacity) return false;
  {
    Entry& entry = entries[fd];
    EntryLock lock(entry);
    if (entry.call != 0) return false;
  }
  return record(fd, info);  // a record slipping in between is no worse than the race itself
}

bool FdTable::lookup(int fd, FdInfo* out) {
  Entry* entries = entries_.load(std::memory_order_acquire);
  if (entries == nullptr || fd < 0 || fd >= kCapacity) return false;
  return copy_entry(entries[fd], out);
}

void FdTable::erase_range(unsigned first, unsigned last) {
  Entry* entries = entries_.load(std::memory_order_acquire);
  if (entries == nullptr || first > last) return;
  unsigned end = static_cast<unsigned>(high_water_.load(std::memory_order_acquire));
  if (last >= end) last = end - 1;  // end is at least 1 once entries exist
  for (unsigned fd = first; fd <= last && fd < end; ++fd) {
    Entry& entry = entries[fd];
    EntryLock lock(entry);
    entry.call = 0;
  }
}

void FdTable::reset_after_fork() {
  Entry* entries = entries_.load(std::memory_order_relaxed);
  if (entries == nullptr) return;
  int end = high_water_.load(std::memory_order_relaxed);
  for (int fd = 0; fd < end; ++fd) entries[fd].lock.store(0, std::memory_order_relaxed);
}

void FdTable::test_only_reset() {
  Entry* entries = entries_.exchange(nullptr);
  if (entries != nullptr) core::sys::unmap_pages(entries, kTableBytes);
  high_water_.store(0);
  map_failed_.store(false);
  untracked_.store(0);
}

}  // namespace memtrack::rt
