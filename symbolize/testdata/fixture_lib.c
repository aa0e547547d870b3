// Symbolizer test fixture: two always-inline helpers nested in an exported function, and a
// function whose body comes from an included file. symbolizer_test.cpp hardcodes the line
// and column of every line marked LINE_*: keep them where they are.
#include "fixture.h"

fixture_hook fixture_g_hook;

void fixture_set_hook(fixture_hook hook) {
  fixture_g_hook = hook;
}

static inline __attribute__((always_inline)) int fixture_inner(int n) {
  return fixture_g_hook(n) + 1;  // LINE_INNER_CALL (13:10)
}

static inline __attribute__((always_inline)) int fixture_middle(int n) {
  return fixture_inner(n * 2) + 3;  // LINE_MIDDLE_CALL (17:10)
}

__attribute__((noinline)) int fixture_outer(int n) {
  return fixture_middle(n + 5) * 7;  // LINE_OUTER_CALL (21:10)
}

#include "fixture_included.inc"
