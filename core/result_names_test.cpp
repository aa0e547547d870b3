// Unit tests for the names and wording of the result file's enumerations.
// Test-only code.
#include "core/result_names.h"

#include <gtest/gtest.h>

namespace memtrack::core {
namespace {

using result::AllocCall;
using result::ErrorKind;
using result::ErrorWhere;
using result::FreeCall;
using result::LeakKind;

TEST(ResultNamesTest, LeakKindsAsStored) {
  EXPECT_STREQ(leak_kind_name(LeakKind::kDefinite), "definite");
  EXPECT_STREQ(leak_kind_name(LeakKind::kIndirect), "indirect");
  EXPECT_STREQ(leak_kind_name(LeakKind::kPossible), "possible");
  EXPECT_STREQ(leak_kind_name(LeakKind::kReachable), "reachable");
  EXPECT_STREQ(leak_kind_name(LeakKind::kUnclassified), "unclassified");
  EXPECT_EQ(leak_kind_name(static_cast<LeakKind>(5)), nullptr);
  // The stored byte (docs/format.md, section 5).
  EXPECT_EQ(static_cast<int>(LeakKind::kDefinite), 0);
  EXPECT_EQ(static_cast<int>(LeakKind::kUnclassified), 4);
}

TEST(ResultNamesTest, LeakKindPhrases) {
  EXPECT_STREQ(leak_kind_phrase(LeakKind::kDefinite), "definitely lost");
  EXPECT_STREQ(leak_kind_phrase(LeakKind::kIndirect), "indirectly lost");
  EXPECT_STREQ(leak_kind_phrase(LeakKind::kPossible), "possibly lost");
  EXPECT_STREQ(leak_kind_phrase(LeakKind::kReachable), "still reachable");
  EXPECT_STREQ(leak_kind_phrase(LeakKind::kUnclassified), "unfreed at exit");
  EXPECT_STREQ(leak_kind_phrase(static_cast<LeakKind>(200)), "unfreed at exit");
}

TEST(ResultNamesTest, ErrorFieldsKnowExactlyTheStoredValues) {
  EXPECT_STREQ(error_kind_name(ErrorKind::kDoubleFree), "double_free");
  EXPECT_STREQ(error_kind_name(ErrorKind::kReallocAfterFree), "realloc_after_free");
  EXPECT_EQ(error_kind_name(static_cast<ErrorKind>(0)), nullptr);
  EXPECT_STREQ(error_kind_name(ErrorKind::kInvalidRead), "invalid_read");
  EXPECT_STREQ(error_kind_name(ErrorKind::kInvalidWrite), "invalid_write");
  EXPECT_STREQ(error_kind_name(ErrorKind::kWriteOutsideBlock), "write_outside_block");
  EXPECT_STREQ(error_kind_name(ErrorKind::kWriteAfterFree), "write_after_free");
  EXPECT_EQ(error_kind_name(static_cast<ErrorKind>(9)), nullptr);
  EXPECT_FALSE(is_heap_error(ErrorKind::kDoubleFree));
  EXPECT_TRUE(is_heap_error(ErrorKind::kWriteAfterFree));
  EXPECT_TRUE(error_has_own_stack(ErrorKind::kInvalidWrite, 1));
  EXPECT_FALSE(error_has_own_stack(ErrorKind::kWriteOutsideBlock, 1));
  EXPECT_TRUE(error_has_own_stack(ErrorKind::kWriteOutsideBlock, 0));
  EXPECT_FALSE(error_has_own_stack(ErrorKind::kWriteAfterFree, 0));
  EXPECT_STREQ(error_where_name(ErrorWhere::kGlobal), "global");
  EXPECT_EQ(error_where_name(static_cast<ErrorWhere>(4)), nullptr);
  EXPECT_STREQ(alloc_call_name(AllocCall::kNewArray), "new[]");
  EXPECT_STREQ(alloc_call_name(AllocCall::kNone), "none");
  EXPECT_EQ(alloc_call_name(static_cast<AllocCall>(3)), nullptr);
  EXPECT_STREQ(free_call_name(FreeCall::kDeleteArray), "delete[]");
  EXPECT_EQ(free_call_name(static_cast<FreeCall>(4)), nullptr);
}

}  // namespace
}  // namespace memtrack::core
