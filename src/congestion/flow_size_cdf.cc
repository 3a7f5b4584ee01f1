#include "congestion/flow_size_cdf.h"

#include "common/bounded_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace inasim::congestion {

namespace {

// Beyond 2^53 a double no longer holds every whole byte count, and the cast to
// uint64_t in Sample would be undefined further up.
constexpr double kMaxBytes = 9007199254740992.0;
constexpr double kLastProbabilityTolerance = 1e-9;

[[noreturn]] void Fail(std::string_view origin, size_t line, const std::string& problem) {
  throw std::invalid_argument(std::string(origin) + ":" + std::to_string(line) + ": " + problem);
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::vector<std::string_view> SplitWhitespace(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (true) {
    i = line.find_first_not_of(" \t\r\f\v", i);
    if (i == std::string_view::npos) return tokens;
    const size_t end = std::min(line.find_first_of(" \t\r\f\v", i), line.size());
    tokens.push_back(line.substr(i, end - i));
    i = end;
  }
}

// from_chars rather than strtod: locale-independent, and it reports where it
// stopped, so "12abc" is caught instead of read as 12.
std::optional<double> ParseDouble(std::string_view token) {
  double v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return v;
}

// One "<size> <probability>" line as written, kept as text so error messages
// quote the file's own spelling rather than a re-formatted double.
struct RawPoint {
  double size = 0, cdf = 0;
  std::string_view size_text, cdf_text;
  size_t line = 0;
};

double ParseNumberField(std::string_view token, const char* what, std::string_view origin, size_t line) {
  const std::optional<double> v = ParseDouble(token);
  if (!v) Fail(origin, line, std::string(what) + " " + Quote(token) + " is not a number");
  if (!std::isfinite(*v)) Fail(origin, line, std::string(what) + " " + Quote(token) + " is not finite");
  return *v;
}

RawPoint ParsePoint(const std::vector<std::string_view>& tokens, std::string_view origin, size_t line) {
  if (tokens.size() == 1) {
    Fail(origin, line, "expected '<size> <cumulative probability>', found one value " + Quote(tokens[0]));
  }
  if (tokens.size() > 2) Fail(origin, line, "unexpected " + Quote(tokens[2]) + " after the cumulative probability");
  RawPoint p{ParseNumberField(tokens[0], "size", origin, line),
             ParseNumberField(tokens[1], "cumulative probability", origin, line), tokens[0], tokens[1], line};
  if (p.size < 0) Fail(origin, line, "size " + std::string(p.size_text) + " is negative");
  if (p.cdf < 0 || p.cdf > 1) {
    Fail(origin, line, "cumulative probability " + std::string(p.cdf_text) + " is outside [0, 1]");
  }
  return p;
}

void CheckOrder(const RawPoint& prev, const RawPoint& p, std::string_view origin) {
  if (p.size < prev.size) {
    Fail(origin, p.line, "size " + std::string(p.size_text) + " is below the previous point's " +
                             std::string(prev.size_text));
  }
  if (p.cdf < prev.cdf) {
    Fail(origin, p.line, "cumulative probability " + std::string(p.cdf_text) + " is below the previous point's " +
                             std::string(prev.cdf_text));
  }
}

uint64_t ParseUnit(const std::vector<std::string_view>& tokens, std::string_view origin, size_t line) {
  if (tokens.size() != 2) Fail(origin, line, "expected 'unit <N>' (N bytes per size unit)");
  uint64_t unit = 0;
  const std::string_view t = tokens[1];
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), unit);
  if (ec != std::errc() || end != t.data() + t.size() || unit == 0) {
    Fail(origin, line, "unit " + Quote(t) + " is not a positive integer");
  }
  return unit;
}

// Rules that only make sense once every point has been read.
void CheckWhole(const std::vector<RawPoint>& raw, uint64_t unit, std::string_view origin, size_t last_line) {
  if (raw.empty()) {
    Fail(origin, std::max<size_t>(last_line, 1),
         "no points: a CDF needs at least 2 '<size> <cumulative probability>' lines");
  }
  const RawPoint& last = raw.back();
  if (raw.size() < 2) Fail(origin, last.line, "only one point: a CDF needs at least 2");
  if (std::abs(last.cdf - 1.0) > kLastProbabilityTolerance) {
    Fail(origin, last.line, "last cumulative probability " + std::string(last.cdf_text) + " is not 1");
  }
  const double last_bytes = last.size * static_cast<double>(unit);
  if (last_bytes < 1) {
    Fail(origin, last.line, "largest size " + std::string(last.size_text) + " x unit " + std::to_string(unit) +
                                " is below 1 byte");
  }
  if (last_bytes > kMaxBytes) {
    Fail(origin, last.line, "largest size " + std::string(last.size_text) + " x unit " + std::to_string(unit) +
                                " is above 2^53 bytes");
  }
}

// Half-up rounding to a whole byte, at least 1: a zero-byte flow would never
// complete and would only distort FCT statistics.
uint64_t RoundBytes(double bytes) {
  const double r = std::floor(bytes + 0.5);
  return r < 1 ? 1 : static_cast<uint64_t>(r);
}

}  // namespace

FlowSizeCdf::FlowSizeCdf(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
  const auto& [s0, c0] = points_.front();
  mean_ = s0 * c0;  // the mass at the first point
  for (size_t i = 1; i < points_.size(); ++i) {
    const auto& [sa, ca] = points_[i - 1];
    const auto& [sb, cb] = points_[i];
    mean_ += (cb - ca) * 0.5 * (sa + sb);  // uniform over [sa, sb]
  }
  max_bytes_ = RoundBytes(points_.back().first);
}

FlowSizeCdf FlowSizeCdf::Scaled(double factor) const {
  if (!(factor > 0) || !std::isfinite(factor))
    throw std::invalid_argument("flow size scale must be a positive finite number, got " + std::to_string(factor));
  std::vector<std::pair<double, double>> points = points_;
  for (auto& [bytes, cdf] : points) bytes *= factor;
  return FlowSizeCdf(std::move(points));
}

FlowSizeCdf FlowSizeCdf::Parse(std::string_view text, std::string_view origin) {
  std::vector<RawPoint> raw;
  std::optional<uint64_t> unit;
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    line = line.substr(0, line.find('#'));
    const std::vector<std::string_view> tokens = SplitWhitespace(line);
    if (tokens.empty()) continue;
    if (tokens[0] == "unit") {
      if (!raw.empty()) Fail(origin, line_no, "'unit' must come before the first point");
      if (unit) Fail(origin, line_no, "'unit' given twice");
      unit = ParseUnit(tokens, origin, line_no);
      continue;
    }
    raw.push_back(ParsePoint(tokens, origin, line_no));
    if (raw.size() > 1) CheckOrder(raw[raw.size() - 2], raw.back(), origin);
  }
  CheckWhole(raw, unit.value_or(1), origin, line_no);

  std::vector<std::pair<double, double>> points;
  points.reserve(raw.size());
  for (const RawPoint& p : raw) points.emplace_back(p.size * static_cast<double>(unit.value_or(1)), p.cdf);
  points.back().second = 1.0;  // within tolerance: make it exact so Sample(u < 1) always lands on a point
  return FlowSizeCdf(std::move(points));
}

FlowSizeCdf FlowSizeCdf::Load(const std::string& path) {
  // Capped, and regular files only: a directory "opens" and reads nothing, a
  // FIFO blocks, /dev/zero never ends (util::ReadBoundedFile).
  return Parse(util::ReadBoundedFile(path, util::kMaxCdfFileBytes, "flow-size CDF file"), path);
}

FlowSizeCdf FlowSizeCdf::Builtin(std::string_view name) {
  const std::optional<std::string_view> text = BuiltinFlowSizeText(name);
  if (!text) {
    std::string known;
    for (const std::string& n : BuiltinFlowSizeNames()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown flow-size distribution '" + std::string(name) + "' (known: " + known + ")");
  }
  return Parse(*text, "builtin:" + std::string(name));
}

uint64_t FlowSizeCdf::Sample(double u) const {
  if (!(u > 0)) u = 0;  // also NaN
  if (u > 1) u = 1;
  // First point whose probability reaches u; the last is exactly 1 >= u, so
  // one always does. Zero-width segments are skipped because cdf[i-1] < u.
  const auto it = std::lower_bound(points_.begin(), points_.end(), u,
                                   [](const std::pair<double, double>& p, double v) { return p.second < v; });
  if (it == points_.begin()) return RoundBytes(it->first);
  const auto& [sa, ca] = *(it - 1);
  const auto& [sb, cb] = *it;
  return RoundBytes(sa + (u - ca) / (cb - ca) * (sb - sa));
}

double FlowSizeCdf::Cdf(double bytes) const {
  if (!(bytes >= points_.front().first)) return 0;
  // First point strictly above `bytes`: the one before it is the last point at
  // or below, i.e. the highest probability reached (right-continuity at masses).
  const auto it = std::upper_bound(points_.begin(), points_.end(), bytes,
                                   [](double v, const std::pair<double, double>& p) { return v < p.first; });
  if (it == points_.end()) return 1;
  const auto& [sa, ca] = *(it - 1);
  const auto& [sb, cb] = *it;
  return ca + (bytes - sa) / (sb - sa) * (cb - ca);
}

}  // namespace inasim::congestion
