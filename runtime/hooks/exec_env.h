// What a traced child needs in its environment: LD_PRELOAD naming libmemtrack.so and the
// MEMTRACK_OPTIONS this process started with. A program may clear or rewrite its
// environment (clearenv, execve with a fresh envp, env -i, unsetenv); when memtrack follows
// exec (follow_exec=1), the exec and posix_spawn hooks hand both on anyway, so a child is
// never silently untraced, and a re-exec'd image keeps reporting where the CLI looks.
// Runtime-safe: no malloc (the new environment lives in pages of its own).
#pragma once

#include <cstddef>

namespace memtrack::rt {

// Remembers libmemtrack.so's entry of LD_PRELOAD and MEMTRACK_OPTIONS. Called once, from
// the constructor, before the program runs.
void capture_exec_environment();

// `envp` with LD_PRELOAD and MEMTRACK_OPTIONS added or fixed where they are missing (an
// LD_PRELOAD without libmemtrack.so gets it in front; a MEMTRACK_OPTIONS the program set
// itself is kept). Returns `envp` itself when nothing needs to change or memtrack does not
// follow exec. The result stays valid until `release` is called with it.
class TracedEnvironment {
 public:
  explicit TracedEnvironment(char* const* envp);
  ~TracedEnvironment();
  TracedEnvironment(const TracedEnvironment&) = delete;
  TracedEnvironment& operator=(const TracedEnvironment&) = delete;

  char* const* get() const { return envp_; }

 private:
  char* const* envp_;
  void* pages_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace memtrack::rt
