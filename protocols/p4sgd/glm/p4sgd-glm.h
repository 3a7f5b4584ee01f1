// P4SGD's training arithmetic, without a network: generalized linear models
// (linear regression, logistic regression, SVM hinge) trained by mini-batch SGD
// on quantized features, model-parallel (features split across workers, partial
// activations summed by the switch; p4sgd §2.2, Algorithm 1) or data-parallel
// (samples split, gradients summed; §2.1). Pure C++ (no ns-3): the simulated
// FPGA workers (p4sgd-job.cc) call these very functions, and `Reference*`
// replays the same training with the switch's sum done in place, so a
// simulated run must end with the identical model, bit for bit.
//
// Fixed point (ours; the paper gives the precision, not the formats):
//   features  x_q in [0, 2^bits), i.e. x = x_q / 2^bits in [0, 1) (MLWeaving's
//             weaved unsigned features, p4sgd §5.1: 4 bits);
//   weights, activations, labels and per-sample gradients int32 Q16 (16
//             fractional bits), two's complement;
//   partial activation a_w = (sum_j x_q[j] * w[j]) >> bits over the worker's
//             features, wrapped to int32; the switch adds int32 with wrap-around
//             (the P4's bit<32> adds), so the full activation is exact mod 2^32.
#pragma once

#include <array>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace inasim::glm {

inline constexpr int kFracBits = 16;
inline constexpr int32_t kOne = 1 << kFracBits;
/// Samples per micro-batch: one per bank (p4sgd §4.1.2, B' = 8), one int32 per
/// sample in a 64-byte packet (value1..value8).
inline constexpr uint32_t kMicroBatch = 8;

enum class Loss : uint8_t { kLinear, kLogistic, kHinge };
Loss ParseLoss(const std::string& name);  ///< "linear" | "logistic" | "hinge"; throws std::invalid_argument
const char* LossName(Loss loss);

/// Quantized features (row-major, samples x features, one byte per feature)
/// and Q16 labels: linear any value, logistic 0 or kOne, hinge -kOne or +kOne.
struct Dataset {
  uint32_t samples = 0, features = 0, bits = 4;
  std::vector<uint8_t> x;
  std::vector<int32_t> y;
  std::string source;  ///< "synthetic(seed)" or the LIBSVM path

  uint8_t at(uint32_t i, uint32_t j) const { return x[static_cast<size_t>(i) * features + j]; }
  /// A planted-model problem: each feature non-zero with probability
  /// `density` (sparse, as the LIBSVM sets of p4sgd Table II), then uniform in
  /// 1..2^bits-1; labels from a hidden weight vector (uniform in [-1, 1]) so
  /// that the data is learnable; deterministic for all arguments.
  static Dataset Synthetic(uint32_t samples, uint32_t features, uint32_t bits, Loss loss, uint64_t seed,
                           double density = 0.1);
  /// LIBSVM text ("label idx:value ..."), features min-max scaled per column
  /// to [0, 1) and quantized to `bits`; labels: linear as is, logistic
  /// (> 0 -> 1, else 0), hinge (> 0 -> +1, else -1). `max_samples` 0 = all.
  /// Throws std::invalid_argument naming the file, line and problem; the file
  /// must be a regular file of at most 4 GiB (util::kMaxDatasetFileBytes).
  static Dataset FromLibsvm(const std::string& path, uint32_t bits, Loss loss, uint32_t max_samples = 0);
  /// The same from a stream; `name` is used in messages. `max_matrix_bytes`
  /// bounds samples x features (one byte each) before anything is allocated.
  static Dataset FromLibsvmStream(std::istream& in, const std::string& name, uint32_t bits, Loss loss,
                                  uint32_t max_samples = 0, uint64_t max_matrix_bytes = 1ull << 32);
};

/// Worker w's features [begin, end) of a model split across n workers
/// (contiguous, sizes differ by at most one).
struct FeatureRange {
  uint32_t begin = 0, end = 0;
  uint32_t size() const { return end - begin; }
};
FeatureRange FeaturesOf(uint32_t features, uint32_t workers, uint32_t w);

/// Partial activations of samples [first, first + 8) over features `r`
/// (lane k = sample first + k; a sample past the dataset gives 0).
std::array<int32_t, kMicroBatch> PartialActivations(const Dataset& d, const std::vector<int32_t>& model,
                                                    FeatureRange r, uint32_t first);
/// dLoss/dActivation of one sample, Q16 (deterministic: same inputs, same bits).
int32_t SampleGradient(Loss loss, int32_t activation, int32_t label);
/// grad[j - r.begin] += g[k] * x_q[first + k][j] for the 8 samples (int64 accumulators).
void AccumulateGradient(const Dataset& d, FeatureRange r, uint32_t first, const std::array<int32_t, kMicroBatch>& g,
                        std::vector<int64_t>& grad);
/// w[j] -= round(lr * grad[j] / (batch * 2^bits)) for j in r; clears grad.
void ApplyUpdate(std::vector<int32_t>& model, FeatureRange r, std::vector<int64_t>& grad, double lr, uint32_t batch,
                 uint32_t bits);
/// Data-parallel: the gradient a worker sends, per feature: grad >> bits, wrapped to int32.
int32_t GradientWord(int64_t grad, uint32_t bits);
/// Data-parallel: w[j] -= round(lr * sum / batch) for the switch-summed words.
void ApplySummedUpdate(std::vector<int32_t>& model, const std::vector<int32_t>& summed, double lr, uint32_t batch);

/// Mean loss of `model` over the whole dataset (double, for reports).
double MeanLoss(const Dataset& d, const std::vector<int32_t>& model, Loss loss);

/// Training settings shared by the simulated workers and the reference.
struct TrainSpec {
  Loss loss = Loss::kLogistic;
  uint32_t workers = 1;
  uint32_t minibatch = 64;  ///< multiple of 8
  uint32_t epochs = 1;
  double learning_rate = 0.5;
  bool data_parallel = false;
  /// Mini-batches per epoch: floor(samples / minibatch) (a partial last one is left out).
  uint32_t MinibatchesPerEpoch(const Dataset& d) const { return d.samples / minibatch; }
};

/// The networkless run: the same arithmetic, sums done in place. Returns the
/// final model; `epoch_loss` gets MeanLoss after each epoch.
std::vector<int32_t> ReferenceTrain(const Dataset& d, const TrainSpec& spec, std::vector<double>& epoch_loss);

}  // namespace inasim::glm
