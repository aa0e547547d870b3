// The text of a retention report (memtrack run --show-retainers): roots named as a person
// would, sites in one line, and the chain of holders from a root down to a site's blocks.
// Pure functions; they allocate.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.h"

namespace memtrack::report {

// "global g_sessions (server.cpp:12)" (its module's name without debug info), "thread 4243
// stack", "main thread registers", "data of libfoo.so+0x4010", ...; `pid` tells the main
// thread from the others.
std::string retainer_name(const Retainer& retainer, uint32_t pid);

// "std::vector<int>::_M_realloc_insert(...)" -> "_M_realloc_insert": the name without its
// scopes, template arguments of the scopes and parameters.
std::string_view short_function_name(std::string_view function);

// A site in one line: its first frame outside the C/C++ runtime's libraries and the system
// headers (the caller of std::vector's allocator, not the allocator), as
// "Session::add (session.cpp:40)", with the innermost skipped function that is not an
// allocator ("via _M_allocate_buckets"); frame 0 if every frame is the runtime's.
std::string site_phrase(const std::vector<Frame>& stack);

// What holds a group's blocks, outermost first: "global g_sessions -> 65,536 bytes in 1 block
// allocated at Table::grow (table.cpp:12)": the group's parents up to the root.
std::string holder_chain(const Retention& retention, const RetentionGroup& group, uint32_t pid);

// The RETAINED MEMORY section: the `max_roots` roots that keep the most, and the `max_sites`
// sites with the most still-reachable bytes, each with its holder chain. Lines without the
// "==pid==" prefix; nothing when there is nothing reachable.
std::vector<std::string> retention_lines(const Retention& retention, uint32_t pid,
                                         size_t max_roots = 10, size_t max_sites = 10);

// memtrack snapshot --retainers ADDR: the block that holds the address, what holds it (its
// dominator chain up to the root) and who points at it. Lines without the "==pid==" prefix.
std::vector<std::string> block_retention_lines(const BlockRetention& block);

}  // namespace memtrack::report
