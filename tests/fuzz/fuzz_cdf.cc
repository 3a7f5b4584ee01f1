// Fuzz target: the flow-size CDF reader (src/congestion/flow_size_cdf.h).
// Any text must give a CDF or std::invalid_argument with file:line; a parsed
// CDF must sample sizes within its range and report a finite mean.
#include "congestion/flow_size_cdf.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto cdf = inasim::congestion::FlowSizeCdf::Parse(text, "fuzz.cdf");
    if (!std::isfinite(cdf.Mean()) || cdf.Mean() < 0) std::abort();
    for (double u : {0.0, 0.25, 0.5, 0.999999, 1.0}) {
      const uint64_t s = cdf.Sample(u);
      if (s < 1) std::abort();
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
