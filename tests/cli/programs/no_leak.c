// Allocates and frees everything; exits with the status given as argv[1] (default 0).
#include "cli_util.h"

int main(int argc, char** argv) {
  for (int i = 0; i < 3; ++i) {
    void* p = malloc(64);
    ESCAPE(p);
    free(p);
  }
  return status_arg(argc, argv, 1);
}
