// The guard pool (guard_pool.h). Runtime-safe: memory from mmap, mprotect through sys_linux.
#include "core/guard_pool.h"

#include <new>

#include "core/byte_pattern.h"
#include "core/sampling.h"
#include "core/sys_linux.h"

namespace memtrack::core {
namespace {

// A block's alignment when the call asked for none: the largest power of two dividing its
// size, from 8 to 16. An object of that size cannot need more (its size is a multiple of its
// alignment); anything coarser would leave bytes between the block's end and the guard page,
// which only the free's check sees. 8 at least, because the allocation table records
// addresses in units of 8 (core/alloc_table.h): a block whose size is no multiple of 8
// ends up to 7 bytes before the guard page.
size_t natural_alignment(size_t size) {
  if (size == 0) return 16;
  size_t low = size & (~size + 1);
  return low < 8 ? 8 : low < 16 ? low : 16;
}

}  // namespace

bool GuardPool::init(size_t slots, size_t page, GuardSide side, uint64_t seed) {
  if (slots == 0 || page == 0 || (page & (page - 1)) != 0 || slots > UINT32_MAX / 4) return false;
  size_t span = (2 * slots + 1) * page;
  void* area = sys::reserve_address_space(span, page);
  if (area == nullptr) return false;
  size_t meta = slots * sizeof(Slot) + slots * sizeof(uint32_t);
  void* memory = sys::map_pages(meta);
  if (memory == nullptr) {
    sys::unmap_pages(area, span);
    return false;
  }
  slots_ = static_cast<Slot*>(memory);
  for (size_t i = 0; i < slots; ++i) new (&slots_[i]) Slot();
  queue_ = reinterpret_cast<uint32_t*>(static_cast<char*>(memory) + slots * sizeof(Slot));
  for (size_t i = 0; i < slots; ++i) queue_[i] = static_cast<uint32_t>(i);
  queue_head_ = 0;
  queue_count_ = slots;
  slots_count_ = slots;
  page_ = page;
  side_ = side;
  uint64_t state = seed;
  rng_ = split_mix64(state) | 1;
  base_ = reinterpret_cast<uintptr_t>(area);
  span_ = span;
  return true;
}

bool GuardPool::next_at_end() {
  switch (side_) {
    case GuardSide::kEnd:
      return true;
    case GuardSide::kStart:
      return false;
    case GuardSide::kRandom:
      break;
  }
  return (xorshift64_star(rng_) >> 63) != 0;
}

uint32_t GuardPool::pop_slot() {
  while (queue_count_ > 0) {
    uint32_t index = queue_[queue_head_];
    queue_head_ = (queue_head_ + 1) % slots_count_;
    --queue_count_;
    if (!slots_[index].retired.load(std::memory_order_relaxed)) return index;
  }
  return kNone;
}

uintptr_t GuardPool::allocate(size_t size, size_t alignment, uint32_t alloc_stack, uint32_t tid) {
  if (!enabled() || size > page_) return 0;
  if (alignment == 0) alignment = natural_alignment(size);
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  if ((alignment & (alignment - 1)) != 0 || alignment > page_) return 0;
  uint32_t index = kNone;
  bool at_end = true;
  {
    SpinLockGuard guard(lock_);
    index = pop_slot();
    at_end = next_at_end();
  }
  if (index == kNone) {
    pool_full_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  uintptr_t page = page_of_slot(index);
  if (!sys::commit_pages(reinterpret_cast<void*>(page), page_)) {
    SpinLockGuard guard(lock_);  // back to the front: the slot is as it was
    queue_head_ = (queue_head_ + slots_count_ - 1) % slots_count_;
    queue_[queue_head_] = index;
    ++queue_count_;
    return 0;
  }
  fill_pattern(page, page + page_, kGuardPattern);
  // A zero-byte block still gets a byte of its page: its pointer must be unique, and its own.
  size_t placed_size = size == 0 ? 1 : size;
  uintptr_t start = at_end ? (page + page_ - placed_size) & ~(uintptr_t{alignment} - 1) : page;
  Slot& s = slots_[index];
  s.edge_reported = false;
  s.alloc_stack = alloc_stack;
  s.free_stack = 0;
  s.alloc_tid = tid;
  s.free_tid = 0;
  s.start = start;
  s.size = size;
  s.state.store(SlotState::kLive, std::memory_order_release);
  placed_.fetch_add(1, std::memory_order_relaxed);
  return start;
}

void GuardPool::set_alloc_stack(uintptr_t address, uint32_t stack_id) {
  if (const Slot* s = live_block(address)) const_cast<Slot*>(s)->alloc_stack = stack_id;
}

const GuardPool::Slot* GuardPool::live_block(uintptr_t address) const {
  if (!owns(address)) return nullptr;
  size_t page_index = (address - base_) / page_;
  if ((page_index & 1) == 0) return nullptr;  // a guard page
  const Slot& s = slots_[page_index / 2];
  if (s.state.load(std::memory_order_acquire) != SlotState::kLive || s.start != address) {
    return nullptr;
  }
  return &s;
}

uintptr_t GuardPool::first_changed_byte(const Slot& s) const {
  uintptr_t page = s.start & ~(uintptr_t{page_} - 1);
  uintptr_t changed = first_not_pattern(page, s.start, kGuardPattern);
  if (changed != 0) return changed;
  return first_not_pattern(s.start + s.size, page + page_, kGuardPattern);
}

GuardPool::FreeResult GuardPool::free(uintptr_t address, uint32_t free_stack, uint32_t tid,
                                      uintptr_t* first_changed, const Slot** slot_out) {
  *first_changed = 0;
  *slot_out = nullptr;
  if (!owns(address)) return FreeResult::kNotLive;
  size_t index = (address - base_) / page_ / 2;
  Slot& s = slots_[index];
  {
    SpinLockGuard guard(lock_);  // two threads freeing one block: one of them frees it
    if (live_block(address) != &s) return FreeResult::kNotLive;
    s.state.store(SlotState::kFreed, std::memory_order_release);
  }
  *slot_out = &s;
  *first_changed = first_changed_byte(s);
  s.free_stack = free_stack;
  s.free_tid = tid;
  uintptr_t page = page_of_slot(index);
  bool is_protected = sys::protect_pages(reinterpret_cast<void*>(page), page_);
  SpinLockGuard guard(lock_);
  // A page left accessible cannot catch a use after free: its slot is not used again.
  if (!is_protected) s.retired.store(true, std::memory_order_relaxed);
  queue_[(queue_head_ + queue_count_) % slots_count_] = static_cast<uint32_t>(index);
  ++queue_count_;
  return FreeResult::kFreed;
}

GuardPool::Culprit GuardPool::locate(uintptr_t address) const {
  Culprit c;
  if (!owns(address)) return c;
  size_t page_index = (address - base_) / page_;
  if ((page_index & 1) != 0) {
    c.index = page_index / 2;
    if (slots_[c.index].state.load(std::memory_order_acquire) != SlotState::kUnused) {
      c.slot = &slots_[c.index];
    }
    return c;
  }
  // A guard page: between slot page_index/2 - 1 (its block ends before) and page_index/2.
  c.in_guard_page = true;
  const Slot* left = nullptr;
  const Slot* right = nullptr;
  size_t right_index = page_index / 2;
  if (page_index > 0 &&
      slots_[right_index - 1].state.load(std::memory_order_acquire) != SlotState::kUnused) {
    left = &slots_[right_index - 1];
  }
  if (right_index < slots_count_ &&
      slots_[right_index].state.load(std::memory_order_acquire) != SlotState::kUnused) {
    right = &slots_[right_index];
  }
  if (left != nullptr && right != nullptr) {
    uintptr_t past_left = address - (left->start + left->size);
    uintptr_t before_right = right->start - address;
    if (past_left <= before_right) {
      right = nullptr;
    } else {
      left = nullptr;
    }
  }
  if (left != nullptr) {
    c.slot = left;
    c.index = right_index - 1;
  } else if (right != nullptr) {
    c.slot = right;
    c.index = right_index;
  }
  return c;
}

bool GuardPool::open_page_of(uintptr_t address) {
  if (!owns(address)) return false;
  size_t page_index = (address - base_) / page_;
  auto* page = reinterpret_cast<void*>(base_ + page_index * page_);
  if (!sys::commit_pages(page, page_)) return false;
  // Retired slots leave the queue when they come up (pop_slot); no lock here, as the
  // handler may have interrupted a thread holding it: a plain store that pop_slot reads.
  if ((page_index & 1) != 0) {
    slots_[page_index / 2].retired.store(true, std::memory_order_relaxed);
  } else {
    if (page_index > 0) slots_[page_index / 2 - 1].retired.store(true, std::memory_order_relaxed);
    if (page_index / 2 < slots_count_) {
      slots_[page_index / 2].retired.store(true, std::memory_order_relaxed);
    }
  }
  return true;
}

}  // namespace memtrack::core
