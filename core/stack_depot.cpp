// Stack depot: deduplicated frames with 32-bit ids. Runtime-safe: mmap only.
#include "core/stack_depot.h"

#include "core/metadata_budget.h"
#include "core/text_buffer.h"

namespace memtrack::core {

bool StackDepot::ensure_buckets() {
  if (buckets_.load(std::memory_order_acquire) != nullptr) return true;
  SpinLockGuard guard(setup_lock_);
  if (buckets_.load(std::memory_order_relaxed) != nullptr) return true;
  size_t bytes = kBucketCount * sizeof(std::atomic<const Node*>);
  // Zeroed pages are valid null atomics; pages are only touched when a bucket is used.
  void* mem = map_metadata(bytes);
  if (mem == nullptr) return false;
  mapped_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  buckets_.store(static_cast<std::atomic<const Node*>*>(mem), std::memory_order_release);
  return true;
}

const StackDepot::Node* StackDepot::find(uint64_t hash, const uintptr_t* frames,
                                         uint32_t size) const {
  std::atomic<const Node*>* buckets = buckets_.load(std::memory_order_acquire);
  for (const Node* node = buckets[hash & (kBucketCount - 1)].load(std::memory_order_acquire);
       node != nullptr; node = node->next) {
    if (node->hash != hash || node->size != size) continue;
    uint32_t i = 0;
    while (i < size && node->frames[i] == frames[i]) ++i;
    if (i == size) return node;
  }
  return nullptr;
}

StackDepot::Node* StackDepot::allocate_node_locked(uint32_t size) {
  size_t bytes = sizeof(Node) + (size > 0 ? size - 1 : 0) * sizeof(uintptr_t);
  bytes = (bytes + 15) & ~size_t{15};
  if (bytes > chunk_left_) {
    size_t chunk = bytes > kChunkBytes ? bytes : kChunkBytes;
    void* mem = map_metadata(chunk);
    if (mem == nullptr) return nullptr;
    mapped_bytes_.fetch_add(chunk, std::memory_order_relaxed);
    chunk_cursor_ = static_cast<char*>(mem);
    chunk_left_ = chunk;
  }
  auto* node = reinterpret_cast<Node*>(chunk_cursor_);
  chunk_cursor_ += bytes;
  chunk_left_ -= bytes;
  return node;
}

bool StackDepot::register_id_locked(Node* node) {
  uint32_t index = count_.load(std::memory_order_relaxed);
  if (index >= kMaxStacks) return false;
  std::atomic<const Node**>& block = id_blocks_[index >> kIdBlockBits];
  const Node** entries = block.load(std::memory_order_relaxed);
  if (entries == nullptr) {
    size_t bytes = kIdBlockSize * sizeof(const Node*);
    entries = static_cast<const Node**>(map_metadata(bytes));
    if (entries == nullptr) return false;
    mapped_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    block.store(entries, std::memory_order_release);
  }
  node->id = index + 1;
  entries[index & (kIdBlockSize - 1)] = node;
  count_.store(index + 1, std::memory_order_release);
  return true;
}

uint32_t StackDepot::intern(const uintptr_t* frames, uint32_t size) {
  return intern_hashed(frames, size, hash_frames(frames, size));
}

uint32_t StackDepot::intern_hashed(const uintptr_t* frames, uint32_t size, uint64_t hash) {
  if (!ensure_buckets()) return kInvalidId;
  if (const Node* known = find(hash, frames, size)) return known->id;

  SpinLockGuard stripe_guard(stripes_[hash % kStripeCount]);
  if (const Node* known = find(hash, frames, size)) return known->id;  // lost a race
  Node* node = nullptr;
  {
    SpinLockGuard storage_guard(storage_lock_);
    node = allocate_node_locked(size);
    if (node == nullptr) return kInvalidId;
    node->hash = hash;
    node->size = size;
    copy_bytes(node->frames, frames, size * sizeof(uintptr_t));
    if (!register_id_locked(node)) return kInvalidId;  // node memory is simply abandoned
  }
  std::atomic<const Node*>& head =
      buckets_.load(std::memory_order_relaxed)[hash & (kBucketCount - 1)];
  node->next = head.load(std::memory_order_relaxed);
  head.store(node, std::memory_order_release);
  return node->id;
}

StackView StackDepot::get(uint32_t id) const {
  if (id == kInvalidId || id > count_.load(std::memory_order_acquire)) return {};
  uint32_t index = id - 1;
  const Node** entries = id_blocks_[index >> kIdBlockBits].load(std::memory_order_acquire);
  if (entries == nullptr) return {};
  const Node* node = entries[index & (kIdBlockSize - 1)];
  return StackView{node->frames, node->size};
}

void StackDepot::lock_all() {
  setup_lock_.lock();
  for (SpinLock& stripe : stripes_) stripe.lock();
  storage_lock_.lock();
}

void StackDepot::unlock_all() {
  storage_lock_.unlock();
  for (SpinLock& stripe : stripes_) stripe.unlock();
  setup_lock_.unlock();
}

void StackDepot::reset_after_fork() {
  storage_lock_.reset_after_fork();
  for (SpinLock& stripe : stripes_) stripe.reset_after_fork();
  setup_lock_.reset_after_fork();
}

}  // namespace memtrack::core
