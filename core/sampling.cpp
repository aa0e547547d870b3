// The sampler and the two functions of libm it needs. Runtime-safe: no libc at all.
#include "core/sampling.h"

#include <atomic>
#include <cstring>

namespace memtrack::core {
namespace {

constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 in two parts (fdlibm's split)
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;

uint64_t bits_of(double x) {
  uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double double_of(uint64_t b) {
  double x = 0;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// 2^k for -1022 <= k <= 1023.
double power_of_two(int k) {
  return double_of(static_cast<uint64_t>(k + 1023) << 52);
}

// Ordinal of each thread's sampler, so threads seeded from one seed draw different points.
std::atomic<uint64_t> g_sampler_threads{0};

}  // namespace

double exp_nonpositive(double x) {
  if (!(x <= 0)) return 1.0;   // NaN or positive: not a caller's case
  if (x < -708.0) return 0.0;  // below the normal doubles: 1 - exp(x) is 1 anyway
  // x = k ln2 + r with |r| <= ln2 / 2, and exp(r) by its Taylor series (degree 13 leaves an
  // error below 2^-53 on that range).
  int k = static_cast<int>(x * kInvLn2 - 0.5);
  double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double term = 1.0;
  double sum = 1.0;
  for (int n = 1; n <= 13; ++n) {
    term *= r / n;
    sum += term;
  }
  return sum * power_of_two(k);
}

double log_positive(double x) {
  if (!(x > 0)) return -1e308;  // not a caller's case
  uint64_t b = bits_of(x);
  int e = static_cast<int>((b >> 52) & 0x7ff);
  if (e == 0) {  // denormal: scale into the normals first
    b = bits_of(x * power_of_two(54));
    e = static_cast<int>((b >> 52) & 0x7ff) - 54;
  }
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)), and log m = 2 atanh((m - 1) / (m + 1)).
  double m = double_of((b & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));
  e -= 1023;
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  double t = (m - 1.0) / (m + 1.0);
  double t2 = t * t;
  double power = t;
  double sum = 0.0;
  for (int n = 1; n <= 23; n += 2) {
    sum += power / n;
    power *= t2;
  }
  return 2.0 * sum + e * kLn2Lo + e * kLn2Hi;
}

uint64_t ByteSampler::next_interval(uint64_t interval) {
  // u in (0, 1]: 53 random bits, plus one so that log(u) is finite.
  double u = static_cast<double>((xorshift64_star(rng_) >> 11) + 1) * (1.0 / 9007199254740992.0);
  double draw = -log_positive(u) * static_cast<double>(interval);
  if (draw < 1.0) return 1;
  if (draw > 9.2e18) return uint64_t{1} << 63;
  return static_cast<uint64_t>(draw);
}

bool ByteSampler::take_slow(uint64_t size, uint64_t interval, uint64_t seed) {
  if (rng_ == 0) {
    uint64_t state = seed + g_sampler_threads.fetch_add(1, std::memory_order_relaxed);
    rng_ = split_mix64(state);
    if (rng_ == 0) rng_ = 1;
    bytes_left_ = next_interval(interval);
    if (size < bytes_left_) {
      bytes_left_ -= size;
      return false;
    }
  }
  bytes_left_ = next_interval(interval);
  return true;
}

}  // namespace memtrack::core
