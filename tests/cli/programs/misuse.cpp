// Allocator misuse in C++, one case per run, named by argv[1]: malloc_delete, new_free,
// new_array_delete, new_delete_array, aligned_new_delete, or clean (every family released the
// right way: no error). Each block is allocated on the line marked ALLOC-<case> and released
// the wrong way on BAD-<case>. The types are trivially destructible, so a delete of the wrong
// form runs no destructor on garbage. Prints "<case>: done" and exits 0.
#include <cstdio>
#include <cstring>
#include <new>

#include "misuse_util.h"

struct Obj {
  char bytes[100];
};

struct alignas(64) Big {
  char bytes[128];
};

NOT_OPTIMIZED_AWAY Obj* malloc_obj() {
  void* p = malloc(sizeof(Obj));  // ALLOC-malloc_delete
  ESCAPE(p);
  return static_cast<Obj*>(p);
}

NOT_OPTIMIZED_AWAY void delete_malloced(Obj* p) {
  delete p;  // BAD-malloc_delete
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY Obj* new_obj() {
  Obj* p = new Obj;  // ALLOC-new_free
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void free_newed(Obj* p) {
  free(p);  // BAD-new_free
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY Obj* new_array() {
  Obj* p = new Obj[4];  // ALLOC-new_array_delete
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void delete_array_with_delete(Obj* p) {
  delete p;  // BAD-new_array_delete
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY Obj* new_single() {
  Obj* p = new Obj;  // ALLOC-new_delete_array
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void delete_single_with_delete_array(Obj* p) {
  delete[] p;  // BAD-new_delete_array
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY Big* new_aligned() {
  Big* p = new Big;  // ALLOC-aligned_new_delete
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void delete_aligned_plainly(Big* p) {
  ::operator delete(static_cast<void*>(p));  // BAD-aligned_new_delete
  NO_TAIL_CALL();
}

// Every family allocated and released the right way, each through a call the optimizer
// cannot remove.
NOT_OPTIMIZED_AWAY void use_correctly() {
  void* m = malloc(10);
  ESCAPE(m);
  m = realloc(m, 1000);
  ESCAPE(m);
  free(m);
  void* c = calloc(4, 8);
  ESCAPE(c);
  free(c);
  void* a = nullptr;
  if (posix_memalign(&a, 64, 96) == 0) {
    ESCAPE(a);
    free(a);
  }
  char* s = strdup("text");
  ESCAPE(s);
  free(s);
  Obj* o = new Obj;
  ESCAPE(o);
  delete o;
  Obj* arr = new Obj[3];
  ESCAPE(arr);
  delete[] arr;
  Big* big = new Big;
  ESCAPE(big);
  delete big;
  Big* bigs = new Big[2];
  ESCAPE(bigs);
  delete[] bigs;
  NO_TAIL_CALL();
}

static int run_case(const char* name) {
  if (strcmp(name, "malloc_delete") == 0) {
    Obj* p = malloc_obj();
    HIDE(p);
    delete_malloced(p);
  } else if (strcmp(name, "new_free") == 0) {
    Obj* p = new_obj();
    HIDE(p);
    free_newed(p);
  } else if (strcmp(name, "new_array_delete") == 0) {
    Obj* p = new_array();
    HIDE(p);
    delete_array_with_delete(p);
  } else if (strcmp(name, "new_delete_array") == 0) {
    Obj* p = new_single();
    HIDE(p);
    delete_single_with_delete_array(p);
  } else if (strcmp(name, "aligned_new_delete") == 0) {
    Big* p = new_aligned();
    HIDE(p);
    delete_aligned_plainly(p);
  } else if (strcmp(name, "clean") == 0) {
    use_correctly();
  } else {
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || run_case(argv[1]) != 0) return 2;
  std::printf("%s: done\n", argv[1]);
  return 0;
}
