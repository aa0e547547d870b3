// A cache of separate debug files with their compressed sections inflated, by build-id.
//
// Why: Debian's libc6-dbg (and other debug files built with --compress-debug-sections) keep
// their DWARF zlib-compressed, and elfutils 0.188 inflates every compressed section of a debug
// file whole when it opens it: for libc's, 4 MB into about 20 MB, some 70 ms, paid by every
// report whose stacks go through libc. The first report that needs such a file writes an
// inflated copy; later ones open the copy, which libdw reads in place. A build-id names one
// build exactly, so an entry never goes stale; entries are written to a temporary name and
// renamed, so concurrent reports never see half a file. The cache keeps itself within
// max_bytes: each time it writes an entry it removes the entries used least recently (an
// entry's modification time is refreshed, at most daily, when a report uses it) and the
// temporaries of writers that were killed. Tools-only (files, allocation).
#pragma once

#include <cstdint>
#include <string>

namespace memtrack::symbolize {

struct DebuginfoCacheConfig {
  std::string dir;  // "": no cache
  // Smaller debug files are not copied: inflating them costs less than the disk they take.
  uint64_t min_compressed_bytes = 256 * 1024;
  // The entries' total size, beyond which the least recently used are removed (never the
  // one just written): about a hundred libc-sized files.
  uint64_t max_bytes = uint64_t{2} << 30;
  // A temporary this old is a writer's that was killed: a copy takes a second or two.
  int64_t stale_temporary_seconds = 3600;
};

// $MEMTRACK_CACHE_DIR (set but empty: no cache), else $XDG_CACHE_HOME/memtrack, else
// $HOME/.cache/memtrack; the entries go in its debuginfo/ directory.
DebuginfoCacheConfig debuginfo_cache_from_environment();

// The process's cache: from the environment until set (tests set their own).
const DebuginfoCacheConfig& debuginfo_cache();
void set_debuginfo_cache(DebuginfoCacheConfig config);

// The cache's copy of the debug file of this build-id: an open fd (and *path), or -1 when
// there is none, or it is not an ELF file of that build-id with every section inflated and
// inside the file.
int open_cached_debuginfo(const unsigned char* build_id, int build_id_len, std::string* path);

// If the debug file open at `fd` has compressed sections worth inflating, writes its inflated
// copy to the cache and returns an fd of the copy (and *path); else, or if it cannot be
// written, -1. `fd` stays open and its file untouched either way.
int cache_inflated_debuginfo(int fd, const unsigned char* build_id, int build_id_len,
                             std::string* path);

}  // namespace memtrack::symbolize
