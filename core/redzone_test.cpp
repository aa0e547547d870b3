#include "core/redzone.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace memtrack::core::redzone {
namespace {

// A chunk of `bytes` at a 4 KiB boundary, as the heap's are aligned.
struct Chunk {
  explicit Chunk(size_t bytes) : size(bytes), storage(bytes + 4096) {
    base = (reinterpret_cast<uintptr_t>(storage.data()) + 4095) & ~uintptr_t{4095};
  }
  size_t size;
  std::vector<uint8_t> storage;
  uintptr_t base;
};

TEST(Redzone, LayoutAndAlignment) {
  EXPECT_EQ(chunk_bytes(16, 0), 16 + kFrontMin + kRearMin);
  EXPECT_EQ(chunk_bytes(16, 256), 16 + 256 + kRearMin);
  EXPECT_EQ(chunk_bytes(SIZE_MAX - 8, 0), 0u);
  for (size_t alignment : {0, 16, 32, 64, 256}) {
    Chunk c(chunk_bytes(40, alignment) + 8);
    uintptr_t p = place(c.base, c.size, 40, alignment);
    EXPECT_EQ(p % (alignment == 0 ? 16 : alignment), 0u) << alignment;
    EXPECT_TRUE(fits(c.base, c.size, p));
    EXPECT_FALSE(fits(c.base, c.size, p + 8));  // not where a block starts
    EXPECT_EQ(header(c.base)->size, 40u);
    EXPECT_EQ(first_changed_edge(c.base, c.size, p), 0u);
  }
}

TEST(Redzone, AnOverflowAndAnUnderflowAreFoundNearestTheBlock) {
  Chunk c(128);
  uintptr_t p = place(c.base, c.size, 13, 0);  // an odd size: the slack is pattern too
  memset(reinterpret_cast<void*>(p), 0, 13);
  EXPECT_EQ(first_changed_edge(c.base, c.size, p), 0u);
  reinterpret_cast<uint8_t*>(p)[13] = 1;  // overflow by one
  EXPECT_EQ(first_changed_edge(c.base, c.size, p), p + 13);
  reinterpret_cast<uint8_t*>(p)[13] = kEdgeByte;
  reinterpret_cast<uint8_t*>(p)[-3] = 1;
  reinterpret_cast<uint8_t*>(p)[-9] = 1;
  EXPECT_EQ(first_changed_edge(c.base, c.size, p), p - 3);  // the nearer of the two
  reinterpret_cast<uint8_t*>(c.base + c.size)[-1] = 1;      // the chunk's last byte
  EXPECT_EQ(first_changed_edge(c.base, c.size, p), c.base + c.size - 1);
}

TEST(Redzone, AnOverwrittenHeaderNoLongerFits) {
  Chunk c(64);
  uintptr_t p = place(c.base, c.size, 16, 0);
  header(c.base)->size = 1000;
  EXPECT_FALSE(fits(c.base, c.size, p));
}

TEST(Redzone, AWriteAfterTheFreeIsFound) {
  Chunk c(256);
  uintptr_t p = place(c.base, c.size, 100, 0);
  fill_freed(p, 100);
  EXPECT_EQ(first_changed_freed(p, 100), 0u);
  reinterpret_cast<uint8_t*>(p)[57] = 0;
  EXPECT_EQ(first_changed_freed(p, 100), p + 57);
}

}  // namespace
}  // namespace memtrack::core::redzone
