// The browser tests' larger program: 500 leak groups, each from its own template instance
// (Site<N>::leak, so demangled names carry '<', '>' and '&'), a definitely lost list with two
// indirectly lost nodes, a mismatched free (new[] released with delete) and a descriptor left
// open. With an argument SECONDS it first leaks 100 bytes every 50 ms from grow_site() for that
// long, so a run with --expire sees a GROWING site.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

// Keeps the compiler from proving a block unused and deleting the allocation.
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

// Read at run time, so the compiler cannot unroll a loop into several call sites (groups).
volatile int repeat[3] = {1, 2, 3};

template <int N>
struct Site {
  // Group N: N % 3 + 1 blocks of 16 + 8 * N bytes.
  __attribute__((noinline)) static void leak(const std::string& tag) {
    for (int i = 0; i < repeat[N % 3]; ++i) {
      char* block = new char[16 + 8 * N];
      block[0] = tag[0];
      ESCAPE(block);
    }
  }
};

template <size_t... N>
void leak_all(std::index_sequence<N...>) {
  const std::string tag = "x";
  (Site<static_cast<int>(N)>::leak(tag), ...);
}

struct Node {
  Node* next;
  char payload[40];
};

__attribute__((noinline)) Node* make_node(Node* next) {
  Node* node = new Node{};
  node->next = next;
  return node;
}

__attribute__((noinline)) void lose_list() {
  Node* head = make_node(make_node(make_node(nullptr)));
  ESCAPE(head);
}

// The compiler would see the mismatch here; it cannot through the opaque pointer.
__attribute__((noinline)) void release_one(int* number) {
  delete number;
}

__attribute__((noinline)) void mismatched_delete() {
  int* numbers = new int[10];
  ESCAPE(numbers);
  release_one(numbers);  // deliberately the wrong delete: new[] released with delete
}

__attribute__((noinline)) void open_and_forget() {
  int fd = open("/dev/null", O_RDONLY);
  ESCAPE(&fd);
}

__attribute__((noinline)) void grow_site() {
  void* block = malloc(100);
  ESCAPE(block);
}

int main(int argc, char** argv) {
  if (argc > 1) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(atoi(argv[1]));
    while (std::chrono::steady_clock::now() < end) {
      grow_site();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  leak_all(std::make_index_sequence<500>());
  lose_list();
  mismatched_delete();
  open_and_forget();
  return 0;
}
