// The one way an interposed entry point is exported from libmemtrack.so (the library is
// built with -fvisibility=hidden). Runtime-safe: a macro only.
#pragma once

// For C++ entry points (operator new and delete).
#define MEMTRACK_EXPORT __attribute__((visibility("default")))
// For C entry points (malloc, open, exit, ...) and the cooperation API.
#define MEMTRACK_EXPORT_C extern "C" MEMTRACK_EXPORT
