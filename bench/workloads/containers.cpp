// Whole-process workload: insert/erase loops on the C++ containers programs allocate through
// (std::map, std::unordered_map, std::string, std::vector), each with a bounded, non-LIFO
// working set, so every phase allocates and frees all the time through operator new/delete.
// Usage: containers [rounds=1]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::size_t kLive = 4096;  // elements kept alive per phase
constexpr int kOpsPerRound = 200000;

struct Rng {
  uint32_t x;
  uint32_t next() { return x = x * 1103515245u + 12345u, x >> 8; }
};

// Keys longer than 15 characters, so std::string cannot keep them inline (SSO).
std::string make_key(uint32_t n) {
  return "memtrack-bench-key-" + std::to_string(n % 100003);
}

__attribute__((noinline)) uint64_t map_phase(Rng& rng) {
  std::map<uint32_t, std::string> m;
  uint64_t sum = 0;
  for (int i = 0; i < kOpsPerRound; ++i) {
    uint32_t k = rng.next();
    m.emplace(k, make_key(k));
    if (m.size() > kLive) {
      auto it = m.lower_bound(rng.next());
      if (it == m.end()) it = m.begin();
      sum += it->second.size();
      m.erase(it);
    }
  }
  return sum + m.size();
}

__attribute__((noinline)) uint64_t unordered_map_phase(Rng& rng) {
  std::unordered_map<std::string, uint64_t> m;
  std::vector<std::string> keys;
  keys.reserve(kLive + 1);
  uint64_t sum = 0;
  for (int i = 0; i < kOpsPerRound; ++i) {
    std::string key = make_key(rng.next());
    auto [it, inserted] = m.emplace(key, i);
    sum += it->second;
    if (inserted) keys.push_back(std::move(key));
    if (keys.size() > kLive) {
      std::size_t victim = rng.next() % keys.size();
      m.erase(keys[victim]);
      keys[victim] = std::move(keys.back());
      keys.pop_back();
    }
  }
  return sum + m.size();
}

__attribute__((noinline)) uint64_t string_phase(Rng& rng) {
  std::vector<std::string> live(kLive);
  uint64_t sum = 0;
  for (int i = 0; i < kOpsPerRound; ++i) {
    std::string& s = live[rng.next() % kLive];
    uint32_t r = rng.next();
    if (s.size() > 200 || r % 8 == 0) {
      s = make_key(r);  // shrink back: a fresh allocation
    } else {
      s += make_key(r).substr(r % 8);  // grow: reallocation through operator new/delete
    }
    sum += s.size();
  }
  return sum;
}

__attribute__((noinline)) uint64_t vector_phase(Rng& rng) {
  std::vector<std::vector<uint32_t>> live(kLive / 4);
  uint64_t sum = 0;
  for (int i = 0; i < kOpsPerRound; ++i) {
    std::vector<uint32_t>& v = live[rng.next() % live.size()];
    uint32_t r = rng.next();
    if (v.size() > 300 || r % 16 == 0) {
      std::vector<uint32_t>().swap(v);  // release the buffer
    } else {
      for (uint32_t j = 0; j < 1 + r % 24; ++j) v.push_back(r + j);  // grows geometrically
      if (r % 3 == 0 && !v.empty()) v.erase(v.begin() + r % v.size());
    }
    sum += v.size();
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
  Rng rng{20240607};
  uint64_t sum = 0;
  for (int r = 0; r < rounds; ++r) {
    sum += map_phase(rng);
    sum += unordered_map_phase(rng);
    sum += string_phase(rng);
    sum += vector_phase(rng);
  }
  std::printf("%d rounds, checksum %llu\n", rounds, static_cast<unsigned long long>(sum));
  return 0;
}
