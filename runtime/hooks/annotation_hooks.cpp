// The program's own allocators, as it declares them (leakcheck/custom_blocks.h): memtrack's
// annotation call (include/memtrack/memtrack.h, memtrack_rt_annotate), which the valgrind
// compatibility header (include/memtrack/compat/valgrind/memcheck.h) maps its macros onto,
// and heaptrack's (heaptrack_api.h calls heaptrack_malloc, heaptrack_realloc and
// heaptrack_free when they are defined: here), so a program annotated for heaptrack is seen
// without a rebuild. A block's stack is the annotating call's. Never mallocs.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/text_buffer.h"
#include "runtime/diag.h"
#include "runtime/hooks/entry.h"
#include "runtime/hooks/export.h"
#include "runtime/hooks/lsan_interface.h"
#include "runtime/leakcheck/custom_blocks.h"
#include "runtime/record/record.h"
#include "runtime/runtime.h"

namespace rt = memtrack::rt;

namespace {

// The requests of memtrack_rt_annotate: memtrack.h's MEMTRACK_ANNOTATE_* values, its ABI.
enum Request : int {
  kMalloclike = 1,
  kFreelike = 2,
  kResize = 3,
  kCreatePool = 4,
  kDestroyPool = 5,
  kPoolAlloc = 6,
  kPoolFree = 7,
  kPoolTrim = 8,
  kMovePool = 9,
  kPoolChange = 10,
  kRegisterRootRegion = 11,
  kUnregisterRootRegion = 12,
  kPoolExists = 13,
};
constexpr int kRequests = 14;

const char* request_name(int request) {
  static const char* const kNames[kRequests] = {"?",
                                                "memtrack_malloclike_block",
                                                "memtrack_freelike_block",
                                                "memtrack_resize_block",
                                                "memtrack_create_pool",
                                                "memtrack_destroy_pool",
                                                "memtrack_pool_alloc",
                                                "memtrack_pool_free",
                                                "memtrack_pool_trim",
                                                "memtrack_move_pool",
                                                "memtrack_pool_change",
                                                "memtrack_register_root_region",
                                                "memtrack_unregister_root_region",
                                                "memtrack_pool_exists"};
  return request > 0 && request < kRequests ? kNames[request] : "memtrack_rt_annotate";
}

// One warning per request that went wrong, the first time: a pool allocator that gets one
// wrong usually gets it wrong on every call.
std::atomic<bool> g_warned[kRequests + 1];

void warn_once(int request, const char* what, uintptr_t address) {
  int index = request > 0 && request < kRequests ? request : kRequests;
  if (g_warned[index].exchange(true, std::memory_order_relaxed)) return;
  memtrack::core::FixedText<256> line;
  line.str("warning: ").str(request_name(request)).str(": ").str(what);
  if (address != 0) line.str(" (").hex(address).str(")");
  line.str("; ignored (said once)");
  rt::diag(line.data());
}

uintptr_t address_of(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

// A new block's stack: the annotating call's, from `frame` (the exported hook's). 0 where the
// thread is inside the runtime.
uint32_t stack_of_call(uintptr_t frame) {
  if (rt::in_runtime()) return 0;
  return rt::capture_allocation_stack(frame);
}

long annotate(int request, const void* pool, const void* addr, size_t size, const void* other,
              uintptr_t frame) {
  if (!rt::initialized() || (rt::kAttachRuntime && !rt::attached())) return 0;
  uint32_t stack = 0;
  if (request == kMalloclike || request == kPoolAlloc) stack = stack_of_call(frame);
  rt::RuntimeScope scope;
  switch (request) {
    case kMalloclike:
    case kPoolAlloc:
      if (!rt::add_custom_block(address_of(addr), size,
                                request == kPoolAlloc ? address_of(pool) : 0, stack)) {
        warn_once(request,
                  "a block at an address that is 0 or not a multiple of 8, or no memory to "
                  "record it: it is not tracked",
                  address_of(addr));
        return -1;
      }
      return 0;
    case kFreelike:
    case kPoolFree:
      if (addr == nullptr) return 0;
      if (!rt::remove_custom_block(address_of(addr))) {
        warn_once(request, "no block of the program's allocator starts here", address_of(addr));
        return -1;
      }
      return 0;
    case kResize:
      if (!rt::resize_custom_block(address_of(addr), size)) {
        warn_once(request, "no block of the program's allocator starts here", address_of(addr));
        return -1;
      }
      return 0;
    case kPoolChange:
      if (!rt::move_custom_block(address_of(addr), address_of(other), size)) {
        warn_once(request, "no block of the program's allocator starts here", address_of(addr));
        return -1;
      }
      return 0;
    case kCreatePool:
      if (!rt::create_custom_pool(address_of(pool))) {
        warn_once(request, "too many pools: the blocks of this one are not tracked", 0);
        return -1;
      }
      return 0;
    case kDestroyPool:
    case kPoolTrim: {
      long n = request == kDestroyPool
                   ? rt::destroy_custom_pool(address_of(pool))
                   : rt::trim_custom_pool(address_of(pool), address_of(addr), size);
      if (n < 0) warn_once(request, "no such pool", address_of(pool));
      return n;
    }
    case kMovePool:
      if (!rt::move_custom_pool(address_of(pool), address_of(other))) {
        warn_once(request, "no such pool, or the new name is a pool's already", address_of(pool));
        return -1;
      }
      return 0;
    case kRegisterRootRegion:
      rt::register_root_region_from(request_name(request), address_of(addr), size);
      return 0;
    case kUnregisterRootRegion:
      rt::unregister_root_region_from(request_name(request), address_of(addr), size);
      return 0;
    case kPoolExists:
      return rt::custom_pool_exists(address_of(pool)) ? 1 : 0;
    default:
      warn_once(request, "unknown request (a newer memtrack.h than this runtime?)", 0);
      return -1;
  }
}

}  // namespace

MEMTRACK_EXPORT_C __attribute__((noinline)) long memtrack_rt_annotate(int request, const void* pool,
                                                                      const void* addr, size_t size,
                                                                      const void* other) {
  return annotate(request, pool, addr, size, other, MEMTRACK_HOOK_FRAME);
}

// heaptrack_api.h (libheaptrack): heaptrack_report_alloc, _realloc and _free.
MEMTRACK_EXPORT_C __attribute__((noinline)) void heaptrack_malloc(void* ptr, size_t size) {
  annotate(kMalloclike, nullptr, ptr, size, nullptr, MEMTRACK_HOOK_FRAME);
}

MEMTRACK_EXPORT_C __attribute__((noinline)) void heaptrack_realloc(void* ptr_in, size_t size,
                                                                   void* ptr_out) {
  // heaptrack's meaning: ptr_in (null for none) was resized into ptr_out, which has the
  // stack of this call, as a new block of realloc's would.
  if (ptr_in != nullptr) annotate(kFreelike, nullptr, ptr_in, 0, nullptr, MEMTRACK_HOOK_FRAME);
  annotate(kMalloclike, nullptr, ptr_out, size, nullptr, MEMTRACK_HOOK_FRAME);
}

MEMTRACK_EXPORT_C __attribute__((noinline)) void heaptrack_free(void* ptr) {
  if (ptr != nullptr) annotate(kFreelike, nullptr, ptr, 0, nullptr, MEMTRACK_HOOK_FRAME);
}
