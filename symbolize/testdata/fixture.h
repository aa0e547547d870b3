// Symbolizer test fixture (built -O2 -g, never sanitized): exported entry points whose code
// calls the hook, so the hook's return address lands inside known lines of this library.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*fixture_hook)(int);

extern fixture_hook fixture_g_hook;  // set by fixture_set_hook

void fixture_set_hook(fixture_hook hook);
int fixture_outer(int n);         // hook called from two always-inline helpers
int fixture_from_include(int n);  // body in fixture_included.inc
int fixture_widget_make(int n);   // calls demo::Widget::make(int)

#ifdef __cplusplus
}
#endif
