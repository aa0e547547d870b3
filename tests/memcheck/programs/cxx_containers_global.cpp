// A long std::string, a std::vector, a std::map and a std::unordered_map held by globals: all
// their heap blocks are still reachable. The containers live in static storage that is never
// destroyed (like absl::NoDestructor), so no destructor frees them at exit: the case is about
// the scan, not about static destructors.
// MEMCHECK: reachable 557 11
// REACHABLE: compare
#include <map>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memcheck_case.h"

template <typename T>
class NoDestroy {
 public:
  template <typename... Args>
  void emplace(Args&&... args) {
    new (storage_) T(std::forward<Args>(args)...);
  }
  T& get() { return *std::launder(reinterpret_cast<T*>(storage_)); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

NoDestroy<std::string> g_string;
NoDestroy<std::vector<long>> g_vector;
NoDestroy<std::map<int, long>> g_map;
NoDestroy<std::unordered_map<int, long>> g_unordered;

NOINLINE static void setup() {
  g_string.emplace(100, 'x');  // one 101-byte buffer (no SSO at this length)
  g_vector.emplace();
  g_vector.get().reserve(10);  // one 80-byte buffer, never regrown
  for (long i = 0; i < 10; ++i) g_vector.get().push_back(i);
  g_map.emplace();
  for (int i = 0; i < 4; ++i) g_map.get()[i] = i;  // 4 nodes of 48 bytes
  g_unordered.emplace();
  g_unordered.get().reserve(8);                          // the bucket array, allocated once
  for (int i = 0; i < 4; ++i) g_unordered.get()[i] = i;  // 4 nodes of 24 bytes
}

int main() {
  setup();
  scrub_stack();
  return 0;
}
