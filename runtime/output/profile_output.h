// The heap profile's file names and module map (profile option; the recording itself is
// record/profile.h). Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// Reads the profile option: names this process's raw file (%p is the pid; a name already
// taken, by an earlier image of the same process or a forked child without %p, gets ".2",
// ".3", ... appended), starts recording and writes the module map. Called once at start-up.
void init_profile();

// Writes the module map again (modules loaded since start-up) and the end of the profile.
// Called on every path that ends the process.
void finish_profile();

// fork()'s child handler: the child records into its own file.
void profile_fork_child();

// memtrack's own thread, every sampling interval: writes the module map again when a library
// was loaded or unloaded since the last one (dl_iterate_phdr's counters), so that a profile
// read while the program runs (memtrack ui) or cut short (SIGKILL) symbolizes the frames of
// libraries loaded with dlopen. Must hold no runtime lock: it walks the loader's list.
void profile_modules_if_changed();

}  // namespace memtrack::rt
