#include "core/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace memtrack::core {
namespace {

TEST(SamplingMath, ExpMatchesLibmOnTheRangeTheSamplerUses) {
  for (double x = 0.0; x > -800.0; x -= 0.01937) {
    double want = std::exp(x);
    double got = exp_nonpositive(x);
    if (x < -708.0) {
      EXPECT_EQ(got, 0.0) << x;  // 1 - exp(x) is 1 in doubles long before
    } else {
      EXPECT_NEAR(got / want, 1.0, 1e-14) << x;
    }
  }
  EXPECT_EQ(exp_nonpositive(0.0), 1.0);
  EXPECT_NEAR(exp_nonpositive(-1e-12), 1.0 - 1e-12, 1e-20);
}

TEST(SamplingMath, LogMatchesLibmFromDenormalsToHuge) {
  for (double x = 5e-324; x < 1e300; x *= 1.7391) {
    EXPECT_NEAR(log_positive(x), std::log(x), 1e-13 * std::fabs(std::log(x)) + 1e-15) << x;
  }
  for (double x = 0.5; x < 2.0; x += 0.001) {
    EXPECT_NEAR(log_positive(x), std::log(x), 1e-15) << x;
  }
  EXPECT_EQ(log_positive(1.0), 0.0);
}

TEST(SamplingMath, ProbabilityOfABlockIsOneMinusExpOfItsShareOfTheInterval) {
  EXPECT_NEAR(sample_probability(512 * 1024, 512 * 1024), 1.0 - std::exp(-1.0), 1e-15);
  EXPECT_NEAR(sample_probability(16, 512 * 1024), 16.0 / (512 * 1024), 1e-9);
  EXPECT_EQ(sample_probability(uint64_t{1} << 40, 1024), 1.0);
  EXPECT_GT(sample_probability(0, 1024), 0.0);  // counted as one byte
}

TEST(ByteSampler, IntervalsAreExponentialWithTheAskedMean) {
  ByteSampler sampler;
  sampler.take(1, 1000, 42);  // seeds it
  double sum = 0;
  double sum_squares = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double d = static_cast<double>(sampler.next_interval(1000));
    sum += d;
    sum_squares += d * d;
  }
  double mean = sum / n;
  double variance = sum_squares / n - mean * mean;
  EXPECT_NEAR(mean, 1000.0, 10.0);                 // standard error 1000/sqrt(n) = 2.2
  EXPECT_NEAR(std::sqrt(variance), 1000.0, 20.0);  // exponential: deviation = mean
}

TEST(ByteSampler, BlocksAreSampledWithTheirProbability) {
  // Blocks of 3 sizes interleaved; each size's sampled share matches p(size).
  const uint64_t interval = 4096;
  const uint64_t sizes[] = {16, 1024, 16384};
  int sampled[3] = {0, 0, 0};
  const int rounds = 300000;
  ByteSampler sampler;
  for (int i = 0; i < rounds; ++i) {
    for (int k = 0; k < 3; ++k) sampled[k] += sampler.take(sizes[k], interval, 7) ? 1 : 0;
  }
  for (int k = 0; k < 3; ++k) {
    double p = sample_probability(sizes[k], interval);
    double sd = std::sqrt(p * (1 - p) / rounds);
    EXPECT_NEAR(static_cast<double>(sampled[k]) / rounds, p, 5 * sd + 1e-9) << sizes[k];
  }
}

TEST(ByteSampler, TheSameSeedGivesTheSameChoicesInAFreshThreadOrder) {
  // Each sampler seeded from one seed takes the next thread ordinal: two samplers with the
  // same seed differ (threads must not sample in lockstep).
  ByteSampler a;
  ByteSampler b;
  std::vector<bool> first;
  std::vector<bool> second;
  for (int i = 0; i < 2000; ++i) {
    first.push_back(a.take(100, 1000, 5));
    second.push_back(b.take(100, 1000, 5));
  }
  EXPECT_NE(first, second);
}

}  // namespace
}  // namespace memtrack::core
