// Separate debug info from this machine only (build-id tree, then .gnu_debuglink); no
// debuginfod. Every file it opens is untrusted: failures mean "not found", never an error.
#include "symbolize/local_debuginfo.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "symbolize/debuginfo_cache.h"

namespace memtrack::symbolize {
namespace {

// True if the ELF file open at `fd` carries exactly this GNU build-id note.
bool has_build_id(int fd, const unsigned char* bits, int len) {
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return false;
  const void* id = nullptr;
  ssize_t id_len = dwelf_elf_gnu_build_id(elf, &id);
  bool same = id_len == len && std::memcmp(id, bits, static_cast<size_t>(len)) == 0;
  elf_end(elf);
  return same;
}

// Opens `candidate` if it is a regular file other than the module itself whose build-id
// matches. The build-id stands in for the debuglink CRC, which would mean reading the whole
// debug file.
int open_if_matching(const std::string& candidate, const struct stat& main_stat,
                     const unsigned char* bits, int len) {
  int fd = open(candidate.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  bool usable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                !(st.st_dev == main_stat.st_dev && st.st_ino == main_stat.st_ino);
  if (usable && has_build_id(fd, bits, len)) return fd;
  close(fd);
  return -1;
}

int find_by_debuglink(Dwfl_Module* mod, const char* file_name, const char* debuglink_file,
                      char** debuginfo_file_name) {
  if (file_name == nullptr || debuglink_file == nullptr || debuglink_file[0] == '\0') return -1;
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  int len = dwfl_module_build_id(mod, &bits, &vaddr);
  struct stat main_stat {};
  // Without a build-id there is nothing to validate a candidate against: do not guess.
  if (len <= 0 || stat(file_name, &main_stat) != 0) return -1;

  std::string path = file_name;
  std::string dir = path.substr(0, std::min(path.size(), path.rfind('/') + 1));  // "" or ".../"
  std::string link = debuglink_file;
  if (link.find('/') != std::string::npos) link = link.substr(link.rfind('/') + 1);
  const std::string candidates[] = {dir + link, dir + ".debug/" + link,
                                    dir.starts_with('/') ? "/usr/lib/debug" + dir + link : ""};
  for (const std::string& candidate : candidates) {
    if (candidate.empty()) continue;
    int fd = open_if_matching(candidate, main_stat, bits, len);
    if (fd < 0) continue;
    *debuginfo_file_name = strdup(candidate.c_str());
    return fd;
  }
  return -1;
}

}  // namespace

int find_local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                         const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                         char** debuginfo_file_name) {
  const unsigned char* build_id = nullptr;
  GElf_Addr build_id_vaddr = 0;
  int build_id_len = dwfl_module_build_id(mod, &build_id, &build_id_vaddr);
  std::string cached;
  int fd = open_cached_debuginfo(build_id, build_id_len, &cached);
  if (fd >= 0) {
    *debuginfo_file_name = strdup(cached.c_str());
    return fd;
  }
  // The build-id lookup is local only: it tries <path>/.build-id/xx/yyyy.debug for each
  // absolute entry of the debuginfo path and nothing else.
  fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                    debuglink_crc, debuginfo_file_name);
  if (fd < 0) fd = find_by_debuglink(mod, file_name, debuglink_file, debuginfo_file_name);
  if (fd < 0) return fd;
  int inflated = cache_inflated_debuginfo(fd, build_id, build_id_len, &cached);
  if (inflated < 0) return fd;
  close(fd);
  std::free(*debuginfo_file_name);
  *debuginfo_file_name = strdup(cached.c_str());
  return inflated;
}

}  // namespace memtrack::symbolize
