// Fuzz target: the LIBSVM dataset reader of P4SGD's training
// (protocols/p4sgd/glm/p4sgd-glm.h, Dataset::FromLibsvmStream). Byte 0 picks the feature
// precision (1..8 bits) and the loss (label mapping); the rest is the file.
// Any text must give a dataset or std::invalid_argument naming line and
// problem; a dataset must hold only quantized values below 2^bits, labels of
// its loss, and give a finite loss for the zero model.
#include "protocols/p4sgd/glm/p4sgd-glm.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  namespace glm = inasim::glm;
  const uint32_t bits = 1 + (data[0] & 7);
  const glm::Loss loss = (data[0] >> 3) % 3 == 0 ? glm::Loss::kLinear
                         : (data[0] >> 3) % 3 == 1 ? glm::Loss::kLogistic
                                                   : glm::Loss::kHinge;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    // 64 MiB of dense matrix at most: a fuzzer must not reach for gigabytes.
    const glm::Dataset d = glm::Dataset::FromLibsvmStream(in, "fuzz.svm", bits, loss, 0, 64ull << 20);
    if (d.samples == 0 || d.features == 0 || d.x.size() != uint64_t{d.samples} * d.features ||
        d.y.size() != d.samples)
      std::abort();
    for (uint8_t v : d.x)
      if (v >> bits) std::abort();
    for (int32_t y : d.y) {
      if (loss == glm::Loss::kLogistic && y != 0 && y != glm::kOne) std::abort();
      if (loss == glm::Loss::kHinge && y != glm::kOne && y != -glm::kOne) std::abort();
    }
    if (d.samples * uint64_t{d.features} <= (1u << 20)) {
      const std::vector<int32_t> zero(d.features, 0);
      if (!std::isfinite(glm::MeanLoss(d, zero, loss))) std::abort();
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
