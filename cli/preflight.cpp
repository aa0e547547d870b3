// Checks on the program and the environment before running: may read files, never runs them.
#include "cli/preflight.h"

#include <elf.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/flags.h"

namespace memtrack::cli {
namespace {

enum class Linking { kDynamic, kStatic, kNotElf };

// PT_INTERP present: the kernel starts the dynamic loader, which honours LD_PRELOAD. Without
// it (static, or static-pie) no loader runs. Reads the headers of either ELF class in the
// host's byte order; anything unreadable counts as "not ELF" (the exec reports it).
template <typename Ehdr, typename Phdr>
Linking linking_of(std::ifstream& in) {
  Ehdr ehdr{};
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(&ehdr), sizeof(ehdr))) return Linking::kNotElf;
  if (ehdr.e_phentsize != sizeof(Phdr) || ehdr.e_phnum == 0 || ehdr.e_phnum > 4096) {
    return Linking::kNotElf;
  }
  in.seekg(static_cast<std::streamoff>(ehdr.e_phoff));
  std::vector<Phdr> phdrs(ehdr.e_phnum);
  if (!in.read(reinterpret_cast<char*>(phdrs.data()),
               static_cast<std::streamsize>(phdrs.size() * sizeof(Phdr)))) {
    return Linking::kNotElf;
  }
  for (const Phdr& ph : phdrs) {
    if (ph.p_type == PT_INTERP) return Linking::kDynamic;
  }
  return Linking::kStatic;
}

// The section the link-time runtime puts in a program (runtime/link/resolve_linked.cpp):
// section headers survive strip, symbols do not.
constexpr char kRuntimeSection[] = ".memtrack_runtime";

template <typename Ehdr, typename Shdr>
bool has_runtime_section(std::ifstream& in) {
  Ehdr ehdr{};
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(&ehdr), sizeof(ehdr))) return false;
  if (ehdr.e_shentsize != sizeof(Shdr) || ehdr.e_shnum == 0 || ehdr.e_shnum > 65535 ||
      ehdr.e_shstrndx >= ehdr.e_shnum) {
    return false;
  }
  std::vector<Shdr> sections(ehdr.e_shnum);
  in.seekg(static_cast<std::streamoff>(ehdr.e_shoff));
  if (!in.read(reinterpret_cast<char*>(sections.data()),
               static_cast<std::streamsize>(sections.size() * sizeof(Shdr)))) {
    return false;
  }
  const Shdr& names = sections[ehdr.e_shstrndx];
  if (names.sh_size == 0 || names.sh_size > (64u << 20)) return false;
  std::string table(names.sh_size, '\0');
  in.seekg(static_cast<std::streamoff>(names.sh_offset));
  if (!in.read(table.data(), static_cast<std::streamsize>(table.size()))) return false;
  for (const Shdr& section : sections) {
    if (section.sh_name < table.size() &&
        std::strcmp(table.c_str() + section.sh_name, kRuntimeSection) == 0) {
      return true;
    }
  }
  return false;
}

Linking linking_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char ident[EI_NIDENT] = {};
  if (!in.read(reinterpret_cast<char*>(ident), sizeof(ident))) return Linking::kNotElf;
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) return Linking::kNotElf;
  if (ident[EI_CLASS] == ELFCLASS64) return linking_of<Elf64_Ehdr, Elf64_Phdr>(in);
  if (ident[EI_CLASS] == ELFCLASS32) return linking_of<Elf32_Ehdr, Elf32_Phdr>(in);
  return Linking::kNotElf;
}

// The kernel sets AT_SECURE when the exec changes the real and effective ids or grants
// capabilities; the loader then ignores LD_PRELOAD entries that contain a '/' (ld.so(8)),
// which libmemtrack.so's always does. Returns what makes it so and what to do about it.
std::optional<std::string> secure_exec_reason(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  struct statvfs fs {};
  if (statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_NOSUID) != 0) return std::nullopt;
  std::string copy_hint = "run a copy without that bit (cp " + path +
                          " copy; chmod u-s,g-s copy) or run memtrack as that ";
  if ((st.st_mode & S_ISUID) != 0 && st.st_uid != getuid()) {
    return "is set-user-ID (uid " + std::to_string(st.st_uid) + "): the loader ignores " +
           "LD_PRELOAD for it, so memtrack would see nothing; " + copy_hint + "user";
  }
  if ((st.st_mode & S_ISGID) != 0 && st.st_gid != getgid()) {
    return "is set-group-ID (gid " + std::to_string(st.st_gid) + "): the loader ignores " +
           "LD_PRELOAD for it, so memtrack would see nothing; " + copy_hint + "group";
  }
  // Root already holds every capability: file capabilities grant it nothing new.
  if (getuid() != 0 && getxattr(path.c_str(), "security.capability", nullptr, 0) > 0) {
    return "has file capabilities (security.capability): the loader ignores LD_PRELOAD for "
           "it, so memtrack would see nothing; run a copy without them (cp " +
           path + " copy) or run memtrack as root";
  }
  return std::nullopt;
}

void ignore_warning(const char*) {}

}  // namespace

bool carries_runtime(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char ident[EI_NIDENT] = {};
  if (!in.read(reinterpret_cast<char*>(ident), sizeof(ident))) return false;
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) return false;
  if (ident[EI_CLASS] == ELFCLASS64) return has_runtime_section<Elf64_Ehdr, Elf64_Shdr>(in);
  if (ident[EI_CLASS] == ELFCLASS32) return has_runtime_section<Elf32_Ehdr, Elf32_Shdr>(in);
  return false;
}

std::optional<std::string> untrackable_reason(const std::string& path) {
  // The runtime linked in needs no loader; it reads MEMTRACK_OPTIONS like the preloaded one.
  // In a dynamic program LD_PRELOAD would add a second runtime beside it.
  Linking linking = linking_of(path);
  if (carries_runtime(path) && linking == Linking::kDynamic) {
    return path +
           " carries memtrack's link-time runtime but is dynamically linked: memtrack run would "
           "preload a second one; link it with -static, or without $(memtrack link-flags)";
  }
  if (carries_runtime(path)) return std::nullopt;
  if (linking == Linking::kStatic) {
    return path +
           " is statically linked: LD_PRELOAD cannot reach it, so memtrack would see nothing; "
           "run a dynamically linked build, or link the runtime in: gcc -static ... "
           "$(memtrack link-flags)";
  }
  if (std::optional<std::string> why = secure_exec_reason(path)) {
    return path + " " + *why + ", or link the runtime in: gcc -static ... $(memtrack link-flags)";
  }
  return std::nullopt;
}

bool environment_disables_exit_report() {
  const char* text = getenv("MEMTRACK_OPTIONS");
  if (text == nullptr || text[0] == '\0') return false;
  core::Flags flags;
  core::set_defaults(&flags);
  core::parse_flags(text, &flags, ignore_warning);  // the runtime warns about bad entries
  return !flags.report_at_exit;
}

}  // namespace memtrack::cli
