// P4SGD's training arithmetic (protocols/p4sgd/glm/p4sgd-glm.h) and the worker's stage
// times (p4sgd §4.1), on worked examples computed by hand.
#include "protocols/p4sgd/glm/p4sgd-glm.h"
#include "protocols/p4sgd/host/p4sgd-job.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace glm = inasim::glm;

namespace {

glm::Dataset Tiny(std::vector<uint8_t> x, uint32_t features, std::vector<int32_t> y, uint32_t bits = 4) {
  glm::Dataset d;
  d.samples = static_cast<uint32_t>(y.size());
  d.features = features;
  d.bits = bits;
  d.x = std::move(x);
  d.y = std::move(y);
  return d;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string LibsvmError(const std::string& text) {
  try {
    glm::Dataset::FromLibsvm(WriteTemp("bad.svm", text), 4, glm::Loss::kLogistic);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(P4SGDGlm, PartialActivationIsTheShiftedDotProductOfTheWorkersFeatures) {
  // x_q = [15, 8, 0] (4 bits: 15/16, 8/16, 0), w = [1.0, -0.5, 7/65536] in Q16.
  const glm::Dataset d = Tiny({15, 8, 0}, 3, {0});
  const std::vector<int32_t> w = {65536, -32768, 7};
  const auto a = glm::PartialActivations(d, w, {0, 3}, 0);
  EXPECT_EQ(a[0], (15 * 65536 - 8 * 32768) >> 4);  // 45056 = 0.6875 in Q16
  for (int k = 1; k < 8; ++k) EXPECT_EQ(a[k], 0);    // no samples past the end
  // Split over two workers: each shifts its own sum (the switch adds the words).
  EXPECT_EQ(glm::PartialActivations(d, w, {0, 1}, 0)[0], 61440);
  EXPECT_EQ(glm::PartialActivations(d, w, {1, 3}, 0)[0], -16384);
}

TEST(P4SGDGlm, SampleGradientsOfTheThreeLosses) {
  constexpr int32_t one = glm::kOne;
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kLinear, 3 * one, one), 2 * one);
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kLogistic, 0, one), -one / 2);   // sigmoid(0) - 1
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kLogistic, 0, 0), one / 2);
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kHinge, one / 2, one), -one);    // margin 0.5 < 1
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kHinge, 2 * one, one), 0);       // margin 2
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kHinge, -one, -one), 0);         // margin exactly 1
  EXPECT_EQ(glm::SampleGradient(glm::Loss::kHinge, one, -one), one);
}

TEST(P4SGDGlm, GradientAccumulationAndUpdateRounding) {
  const glm::Dataset d = Tiny({3, 1, 2, 0}, 2, {0, 0});
  std::vector<int64_t> grad(2, 0);
  std::array<int32_t, 8> g{};
  g[0] = 10;
  g[1] = -4;
  glm::AccumulateGradient(d, {0, 2}, 0, g, grad);
  EXPECT_EQ(grad[0], 10 * 3 - 4 * 2);
  EXPECT_EQ(grad[1], 10 * 1 - 4 * 0);
  std::vector<int32_t> w = {100, 100};
  // lr 0.5, batch 2, 4 bits: step = round(0.5 * grad / 32): 22 -> round(0.34375) = 0, 10 -> 0.
  glm::ApplyUpdate(w, {0, 2}, grad, 0.5, 2, 4);
  EXPECT_EQ(w, (std::vector<int32_t>{100, 100}));
  EXPECT_EQ(grad, (std::vector<int64_t>{0, 0}));  // cleared for the next mini-batch
  grad = {96, -48};
  glm::ApplyUpdate(w, {0, 2}, grad, 0.5, 2, 4);  // steps 1.5 -> 2, -0.75 -> -1
  EXPECT_EQ(w, (std::vector<int32_t>{98, 101}));
  EXPECT_EQ(glm::GradientWord(-33, 4), -3);  // arithmetic shift: floor(-33 / 16)
}

TEST(P4SGDGlm, FeaturesSplitContiguouslyOverWorkers) {
  EXPECT_EQ(glm::FeaturesOf(10, 3, 0).begin, 0u);
  EXPECT_EQ(glm::FeaturesOf(10, 3, 0).end, 3u);
  EXPECT_EQ(glm::FeaturesOf(10, 3, 1).end, 6u);
  EXPECT_EQ(glm::FeaturesOf(10, 3, 2).end, 10u);
}

TEST(P4SGDGlm, LibsvmFeaturesAreMinMaxScaledAndQuantized) {
  const std::string path = WriteTemp("ok.svm", "1 1:0.5 3:1\n# comment\n-1 2:2\n");
  const glm::Dataset d = glm::Dataset::FromLibsvm(path, 4, glm::Loss::kLogistic);
  EXPECT_EQ(d.samples, 2u);
  EXPECT_EQ(d.features, 3u);
  EXPECT_EQ(d.x, (std::vector<uint8_t>{15, 0, 15, 0, 15, 0}));  // each column's max -> 15, zero -> 0
  EXPECT_EQ(d.y, (std::vector<int32_t>{glm::kOne, 0}));
  const glm::Dataset h = glm::Dataset::FromLibsvm(path, 4, glm::Loss::kHinge);
  EXPECT_EQ(h.y, (std::vector<int32_t>{glm::kOne, -glm::kOne}));
}

TEST(P4SGDGlm, LibsvmErrorsNameFileLineAndProblem) {
  EXPECT_NE(LibsvmError("1 1:1\n1 3:1 2:1\n").find("bad.svm:2: feature indices must increase"), std::string::npos);
  EXPECT_NE(LibsvmError("x 1:1\n").find("bad.svm:1: bad label 'x'"), std::string::npos);
  EXPECT_NE(LibsvmError("1 0:1\n").find("feature index must be 1.."), std::string::npos);
  EXPECT_NE(LibsvmError("1 2\n").find("expected index:value"), std::string::npos);
  EXPECT_NE(LibsvmError("1 2:nan\n").find("not finite"), std::string::npos);
  EXPECT_NE(LibsvmError("").find("no samples"), std::string::npos);
  // Found by the fuzzer (protocols/p4sgd/tests/fuzz-corpus-libsvm): labels without features.
  EXPECT_NE(LibsvmError("-2\n+1\n").find("no feature values"), std::string::npos);
  // A binary file: the token shown escaped and cut at 40 characters, not raw bytes.
  const std::string binary = LibsvmError(std::string("\x01\xff") + std::string(60, 'z') + " 1:1\n");
  EXPECT_NE(binary.find("bad label '\\x01\\xff" + std::string(38, 'z') + "...'"), std::string::npos) << binary;
}

TEST(P4SGDGlm, SyntheticDataIsDeterministicSparseAndLearnable) {
  const auto a = glm::Dataset::Synthetic(256, 64, 4, glm::Loss::kLogistic, 9, 0.25);
  const auto b = glm::Dataset::Synthetic(256, 64, 4, glm::Loss::kLogistic, 9, 0.25);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  size_t nonzero = 0;
  for (uint8_t v : a.x) nonzero += v != 0;
  EXPECT_NEAR(static_cast<double>(nonzero) / a.x.size(), 0.25, 0.03);
  glm::TrainSpec spec;
  spec.workers = 2;
  spec.minibatch = 32;
  spec.epochs = 5;
  spec.learning_rate = 1.0;
  std::vector<double> loss;
  glm::ReferenceTrain(a, spec, loss);
  ASSERT_EQ(loss.size(), 5u);
  EXPECT_LT(loss[4], loss[0]);
  EXPECT_LT(loss[0], 0.6931);
}

TEST(P4SGDStageTimes, BitSerialBanksAndHbm) {
  inasim::P4SGDSpec s;  // 8 engines, 250 MHz, 64 features/cycle/bank, 4 bits, 32 fill cycles
  // 1,024 features: 128 per engine -> 2 x 4 = 8 cycles; HBM 8 x 128 x 4 bits at 460 Gb/s = 8.9 ns = 3 cycles.
  auto t = inasim::StageTimes(s, 1024);
  EXPECT_EQ(t.forward_cycles, 8u + 32);
  EXPECT_EQ(t.backward_cycles, 8u + 32);
  EXPECT_EQ(t.update_cycles, 2u + 32);
  EXPECT_EQ(t.forward_ps, 40u * 4000);
  // A slow memory makes the forward pass HBM-bound; backward reads the bank FIFOs.
  s.hbm_gbps_per_engine = 10;  // 4096 bits / 10 Gb/s = 409.6 ns = 103 cycles (rounded up)
  t = inasim::StageTimes(s, 1024);
  EXPECT_EQ(t.forward_cycles, 103u + 32);
  EXPECT_EQ(t.backward_cycles, 8u + 32);
}
