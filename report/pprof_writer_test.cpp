// Tests of the pprof profile builder (report/pprof_writer.h), decoded with libprotobuf; the
// CLI tests read the profiles with go tool pprof itself.
#include "report/pprof_writer.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "report/pprof_testing.h"
#include "report/test_fixtures.h"

namespace memtrack::report {
namespace {

using testing::debug_frame;
using testing::decode_profile;
using testing::function_of;
using testing::location_of;
using testing::text_of;

RawModule leaky_module() {
  RawModule m;
  m.path = "/work/build/leaky";
  m.load_bias = 0x555555554000;
  m.start = 0x555555554000;
  m.end = 0x555555559000;
  m.build_id = {0xde, 0xad, 0x01, 0xf0};
  return m;
}

// read_config inlined into main through inline_helper: three frames, two addresses.
std::vector<Frame> inlined_stack() {
  return {debug_frame(0x5555555552fb, "read_config", "examples/leaky.c", 37, 45),
          debug_frame(0x555555555093, "inline_helper", "examples/leaky.c", 30, 3, true),
          debug_frame(0x555555555093, "main", "examples/leaky.c", 55, 18)};
}

TEST(PprofWriter, SampleTypesStringsAndDefault) {
  ProfileBuilder builder({{"alloc_objects", "count"}, {"alloc_space", "bytes"}}, "alloc_space");
  builder.add_comment("memtrack 1.2.3");
  auto p = decode_profile(builder.gzipped());
  ASSERT_GE(p.string_table_size(), 1);
  EXPECT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(text_of(p, p.sample_type(0).type()), "alloc_objects");
  EXPECT_EQ(text_of(p, p.sample_type(0).unit()), "count");
  EXPECT_EQ(text_of(p, p.sample_type(1).type()), "alloc_space");
  EXPECT_EQ(text_of(p, p.sample_type(1).unit()), "bytes");
  EXPECT_EQ(text_of(p, p.default_sample_type()), "alloc_space");
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_EQ(text_of(p, p.comment(0)), "memtrack 1.2.3");
}

TEST(PprofWriter, InlinedFramesShareOneLocationInnermostFirst) {
  ProfileBuilder builder({{"leaked_space", "bytes"}}, "");
  builder.add_address_space(7, {leaky_module()});
  builder.add_sample(7, inlined_stack(), {4096}, {ProfileLabel::text("kind", "definite")});
  auto p = decode_profile(builder.gzipped());
  ASSERT_EQ(p.sample_size(), 1);
  const auto& sample = p.sample(0);
  ASSERT_EQ(sample.location_id_size(), 2);
  EXPECT_EQ(sample.value(0), 4096);
  const auto& leaf = location_of(p, sample.location_id(0));
  EXPECT_EQ(leaf.address(), 0x5555555552fau);  // the call instruction: return address - 1
  ASSERT_EQ(leaf.line_size(), 1);
  EXPECT_EQ(text_of(p, function_of(p, leaf.line(0).function_id()).name()), "read_config");
  EXPECT_EQ(leaf.line(0).line(), 37);
  EXPECT_EQ(leaf.line(0).column(), 45);
  const auto& caller = location_of(p, sample.location_id(1));
  ASSERT_EQ(caller.line_size(), 2);
  EXPECT_EQ(text_of(p, function_of(p, caller.line(0).function_id()).name()), "inline_helper");
  EXPECT_EQ(caller.line(0).line(), 30);
  EXPECT_EQ(text_of(p, function_of(p, caller.line(1).function_id()).name()), "main");
  EXPECT_EQ(caller.line(1).line(), 55);
  const auto& main_function = function_of(p, caller.line(1).function_id());
  EXPECT_EQ(text_of(p, main_function.filename()), "examples/leaky.c");
  EXPECT_EQ(text_of(p, main_function.system_name()), "main");
  EXPECT_EQ(testing::label_of(p, sample, "kind"), "definite");
}

TEST(PprofWriter, MappingsCarryRangeBuildIdAndWhatIsKnown) {
  ProfileBuilder builder({{"leaked_space", "bytes"}}, "");
  builder.add_address_space(7, {leaky_module()});
  builder.add_sample(7, inlined_stack(), {1}, {});
  // A libc frame without debug info and one in no module at all.
  builder.add_sample(7,
                     {testing::symbol_frame(0x7ffff7dd21ca, testing::kLibc, 0x271ca, "start"),
                      testing::symbol_frame(0x7ffff7ebd8ec, "", 0, "")},
                     {2}, {});
  auto p = decode_profile(builder.gzipped());
  ASSERT_EQ(p.mapping_size(), 2);
  const auto& leaky = p.mapping(0);
  EXPECT_EQ(leaky.id(), 1u);
  EXPECT_EQ(text_of(p, leaky.filename()), "/work/build/leaky");
  EXPECT_EQ(leaky.memory_start(), 0x555555554000u);
  EXPECT_EQ(leaky.memory_limit(), 0x555555559000u);
  EXPECT_EQ(text_of(p, leaky.build_id()), "dead01f0");
  EXPECT_TRUE(leaky.has_functions() && leaky.has_filenames() && leaky.has_line_numbers() &&
              leaky.has_inline_frames());
  const auto& libc = p.mapping(1);  // outside the space's modules: a path-only mapping
  EXPECT_EQ(text_of(p, libc.filename()), testing::kLibc);
  EXPECT_EQ(libc.memory_start(), 0u);
  EXPECT_TRUE(libc.has_functions());
  EXPECT_FALSE(libc.has_line_numbers());
  const auto& unknown = location_of(p, p.sample(1).location_id(1));
  EXPECT_EQ(unknown.mapping_id(), 0u);
  EXPECT_EQ(unknown.line_size(), 0);
  EXPECT_EQ(unknown.address(), 0x7ffff7ebd8ebu);
}

TEST(PprofWriter, SharedLocationsAndFunctionsAreWrittenOnce) {
  ProfileBuilder builder({{"leaked_space", "bytes"}}, "");
  builder.add_sample(1, inlined_stack(), {1}, {});
  builder.add_sample(1, inlined_stack(), {2}, {ProfileLabel::number("pid", 1)});
  builder.add_sample(2, inlined_stack(), {3}, {});  // another process: its own locations
  auto p = decode_profile(builder.gzipped());
  EXPECT_EQ(p.sample_size(), 3);
  EXPECT_EQ(p.location_size(), 4);
  EXPECT_EQ(p.function_size(), 3);
  EXPECT_EQ(p.sample(0).location_id(0), p.sample(1).location_id(0));
  EXPECT_NE(p.sample(0).location_id(0), p.sample(2).location_id(0));
  EXPECT_EQ(testing::num_label_of(p, p.sample(1), "pid"), 1);
}

TEST(PprofWriter, WrongNumberOfValuesIsAnError) {
  ProfileBuilder builder({{"a", "count"}, {"b", "bytes"}}, "b");
  EXPECT_THROW(builder.add_sample(1, {}, {1}, {}), Error);
}

TEST(PprofWriter, GzipRoundTrip) {
  std::string data(100000, 'x');
  std::string packed = gzip_compress(data);
  ASSERT_GE(packed.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(packed[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(packed[1]), 0x8b);
  EXPECT_LT(packed.size(), 1000u);
  EXPECT_EQ(testing::gunzip(packed), data);
  EXPECT_EQ(testing::gunzip(gzip_compress("")), "");
}

}  // namespace
}  // namespace memtrack::report
