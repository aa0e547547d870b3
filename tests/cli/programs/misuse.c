// Allocator misuse in C, one case per run, named by argv[1]: double_free,
// double_free_other_thread, double_free_reused, free_stack, free_global, free_interior,
// realloc_after_free. Blocks come from make_block() and are freed correctly by free_block(); each
// bad call is on the line marked BAD- and the case's name (the tests find lines by these comments).
// argv[2] repeats the bad call (default 1). Prints
// "<case>: done" and exits 0: the runtime does not pass the bad call on, so the program runs
// to its end.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "misuse_util.h"

static char global_data[64];

NOT_OPTIMIZED_AWAY void* make_block(size_t n) {
  void* p = malloc(n);  // ALLOC-block
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void free_block(void* p) {
  free(p);  // FREE-block
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void free_again(void* p) {
  free(p);  // BAD-double_free
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void* make_again(size_t n) {
  void* p = malloc(n);  // ALLOC-reused
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void free_reused(void* p) {
  free(p);  // FREE-reused
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void free_stack_pointer(void* p) {
  free(p);  // BAD-free_stack
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void free_global_pointer(void* p) {
  free(p);  // BAD-free_global
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void free_inside(void* p) {
  free(p);  // BAD-free_interior
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void* realloc_freed(void* p) {
  void* q = realloc(p, 200);  // BAD-realloc_after_free
  ESCAPE(q);
  return q;
}

static void* free_on_thread(void* p) {
  free_block(p);
  return NULL;
}

// Frees blocks of its own, on a thread that starts after free_on_thread's has exited; of
// another size, so no allocator hands it the freed block's address (memtrack's own heap
// gives an exited thread's chunks to the next thread that asks for that size).
static void* churn_on_thread(void* unused) {
  for (int i = 0; i < 100; ++i) {
    void* p = malloc(1000);
    ESCAPE(p);
    free(p);
  }
  return unused;
}

// Runs `name`'s bad call `times` times (always from the same call site: one context).
static int run_case(const char* name, int times) {
  char on_stack[32];
  for (int i = 0; i < times; ++i) {
    if (strcmp(name, "double_free") == 0) {
      static void* freed = NULL;
      if (freed == NULL) {
        freed = make_block(100);
        free_block(freed);
      }
      void* p = freed;
      HIDE(p);
      free_again(p);
    } else if (strcmp(name, "double_free_other_thread") == 0) {
      // The first free is on a thread that has exited (and another thread freed since)
      // when the main thread frees the block again.
      static void* freed = NULL;
      if (freed == NULL) {
        freed = make_block(100);
        pthread_t thread;
        if (pthread_create(&thread, NULL, free_on_thread, freed) != 0) return 3;
        pthread_join(thread, NULL);
        if (pthread_create(&thread, NULL, churn_on_thread, NULL) != 0) return 3;
        pthread_join(thread, NULL);
      }
      void* p = freed;
      HIDE(p);
      free_again(p);
    } else if (strcmp(name, "double_free_reused") == 0) {
      // A thread frees the block and exits (its cached blocks go back to the heap); the main
      // thread gets the same address from malloc again and frees it; then frees it once
      // more. Two quarantine rings hold a free of that address: the newer must be named.
      static void* freed = NULL;
      if (freed == NULL) {
        free_block(make_block(1000));  // the main thread takes its own ring first
        void* first = make_block(100);
        pthread_t thread;
        if (pthread_create(&thread, NULL, free_on_thread, first) != 0) return 3;
        pthread_join(thread, NULL);
        void* others[1000];
        int count = 0;
        for (; count < 1000 && freed != first; ++count) others[count] = freed = make_again(100);
        if (freed != first) return 4;  // the allocator never handed the address out again
        for (int k = 0; k + 1 < count; ++k) free_block(others[k]);
        free_reused(freed);
      }
      void* p = freed;
      HIDE(p);
      free_again(p);
    } else if (strcmp(name, "free_stack") == 0) {
      void* p = on_stack;
      HIDE(p);
      free_stack_pointer(p);
    } else if (strcmp(name, "free_global") == 0) {
      void* p = global_data;
      HIDE(p);
      free_global_pointer(p);
    } else if (strcmp(name, "free_interior") == 0) {
      char* block = make_block(100);
      char* inside = block + 16;
      HIDE(inside);
      free_inside(inside);
      free_block(block);
    } else if (strcmp(name, "realloc_after_free") == 0) {
      void* p = make_block(100);
      free_block(p);
      HIDE(p);
      void* q = realloc_freed(p);
      if (q != NULL) free_block(q);  // a runtime that passed the call on
    } else {
      return 2;
    }
  }
  ESCAPE(on_stack);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int times = argc > 2 ? atoi(argv[2]) : 1;
  if (run_case(argv[1], times) != 0) return 2;
  printf("%s: done\n", argv[1]);
  return 0;
}
