#include "protocols/p4sgd/glm/p4sgd-glm.h"

#include "topology/split_mix64.h"

#include "common/bounded_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace inasim::glm {

namespace {


int32_t Wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

int32_t LabelOf(Loss loss, double v) {
  switch (loss) {
    case Loss::kLinear: return static_cast<int32_t>(std::llround(v * kOne));
    case Loss::kLogistic: return v > 0 ? kOne : 0;
    case Loss::kHinge: return v > 0 ? kOne : -kOne;
  }
  return 0;
}

}  // namespace

Loss ParseLoss(const std::string& name) {
  if (name == "linear") return Loss::kLinear;
  if (name == "logistic") return Loss::kLogistic;
  if (name == "hinge") return Loss::kHinge;
  throw std::invalid_argument("must be \"linear\", \"logistic\" or \"hinge\", got \"" + name + "\"");
}

const char* LossName(Loss loss) {
  switch (loss) {
    case Loss::kLinear: return "linear";
    case Loss::kLogistic: return "logistic";
    case Loss::kHinge: return "hinge";
  }
  return "?";
}

Dataset Dataset::Synthetic(uint32_t samples, uint32_t features, uint32_t bits, Loss loss, uint64_t seed,
                           double density) {
  Dataset d;
  d.samples = samples;
  d.features = features;
  d.bits = bits;
  d.source = "synthetic(seed " + std::to_string(seed) + ", density " + std::to_string(density).substr(0, 5) + ")";
  d.x.resize(static_cast<size_t>(samples) * features);
  d.y.resize(samples);
  const uint32_t mask = (1u << bits) - 1;
  std::vector<double> hidden(features);
  double hidden_sum = 0;
  for (uint32_t j = 0; j < features; ++j) {
    const uint64_t r = topo::SplitMix64Hash(seed ^ topo::SplitMix64Hash(0x51u + j));
    hidden[j] = static_cast<double>(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    hidden_sum += hidden[j];
  }
  // A non-zero feature is uniform in 1..mask (mean (mask + 1) / 2 levels).
  const double mean = hidden_sum * density * 0.5;
  const uint64_t threshold = static_cast<uint64_t>(density * 0x1.0p32);
  // Scale so the activations spread over a few units whatever the size.
  const double scale = 4.0 / std::sqrt(std::max(1.0, static_cast<double>(features) * density));
  for (uint32_t i = 0; i < samples; ++i) {
    double dot = 0;
    for (uint32_t j = 0; j < features; ++j) {
      const uint64_t r = topo::SplitMix64Hash(seed ^ topo::SplitMix64Hash((static_cast<uint64_t>(i) << 32) | j));
      const uint8_t q = (r >> 32) < threshold ? static_cast<uint8_t>(1 + (r & 0xffff) % mask) : 0;
      d.x[static_cast<size_t>(i) * features + j] = q;
      dot += static_cast<double>(q) / (mask + 1) * hidden[j];
    }
    d.y[i] = LabelOf(loss, (dot - mean) * scale);
  }
  return d;
}

Dataset Dataset::FromLibsvm(const std::string& path, uint32_t bits, Loss loss, uint32_t max_samples) {
  // A regular file of at most 4 GiB (util::kMaxDatasetFileBytes): /dev/zero or
  // a FIFO would otherwise be read (or waited for) without end.
  util::CheckRegularFile(path, util::kMaxDatasetFileBytes, "LIBSVM dataset");
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open");
  return FromLibsvmStream(in, path, bits, loss, max_samples);
}

Dataset Dataset::FromLibsvmStream(std::istream& in, const std::string& path, uint32_t bits, Loss loss,
                                  uint32_t max_samples, uint64_t max_matrix_bytes) {
  if (bits < 1 || bits > 8) throw std::invalid_argument(path + ": precision must be 1..8 bits");
  struct Row {
    double label;
    std::vector<std::pair<uint32_t, double>> values;
  };
  std::vector<Row> rows;
  uint32_t features = 0;
  std::string line;
  uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Row r;
    std::string tok;
    if (!(ls >> tok)) continue;
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(path + ":" + std::to_string(line_no) + ": " + what);
    };
    // A token as the message shows it: printable, at most 40 characters (a binary file is not text).
    auto shown = [](const std::string& t) {
      std::string out;
      for (unsigned char c : t.substr(0, 40)) {
        char esc[5];
        std::snprintf(esc, sizeof esc, "\\x%02x", c);
        out += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : std::string(esc);
      }
      return t.size() > 40 ? out + "..." : out;
    };
    try {
      size_t used = 0;
      r.label = std::stod(tok, &used);
      if (used != tok.size()) fail("bad label '" + shown(tok) + "'");
    } catch (const std::logic_error&) {
      fail("bad label '" + shown(tok) + "'");
    }
    uint32_t last = 0;
    while (ls >> tok) {
      const size_t colon = tok.find(':');
      if (colon == std::string::npos || colon == 0) fail("expected index:value, got '" + shown(tok) + "'");
      uint64_t idx = 0;
      double v = 0;
      try {
        size_t used = 0;
        idx = std::stoull(tok.substr(0, colon), &used);
        if (used != colon) fail("bad feature index in '" + shown(tok) + "'");
        v = std::stod(tok.substr(colon + 1), &used);
        if (used != tok.size() - colon - 1) fail("bad feature value in '" + shown(tok) + "'");
      } catch (const std::logic_error&) {
        fail("bad index:value '" + shown(tok) + "'");
      }
      if (idx == 0 || idx > (1u << 24)) fail("feature index must be 1..16777216, got " + std::to_string(idx));
      if (idx <= last) fail("feature indices must increase");
      if (!std::isfinite(v)) fail("feature value is not finite");
      last = static_cast<uint32_t>(idx);
      r.values.emplace_back(static_cast<uint32_t>(idx - 1), v);
      features = std::max(features, last);
    }
    rows.push_back(std::move(r));
    if (max_samples && rows.size() == max_samples) break;
  }
  if (rows.empty()) throw std::invalid_argument(path + ": no samples");
  if (features == 0) throw std::invalid_argument(path + ": no feature values (every sample is a label alone)");
  if (static_cast<uint64_t>(rows.size()) * features > max_matrix_bytes)
    throw std::invalid_argument(path + ": " + std::to_string(rows.size()) + " x " + std::to_string(features) +
                                " features exceed " + std::to_string(max_matrix_bytes >> 20) +
                                " MiB as a dense quantized matrix");
  // Min-max per column over the stored values and the implicit zeros.
  std::vector<double> lo(features, 0.0), hi(features, 0.0);
  for (const Row& r : rows)
    for (const auto& [j, v] : r.values) {
      lo[j] = std::min(lo[j], v);
      hi[j] = std::max(hi[j], v);
    }
  Dataset d;
  d.samples = static_cast<uint32_t>(rows.size());
  d.features = features;
  d.bits = bits;
  d.source = path;
  d.x.assign(static_cast<size_t>(d.samples) * features, 0);
  d.y.resize(d.samples);
  const double levels = static_cast<double>(1u << bits);
  for (uint32_t i = 0; i < d.samples; ++i) {
    for (uint32_t j = 0; j < features; ++j) {
      // The implicit zero of a sparse row, scaled like the others.
      if (hi[j] > lo[j])
        d.x[static_cast<size_t>(i) * features + j] =
            static_cast<uint8_t>(std::min(levels - 1, std::floor((0.0 - lo[j]) / (hi[j] - lo[j]) * levels)));
    }
    for (const auto& [j, v] : rows[i].values) {
      const double t = hi[j] > lo[j] ? (v - lo[j]) / (hi[j] - lo[j]) : 0.0;
      d.x[static_cast<size_t>(i) * features + j] = static_cast<uint8_t>(std::min(levels - 1, std::floor(t * levels)));
    }
    d.y[i] = LabelOf(loss, rows[i].label);
  }
  return d;
}

FeatureRange FeaturesOf(uint32_t features, uint32_t workers, uint32_t w) {
  const uint64_t b = static_cast<uint64_t>(features) * w / workers;
  const uint64_t e = static_cast<uint64_t>(features) * (w + 1) / workers;
  return {static_cast<uint32_t>(b), static_cast<uint32_t>(e)};
}

std::array<int32_t, kMicroBatch> PartialActivations(const Dataset& d, const std::vector<int32_t>& model,
                                                    FeatureRange r, uint32_t first) {
  std::array<int32_t, kMicroBatch> a{};
  for (uint32_t k = 0; k < kMicroBatch; ++k) {
    const uint32_t i = first + k;
    if (i >= d.samples) break;
    const uint8_t* row = d.x.data() + static_cast<size_t>(i) * d.features;
    int64_t acc = 0;
    for (uint32_t j = r.begin; j < r.end; ++j) acc += static_cast<int64_t>(row[j]) * model[j];
    a[k] = Wrap32(acc >> d.bits);
  }
  return a;
}

int32_t SampleGradient(Loss loss, int32_t activation, int32_t label) {
  switch (loss) {
    case Loss::kLinear: return Wrap32(static_cast<int64_t>(activation) - label);
    case Loss::kLogistic: {
      const double p = 1.0 / (1.0 + std::exp(-static_cast<double>(activation) / kOne));
      return Wrap32(std::llround(p * kOne) - label);
    }
    case Loss::kHinge:
      // d/da max(0, 1 - y a) = -y where y a < 1.
      return static_cast<int64_t>(label) * activation < static_cast<int64_t>(kOne) * kOne ? -label : 0;
  }
  return 0;
}

void AccumulateGradient(const Dataset& d, FeatureRange r, uint32_t first, const std::array<int32_t, kMicroBatch>& g,
                        std::vector<int64_t>& grad) {
  for (uint32_t k = 0; k < kMicroBatch; ++k) {
    const uint32_t i = first + k;
    if (i >= d.samples || g[k] == 0) continue;
    const uint8_t* row = d.x.data() + static_cast<size_t>(i) * d.features;
    const int64_t gk = g[k];
    for (uint32_t j = r.begin; j < r.end; ++j) grad[j - r.begin] += gk * row[j];
  }
}

void ApplyUpdate(std::vector<int32_t>& model, FeatureRange r, std::vector<int64_t>& grad, double lr, uint32_t batch,
                 uint32_t bits) {
  const double denom = static_cast<double>(batch) * static_cast<double>(1u << bits);
  for (uint32_t j = r.begin; j < r.end; ++j) {
    model[j] = Wrap32(static_cast<int64_t>(model[j]) - std::llround(lr * static_cast<double>(grad[j - r.begin]) / denom));
    grad[j - r.begin] = 0;
  }
}

int32_t GradientWord(int64_t grad, uint32_t bits) { return Wrap32(grad >> bits); }

void ApplySummedUpdate(std::vector<int32_t>& model, const std::vector<int32_t>& summed, double lr, uint32_t batch) {
  for (size_t j = 0; j < model.size(); ++j)
    model[j] = Wrap32(static_cast<int64_t>(model[j]) - std::llround(lr * static_cast<double>(summed[j]) / batch));
}

double MeanLoss(const Dataset& d, const std::vector<int32_t>& model, Loss loss) {
  double sum = 0;
  const FeatureRange all{0, d.features};
  for (uint32_t first = 0; first < d.samples; first += kMicroBatch) {
    const auto a = PartialActivations(d, model, all, first);
    for (uint32_t k = 0; k < kMicroBatch && first + k < d.samples; ++k) {
      const double act = static_cast<double>(a[k]) / kOne;
      const double y = static_cast<double>(d.y[first + k]) / kOne;
      switch (loss) {
        case Loss::kLinear: sum += 0.5 * (act - y) * (act - y); break;
        case Loss::kLogistic: {
          // log(1 + e^a) - y a, stable for large |a|.
          const double softplus = act > 0 ? act + std::log1p(std::exp(-act)) : std::log1p(std::exp(act));
          sum += softplus - y * act;
          break;
        }
        case Loss::kHinge: sum += std::max(0.0, 1.0 - y * act); break;
      }
    }
  }
  return sum / d.samples;
}

std::vector<int32_t> ReferenceTrain(const Dataset& d, const TrainSpec& spec, std::vector<double>& epoch_loss) {
  std::vector<int32_t> model(d.features, 0);
  const uint32_t mbs = spec.MinibatchesPerEpoch(d);
  const uint32_t W = spec.workers;
  epoch_loss.clear();
  if (!spec.data_parallel) {
    std::vector<std::vector<int64_t>> grad(W);
    for (uint32_t w = 0; w < W; ++w) grad[w].assign(FeaturesOf(d.features, W, w).size(), 0);
    for (uint32_t e = 0; e < spec.epochs; ++e) {
      for (uint32_t k = 0; k < mbs; ++k) {
        for (uint32_t m = 0; m < spec.minibatch / kMicroBatch; ++m) {
          const uint32_t first = k * spec.minibatch + m * kMicroBatch;
          std::array<int32_t, kMicroBatch> full{};
          for (uint32_t w = 0; w < W; ++w) {
            const auto a = PartialActivations(d, model, FeaturesOf(d.features, W, w), first);
            for (uint32_t l = 0; l < kMicroBatch; ++l)
              full[l] = static_cast<int32_t>(static_cast<uint32_t>(full[l]) + static_cast<uint32_t>(a[l]));
          }
          std::array<int32_t, kMicroBatch> g{};
          for (uint32_t l = 0; l < kMicroBatch; ++l)
            g[l] = first + l < d.samples ? SampleGradient(spec.loss, full[l], d.y[first + l]) : 0;
          for (uint32_t w = 0; w < W; ++w) AccumulateGradient(d, FeaturesOf(d.features, W, w), first, g, grad[w]);
        }
        for (uint32_t w = 0; w < W; ++w)
          ApplyUpdate(model, FeaturesOf(d.features, W, w), grad[w], spec.learning_rate, spec.minibatch, d.bits);
      }
      epoch_loss.push_back(MeanLoss(d, model, spec.loss));
    }
    return model;
  }
  // Data-parallel: worker w owns samples [w B/W, (w+1) B/W) of each mini-batch.
  const FeatureRange all{0, d.features};
  std::vector<int64_t> grad(d.features);
  std::vector<int32_t> summed(d.features);
  for (uint32_t e = 0; e < spec.epochs; ++e) {
    for (uint32_t k = 0; k < mbs; ++k) {
      std::fill(summed.begin(), summed.end(), 0);
      for (uint32_t w = 0; w < W; ++w) {
        std::fill(grad.begin(), grad.end(), 0);
        const uint32_t lo = k * spec.minibatch + w * spec.minibatch / W;
        const uint32_t hi = k * spec.minibatch + (w + 1) * spec.minibatch / W;
        for (uint32_t first = lo; first < hi; first += kMicroBatch) {
          const auto a = PartialActivations(d, model, all, first);
          std::array<int32_t, kMicroBatch> g{};
          for (uint32_t l = 0; l < kMicroBatch && first + l < hi; ++l)
            g[l] = SampleGradient(spec.loss, a[l], d.y[first + l]);
          AccumulateGradient(d, all, first, g, grad);
        }
        for (uint32_t j = 0; j < d.features; ++j)
          summed[j] = static_cast<int32_t>(static_cast<uint32_t>(summed[j]) +
                                           static_cast<uint32_t>(GradientWord(grad[j], d.bits)));
      }
      ApplySummedUpdate(model, summed, spec.learning_rate, spec.minibatch);
    }
    epoch_loss.push_back(MeanLoss(d, model, spec.loss));
  }
  return model;
}

}  // namespace inasim::glm
