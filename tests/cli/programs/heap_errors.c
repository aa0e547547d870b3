// The memory-error suite (docs/heap-errors.md): one bug per run, named by argv[1]:
// overflow_write, overflow_read (one byte past a 16-byte block), underflow_write,
// underflow_read (one byte before it), overflow_odd (a write one byte past a 10-byte block),
// uaf_write, uaf_read (byte 20 of a freed 40-byte block), overflow_freed (a write 2 bytes
// past an 8-byte block, then its free), overflow_kept (the same on a block never freed),
// uaf_write_recycled (uaf_write, then another block's free), realloc_stale (a write through
// the pointer realloc was given, after it moved the block), aligned_overflow (a write one
// byte past a 24-byte block aligned to 64), large_overflow (one byte past 100,000 bytes),
// large_calloc_overflow (one byte past 300,000 calloc'd bytes, beyond glibc's mmap threshold),
// large_aligned_overflow (one byte past 100,000 bytes aligned to 4096), large_uaf_write (byte
// 20 of a freed 100,000-byte block), many (20 writes past 20 blocks, 10 of them freed),
// double_free, free_stack, churn (a 32-byte block made and freed: no bug), none (no bug). The block
// comes from make_block(), the bad access is on the line marked BAD- and the case, the free in
// free_block(). Prints "<case>: done" at the end (when nothing stopped it). argv[2] (default 1):
// how many times to do it, each on a new block (for the runs until caught at a sampling rate).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "misuse_util.h"

NOT_OPTIMIZED_AWAY char* make_block(size_t n) {
  char* p = malloc(n);  // ALLOC-block
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void free_block(char* p) {
  free(p);  // FREE-block
  NO_TAIL_CALL();
}

static volatile char sink;

NOT_OPTIMIZED_AWAY void write_past(char* p, size_t n) {
  p[n] = 1;  // BAD-overflow_write
}

NOT_OPTIMIZED_AWAY void read_past(char* p, size_t n) {
  sink = p[n];  // BAD-overflow_read
}

NOT_OPTIMIZED_AWAY void write_before(char* p) {
  HIDE(p);
  p[-1] = 1;  // BAD-underflow_write
}

NOT_OPTIMIZED_AWAY void read_before(char* p) {
  HIDE(p);
  sink = p[-1];  // BAD-underflow_read
}

NOT_OPTIMIZED_AWAY void write_freed(char* p) {
  p[20] = 1;  // BAD-uaf_write
}

NOT_OPTIMIZED_AWAY void read_freed(char* p) {
  sink = p[20];  // BAD-uaf_read
}

NOT_OPTIMIZED_AWAY void write_two_past(char* p, size_t n) {
  p[n + 1] = 1;  // BAD-overflow_freed
}

NOT_OPTIMIZED_AWAY char* grow_block(char* p, size_t n) {
  char* q = realloc(p, n);  // REALLOC-block
  ESCAPE(q);
  return q;
}

NOT_OPTIMIZED_AWAY void write_stale(char* p) {
  p[3] = 1;  // BAD-realloc_stale
}

NOT_OPTIMIZED_AWAY char* make_aligned_block(size_t alignment, size_t n) {
  void* p = NULL;
  if (posix_memalign(&p, alignment, n) != 0) abort();  // ALLOC-aligned
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY char* make_zeroed_block(size_t n) {
  char* p = calloc(1, n);  // ALLOC-zeroed
  ESCAPE(p);
  return p;
}

NOT_OPTIMIZED_AWAY void free_again(char* p) {
  free(p);  // BAD-double_free
  NO_TAIL_CALL();
}

NOT_OPTIMIZED_AWAY void free_stack_pointer(void* p) {
  free(p);  // BAD-free_stack
  NO_TAIL_CALL();
}

static char* kept;

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "none";
  int rounds = argc > 2 ? atoi(argv[2]) : 1;
  for (int i = 0; i < rounds; ++i) {
    if (strcmp(what, "overflow_write") == 0) {
      char* p = make_block(16);
      write_past(p, 16);
      free_block(p);
    } else if (strcmp(what, "overflow_read") == 0) {
      char* p = make_block(16);
      read_past(p, 16);
      free_block(p);
    } else if (strcmp(what, "underflow_write") == 0) {
      char* p = make_block(16);
      write_before(p);
      free_block(p);
    } else if (strcmp(what, "underflow_read") == 0) {
      char* p = make_block(16);
      read_before(p);
      free_block(p);
    } else if (strcmp(what, "uaf_write") == 0) {
      char* p = make_block(40);
      free_block(p);
      write_freed(p);
    } else if (strcmp(what, "uaf_read") == 0) {
      char* p = make_block(40);
      free_block(p);
      read_freed(p);
    } else if (strcmp(what, "overflow_odd") == 0) {
      char* p = make_block(10);
      write_past(p, 10);
      free_block(p);
    } else if (strcmp(what, "overflow_freed") == 0) {
      char* p = make_block(8);
      write_two_past(p, 8);
      free_block(p);
    } else if (strcmp(what, "overflow_kept") == 0) {
      kept = make_block(8);
      write_two_past(kept, 8);
    } else if (strcmp(what, "uaf_write_recycled") == 0) {
      char* p = make_block(40);
      free_block(p);
      write_freed(p);
      free_block(make_block(16));
    } else if (strcmp(what, "realloc_stale") == 0) {
      char* p = make_block(16);
      char* q = grow_block(p, 32);
      if (q != p) write_stale(p);
      free_block(q);
    } else if (strcmp(what, "aligned_overflow") == 0) {
      char* p = make_aligned_block(64, 24);
      if ((uintptr_t)p % 64 != 0) abort();
      write_past(p, 24);
      free_block(p);
    } else if (strcmp(what, "large_overflow") == 0) {
      char* p = make_block(100000);
      write_past(p, 100000);
      free_block(p);
    } else if (strcmp(what, "large_calloc_overflow") == 0) {
      char* p = make_zeroed_block(300000);
      if (p[0] != 0 || p[299999] != 0) abort();
      write_past(p, 300000);
      free_block(p);
    } else if (strcmp(what, "large_aligned_overflow") == 0) {
      char* p = make_aligned_block(4096, 100000);
      if ((uintptr_t)p % 4096 != 0) abort();
      write_past(p, 100000);
      free_block(p);
    } else if (strcmp(what, "large_uaf_write") == 0) {
      char* p = make_block(100000);
      free_block(p);
      write_freed(p);
    } else if (strcmp(what, "many") == 0) {
      char* blocks[20];
      for (int b = 0; b < 20; ++b) {
        blocks[b] = make_block(16 + (size_t)b);
        write_past(blocks[b], 16 + (size_t)b);
      }
      for (int b = 0; b < 10; ++b) free_block(blocks[b]);
      kept = blocks[10];  // the other ten stay live (reachable): found at exit
    } else if (strcmp(what, "double_free") == 0) {
      char* p = make_block(16);
      free_block(p);
      free_again(p);
    } else if (strcmp(what, "free_stack") == 0) {
      char local[16];
      char* p = local;
      HIDE(p);
      free_stack_pointer(p);
    } else if (strcmp(what, "churn") == 0) {
      free_block(make_block(32));
    } else if (strcmp(what, "none") != 0) {
      fprintf(stderr, "unknown case %s\n", what);
      return 2;
    }
  }
  printf("%s: done\n", what);
  return 0;
}
