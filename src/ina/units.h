// Human-readable sizes and times for summaries (results files keep raw numbers),
// and the integer rounding every packetiser shares.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace inasim {

/// Whole b-sized pieces needed to hold a (b > 0).
inline constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

inline double PsToS(uint64_t ps) { return static_cast<double>(ps) * 1e-12; }

inline std::string HumanBytes(uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 20) == 0) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= (1ull << 20) && b % (1ull << 10) == 0) return fmt::format("{:.2f} MiB", b / double(1ull << 20));
  if (b >= 1'000'000) return fmt::format("{:.2f} MB", b / 1e6);
  return fmt::format("{} B", b);
}

inline std::string HumanTime(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

}  // namespace inasim
