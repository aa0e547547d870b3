// A program that crashes, for README's crash report example: it loses the 64-byte buffer of
// load_settings(), then writes through the null pointer that find_entry() returns.
#include <stdlib.h>
#include <string.h>

struct entry {
  char key[16];
  int value;
};

__attribute__((noinline)) static char* load_settings(void) {
  char* buffer = malloc(64);
  strcpy(buffer, "verbose=1");
  return buffer;
}

__attribute__((noinline)) static struct entry* find_entry(const char* key) {
  return strcmp(key, "verbose") == 0 ? NULL : NULL;  // the bug: nothing is ever found
}

__attribute__((noinline)) static void set_value(const char* key, int value) {
  struct entry* e = find_entry(key);
  e->value = value;
  __asm__ volatile("" : : "r"(e) : "memory");
}

int main(void) {
  char* settings = load_settings();
  __asm__ volatile("" : : "r"(settings) : "memory");
  settings = NULL;  // the last pointer to the buffer is gone
  set_value("verbose", 1);
  return 0;
}
