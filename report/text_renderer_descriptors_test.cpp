// Golden tests for the descriptor part of the text report: descriptor sites, their
// suppression entries, and where they stand among the leak groups.
#include <gtest/gtest.h>

#include "report/test_fixtures.h"
#include "report/text_render_testing.h"
#include "report/text_renderer.h"

namespace memtrack::report {
namespace {

using testing::group;
using testing::quiet_process;
using testing::render;
using testing::with_version;

TEST(TextRenderer, SuppressionEntriesUnderDescriptorSites) {
  ProcessReport p = testing::with_resources(quiet_process());
  TextOptions options;
  options.gen_suppressions = GenSuppressions::kBlock;
  std::string text = render(p, options);
  EXPECT_NE(text.find("==77==    fd 4: file /var/log/app.err, fopen(\"a\")\n"
                      "{\n"
                      "   memtrack:fd:open_logs\n"
                      "   memtrack:FdLeak\n"
                      "   fun:open_logs\n"
                      "   fun:main\n"
                      "}\n"
                      "==77==\n"),
            std::string::npos)
      << text;
  options.gen_suppressions = GenSuppressions::kLsan;
  text = render(p, options);
  EXPECT_NE(text.find("accept4(O_RDWR|O_CLOEXEC)\n"
                      "==77==    suppress with: leak:^serve$\n"),
            std::string::npos)
      << text;
}

TEST(TextRenderer, DescriptorsOnlyGetTheFullReportAndSayNoMemoryLeaks) {
  ProcessReport p = testing::with_resources(quiet_process());
  EXPECT_EQ(render(p, with_version()),
            "==77== memtrack 0.1.0: ./prog (pid 77, parent 1) exited with status 0\n"
            "==77== HEAP SUMMARY: 3 allocations, 3 frees, 0 bytes allocated, 0 bytes peak\n"
            "==77==\n"
            "==77== FILE DESCRIPTORS: 3 open at exit, from 2 sites, 1 suppressed; 2 more could "
            "not be tracked\n"
            "==77==\n"
            "==77== 2 files open at exit, opened at:\n"
            "==77==    #0 open_logs (examples/server.c:70:15) leaky\n"
            "==77==    #1 main (examples/server.c:90:3) leaky\n"
            "==77==    fd 3: file /var/log/app.log, open(O_WRONLY|O_CREAT|O_APPEND)\n"
            "==77==    fd 4: file /var/log/app.err, fopen(\"a\")\n"
            "==77==\n"
            "==77== 1 socket open at exit, opened at:\n"
            "==77==    #0 serve (examples/server.c:44:20) leaky\n"
            "==77==    fd 7: socket TCP 127.0.0.1:8080 -> 127.0.0.1:40000, "
            "accept4(O_RDWR|O_CLOEXEC)\n"
            "==77==\n"
            "==77== LEAK SUMMARY: no memory leaks (3 allocations, all freed, 1 descriptor "
            "suppressed; 2 descriptors untracked)\n");
}

TEST(TextRenderer, DescriptorsComeAfterTheLeakGroups) {
  ProcessReport p = testing::with_resources(quiet_process());
  p.leaks = {group(LeakKind::kDefinite, 16, 1)};
  p.summary.of_kind(LeakKind::kDefinite).bytes = 16;
  p.summary.of_kind(LeakKind::kDefinite).blocks = 1;
  std::string text = render(p);
  size_t group_title = text.find("16 bytes in 1 block is definitely lost");
  size_t descriptors = text.find("FILE DESCRIPTORS: 3 open at exit");
  size_t summary = text.find("LEAK SUMMARY:\n");
  EXPECT_LT(group_title, descriptors) << text;
  EXPECT_LT(descriptors, summary) << text;
  EXPECT_NE(text.find("definitely lost: 16 bytes in 1 block"), std::string::npos) << text;
}

TEST(TextRenderer, DescriptorSiteTitles) {
  ProcessReport p = quiet_process();
  p.tracks_resources = true;
  auto site = [](std::vector<ResourceKind> kinds) {
    ResourceSite s;
    int fd = 3;
    for (ResourceKind kind : kinds) {
      ResourceFacts r;
      r.fd = fd++;
      r.kind = kind;
      r.call = "open";
      r.description = "x";
      s.resources.push_back(r);
    }
    return s;
  };
  p.resource_sites = {site({ResourceKind::kPipe, ResourceKind::kPipe}),
                      site({ResourceKind::kFile, ResourceKind::kDirectory}),
                      site({ResourceKind::kDirectory}), site({ResourceKind::kEpoll}),
                      site({ResourceKind::kOther})};
  p.summary.open_descriptors = 7;
  std::string text = render(p);
  EXPECT_NE(text.find("FILE DESCRIPTORS: 7 open at exit, from 5 sites\n"), std::string::npos);
  for (const char* title :
       {"2 pipe ends open at exit, opened at:", "2 descriptors open at exit, opened at:",
        "1 directory open at exit, opened at:", "1 epoll instance open at exit, opened at:",
        "1 descriptor open at exit, opened at:"}) {
    EXPECT_NE(text.find(std::string("==77== ") + title + "\n==77==    (no stack recorded)\n"),
              std::string::npos)
        << title << "\n"
        << text;
  }
  EXPECT_NE(text.find("   fd 3: pipe x, open(O_RDONLY)\n"), std::string::npos) << text;
}

TEST(TextRenderer, NoDescriptorSectionWithoutDescriptors) {
  ProcessReport p = quiet_process();
  p.tracks_resources = true;
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, all freed)\n");
  p.summary.untracked_descriptors = 4;  // only counted, in the one-liner
  EXPECT_EQ(render(p),
            "==77== memtrack: ./prog (pid 77, parent 1) exited with status 0: no leaks (3 "
            "allocations, all freed; 4 descriptors untracked)\n");
}

}  // namespace
}  // namespace memtrack::report
