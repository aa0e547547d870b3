// The inflated debug file cache (debuginfo_cache.h). Every file it reads is untrusted: a
// failure means "not cached", never an error the user sees.
#include "symbolize/debuginfo_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

namespace memtrack::symbolize {
namespace {

DebuginfoCacheConfig& config_slot() {
  static DebuginfoCacheConfig config = debuginfo_cache_from_environment();
  return config;
}

std::string entry_path(const std::string& dir, const unsigned char* build_id, int len) {
  std::string path = dir + "/";
  for (int i = 0; i < len; ++i) {
    path += "0123456789abcdef"[build_id[i] >> 4];
    path += "0123456789abcdef"[build_id[i] & 15];
  }
  return path + ".debug";
}

// Creates `dir` and its missing parents (private to the user, as caches are).
bool make_directories(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string part = dir.substr(0, slash);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
}

bool same_build_id(Elf* elf, const unsigned char* build_id, int len) {
  // The note sections, as libdwfl finds a debug file's build-id.
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    GElf_Nhdr note;
    size_t name_offset = 0;
    size_t desc_offset = 0;
    for (size_t offset = 0;
         (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0;) {
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(static_cast<const char*>(data->d_buf) + name_offset, "GNU", 4) == 0) {
        return note.n_descsz == static_cast<GElf_Word>(len) &&
               std::memcmp(static_cast<const char*>(data->d_buf) + desc_offset, build_id,
                           static_cast<size_t>(len)) == 0;
      }
    }
  }
  return false;
}

// Whether the ELF file open at `fd` (`size` bytes) is a usable cache entry.
bool usable_entry(int fd, off_t size, const unsigned char* build_id, int len) {
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return false;
  bool usable = elf_kind(elf) == ELF_K_ELF && same_build_id(elf, build_id, len);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); usable && scn != nullptr;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    usable = gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_COMPRESSED) == 0 &&
             (shdr.sh_type == SHT_NOBITS ||
              (shdr.sh_offset <= static_cast<uint64_t>(size) &&
               shdr.sh_size <= static_cast<uint64_t>(size) - shdr.sh_offset));
  }
  elf_end(elf);
  return usable;
}

// The bytes of the sections libdw would inflate on opening; 0 when any is compressed the
// older GNU way (.zdebug_*), which libelf would have to rename too: those are left as they are.
uint64_t compressed_bytes(int fd) {
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return 0;
  uint64_t total = 0;
  size_t names = 0;
  if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &names) != 0) {
    elf_end(elf);
    return 0;
  }
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, names, shdr.sh_name);
    if (name != nullptr && std::strncmp(name, ".zdebug", 7) == 0) {
      total = 0;
      break;
    }
    if ((shdr.sh_flags & SHF_COMPRESSED) != 0) total += shdr.sh_size;
  }
  elf_end(elf);
  return total;
}

bool copy_file(int from, int to) {
  std::vector<char> buffer(1 << 20);
  for (off_t offset = 0;;) {
    ssize_t got = pread(from, buffer.data(), buffer.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) return true;
    for (ssize_t put = 0; put < got;) {
      ssize_t wrote = write(to, buffer.data() + put, static_cast<size_t>(got - put));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return false;
      put += wrote;
    }
    offset += got;
  }
}

// Inflates every compressed section of the ELF file open read-write at `fd`, in place; libelf
// lays the sections out again.
bool inflate_in_place(int fd) {
  Elf* elf = elf_begin(fd, ELF_C_RDWR, nullptr);
  if (elf == nullptr) return false;
  bool ok = elf_kind(elf) == ELF_K_ELF;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); ok && scn != nullptr;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    ok = gelf_getshdr(scn, &shdr) != nullptr;
    if (ok && (shdr.sh_flags & SHF_COMPRESSED) != 0) ok = elf_compress(scn, 0, 0) == 1;
  }
  ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
  elf_end(elf);
  return ok;
}

// An entry read within the last day keeps its time: a report need not write to the
// directory each time it reads an entry.
constexpr time_t kRefreshAfterSeconds = 24 * 3600;

bool ends_with(const std::string& name, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
}

// BUILD-ID.debug.XXXXXX, as cache_inflated_debuginfo names its temporaries.
bool is_temporary(const std::string& name) {
  const size_t at = name.rfind(".debug.");
  return at != std::string::npos && name.size() - at == 7 + 6;
}

// Removes the temporaries of killed writers, then the least recently used entries until the
// rest fit in max_bytes; `keep` (the entry just written) stays whatever its size. Files that
// vanish meanwhile (another report sweeping) are passed over.
void sweep(const DebuginfoCacheConfig& config, const std::string& keep) {
  DIR* dir = opendir(config.dir.c_str());
  if (dir == nullptr) return;
  struct Entry {
    std::string path;
    uint64_t bytes;
    time_t used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const time_t now = time(nullptr);
  while (const dirent* d = readdir(dir)) {
    const std::string name = d->d_name;
    const bool entry = ends_with(name, ".debug");
    if (!entry && !is_temporary(name)) continue;
    const std::string path = config.dir + "/" + name;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!entry) {
      if (now - st.st_mtime > config.stale_temporary_seconds) unlink(path.c_str());
      continue;
    }
    const uint64_t bytes = static_cast<uint64_t>(st.st_size);
    total += bytes;
    if (path != keep) entries.push_back({path, bytes, st.st_mtime});
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= config.max_bytes) break;
    if (unlink(e.path.c_str()) == 0 || errno == ENOENT) total -= e.bytes;
  }
}

}  // namespace

DebuginfoCacheConfig debuginfo_cache_from_environment() {
  DebuginfoCacheConfig config;
  std::string base;
  if (const char* dir = std::getenv("MEMTRACK_CACHE_DIR")) {
    if (dir[0] == '\0') return config;
    base = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    base = std::string(xdg) + "/memtrack";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    base = std::string(home) + "/.cache/memtrack";
  } else {
    return config;
  }
  config.dir = base + "/debuginfo";
  return config;
}

const DebuginfoCacheConfig& debuginfo_cache() {
  return config_slot();
}

void set_debuginfo_cache(DebuginfoCacheConfig config) {
  config_slot() = std::move(config);
}

int open_cached_debuginfo(const unsigned char* build_id, int build_id_len, std::string* path) {
  const DebuginfoCacheConfig& config = debuginfo_cache();
  if (config.dir.empty() || build_id_len <= 0) return -1;
  elf_version(EV_CURRENT);
  std::string entry = entry_path(config.dir, build_id, build_id_len);
  // O_NONBLOCK: a FIFO planted under the name must not hang us; fstat then rejects it.
  int fd = open(entry.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      !usable_entry(fd, st.st_size, build_id, build_id_len)) {
    close(fd);
    return -1;
  }
  // Used now: the sweep removes the entries used least recently. Without the right to
  // change the time, it stays as it was.
  if (time(nullptr) - st.st_mtime > kRefreshAfterSeconds) futimens(fd, nullptr);
  *path = entry;
  return fd;
}

int cache_inflated_debuginfo(int fd, const unsigned char* build_id, int build_id_len,
                             std::string* path) {
  const DebuginfoCacheConfig& config = debuginfo_cache();
  if (config.dir.empty() || build_id_len <= 0) return -1;
  elf_version(EV_CURRENT);
  if (compressed_bytes(fd) < std::max<uint64_t>(config.min_compressed_bytes, 1)) return -1;
  if (!make_directories(config.dir)) return -1;
  std::string entry = entry_path(config.dir, build_id, build_id_len);
  std::string temporary = entry + ".XXXXXX";
  int out = mkostemp(temporary.data(), O_CLOEXEC);
  if (out < 0) return -1;
  bool written = copy_file(fd, out) && inflate_in_place(out);
  written = close(out) == 0 && written;
  if (!written || rename(temporary.c_str(), entry.c_str()) != 0) {
    unlink(temporary.c_str());
    return -1;
  }
  sweep(config, entry);
  return open_cached_debuginfo(build_id, build_id_len, path);
}

}  // namespace memtrack::symbolize
