// The sampled mode's choice of allocations (docs/sampling.md): a Poisson process over the
// bytes a thread allocates, as tcmalloc and jemalloc sample. Each thread counts down the
// bytes to its next sample point; an allocation that reaches it is sampled, and the next
// point is an exponential draw of mean `interval` bytes past the end of that allocation (the
// process is memoryless, so what is left of the allocation does not matter). A block of `s`
// bytes is therefore sampled with probability p(s) = 1 - exp(-s / interval), independently
// of every other block, and s / p(s) bytes and 1 / p(s) blocks per sampled block are
// unbiased estimates of what all blocks of a site hold.
// Runtime-safe and freestanding: no libm (exp and log are computed here), no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrack::core {

// exp(x) for x <= 0 (0 below -708, where the result would leave the normal doubles),
// accurate to a few ulp.
double exp_nonpositive(double x);
// The natural logarithm of x > 0 (denormals included), accurate to a few ulp.
double log_positive(double x);

// Probability that a block of `size` bytes is sampled at mean interval `interval` (> 0).
inline double sample_probability(uint64_t size, uint64_t interval) {
  if (size == 0) size = 1;  // a zero-byte block still advances nothing, but can be sampled
  return 1.0 - exp_nonpositive(-static_cast<double>(size) / static_cast<double>(interval));
}

// SplitMix64: the seeds of the threads' generators from one 64-bit seed.
inline uint64_t split_mix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xorshift64* (Vigna): fast, full period over the non-zero states. The state must not be 0.
inline uint64_t xorshift64_star(uint64_t& state) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1Dull;
}

// One thread's sampler. Zero-initialised memory is a valid sampler that has not drawn its
// first point yet (take() then calls start()).
class ByteSampler {
 public:
  // True if an allocation of `size` bytes is sampled. The common case is a subtraction and
  // a compare.
  bool take(uint64_t size, uint64_t interval, uint64_t seed) {
    if (size < bytes_left_) {
      bytes_left_ -= size;
      return false;
    }
    return take_slow(size, interval, seed);
  }

  // take()'s common case in two halves, for a caller that checks everything before it
  // changes anything: true if take(size) would pass the allocation by (a subtraction only),
  // and that subtraction.
  bool passes_by(uint64_t size) const { return size < bytes_left_; }
  void pass_by(uint64_t size) { bytes_left_ -= size; }

  // The next exponential draw of mean `interval`, at least 1.
  uint64_t next_interval(uint64_t interval);

 private:
  bool take_slow(uint64_t size, uint64_t interval, uint64_t seed);

  uint64_t bytes_left_ = 0;
  uint64_t rng_ = 0;  // xorshift64* state; 0 = not seeded yet
};

}  // namespace memtrack::core
