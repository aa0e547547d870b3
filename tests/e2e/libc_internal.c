// Blocks the C library allocates for the program: strdup, getline and realpath call malloc
// inside libc. Under LD_PRELOAD the hooks see them through libc.so's own calls of malloc; in a
// static link (static_link.cmake) because --wrap=malloc rewrites the references of every
// libc.a member the link pulls in, not only the program's (docs/static-link.md). The stream
// getline reads from is libc's too, and closed: no descriptor stays open.
// EXPECT-LEAKED: 130 bytes in 3 blocks
// EXPECT-GROUPS: 3
// EXPECT-GROUP: 120 bytes in 1 block | read_line@alloc_line main@call_line
// EXPECT-GROUP: 8 bytes in 1 block | copy_name@alloc_copy main@call_copy
// EXPECT-GROUP: 2 bytes in 1 block | resolve_root@alloc_path main@call_path
#define _GNU_SOURCE
#include <string.h>

#include "e2e_util.h"

__attribute__((noinline)) char* copy_name(const char* name) {
  char* copy = strdup(name);  // @alloc_copy
  ESCAPE(copy);
  return copy;
}

__attribute__((noinline)) char* read_line(void) {
  static char text[] = "first line\nsecond line\n";
  FILE* in = fmemopen(text, sizeof text - 1, "r");
  CHECK(in != NULL);
  char* line = NULL;
  size_t capacity = 0;
  CHECK(getline(&line, &capacity, in) == 11);  // @alloc_line
  fclose(in);
  ESCAPE(line);
  return line;
}

__attribute__((noinline)) char* resolve_root(void) {
  char* path = realpath("/", NULL);  // @alloc_path
  CHECK(path != NULL && strcmp(path, "/") == 0);
  ESCAPE(path);
  return path;
}

int main(void) {
  char* copy = copy_name("leak me");  // @call_copy
  ESCAPE(copy);
  char* line = read_line();  // @call_line
  ESCAPE(line);
  char* path = resolve_root();  // @call_path
  ESCAPE(path);
  printf("%s %s", copy, line);
  return 0;
}
