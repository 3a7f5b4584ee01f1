#include "protocols/panama/dataplane/fp32.h"

#include "protocols/panama/dataplane/types.h"

namespace inasim::p4::panama {

namespace {

// Working precision: the 24-bit significand sits at bits 53..30 of a uint64,
// leaving 30 bits below it for guard, round and sticky information.
constexpr int kExtra = 30;
constexpr uint64_t kHidden = uint64_t{1} << (23 + kExtra);  // leading bit of a normal significand
constexpr uint64_t kCarry = kHidden << 1;                    // a carry out of the addition

bool IsNaN(uint32_t x) { return (x & kExpMask) == kExpMask && (x & kFracMask) != 0; }
bool IsInf(uint32_t x) { return (x & ~kSignBit) == kExpMask; }
uint32_t ExpField(uint32_t x) { return (x >> 23) & 0xff; }

}  // namespace

uint32_t Fp32Adder::Add(uint32_t a, uint32_t b) const {
  // NaN operands.
  if (IsNaN(a) || IsNaN(b)) {
    if (mode_ == FloatMode::kFpga) return kDefaultNaN;
    return (IsNaN(a) ? a : b) | kQuietBit;
  }
  // Infinities: inf + (-inf) is invalid; otherwise the infinity wins.
  if (IsInf(a) || IsInf(b)) {
    if (IsInf(a) && IsInf(b) && a != b) return kDefaultNaN;
    return IsInf(a) ? a : b;
  }
  // fpga: a subnormal operand reads as a zero of its own sign.
  if (mode_ == FloatMode::kFpga) {
    if (ExpField(a) == 0) a &= kSignBit;
    if (ExpField(b) == 0) b &= kSignBit;
  }
  const bool a_zero = (a & ~kSignBit) == 0;
  const bool b_zero = (b & ~kSignBit) == 0;
  // Round to nearest even: x + (-x) and (+0) + (-0) are +0; (-0) + (-0) is -0.
  if (a_zero && b_zero) return a & b & kSignBit;
  if (a_zero) return b;
  if (b_zero) return a;

  // Both finite and non-zero: order by magnitude so that |a| >= |b|.
  if ((a & ~kSignBit) < (b & ~kSignBit)) {
    const uint32_t t = a;
    a = b;
    b = t;
  }
  const uint32_t sign = a & kSignBit;
  const bool subtract = ((a ^ b) & kSignBit) != 0;
  int32_t exp = static_cast<int32_t>(ExpField(a));
  const int32_t exp_b = static_cast<int32_t>(ExpField(b));
  uint64_t sig_a = uint64_t{a & kFracMask} << kExtra;
  uint64_t sig_b = uint64_t{b & kFracMask} << kExtra;
  if (exp != 0) sig_a |= kHidden; else exp = 1;  // subnormal: exponent of 2^-126, no hidden bit
  const int32_t eb = exp_b != 0 ? exp_b : 1;
  if (exp_b != 0) sig_b |= kHidden;

  // Align b to a; the bits shifted out are kept as one sticky bit.
  const int32_t shift = exp - eb;
  if (shift >= 62) {
    sig_b = sig_b != 0;
  } else if (shift > 0) {
    const uint64_t lost = sig_b & ((uint64_t{1} << shift) - 1);
    sig_b = (sig_b >> shift) | (lost != 0);
  }
  uint64_t sig = subtract ? sig_a - sig_b : sig_a + sig_b;
  if (sig == 0) return 0;  // exact cancellation: +0 under round to nearest even

  // Normalise: a carry shifts right once (keeping the sticky bit); a
  // cancellation shifts left (exact: it only happens when shift <= 1), but not
  // below the subnormal exponent.
  if (sig >= kCarry) {
    sig = (sig >> 1) | (sig & 1);
    ++exp;
  }
  while (sig < kHidden && exp > 1) {
    sig <<= 1;
    --exp;
  }

  // Round to nearest, ties to even, at bit kExtra.
  const uint64_t half = uint64_t{1} << (kExtra - 1);
  const uint64_t rest = sig & ((uint64_t{1} << kExtra) - 1);
  uint64_t mant = sig >> kExtra;  // 24 bits (or fewer when subnormal)
  if (rest > half || (rest == half && (mant & 1))) ++mant;
  if (mant >> 24) {  // rounding carried into a new bit
    mant >>= 1;
    ++exp;
  }
  if (exp >= 255) return sign | kExpMask;  // overflow: infinity of the sign
  if (mant < (uint64_t{1} << 23)) {
    // Subnormal result (exp is 1 here). fpga flushes it to a zero of its sign.
    if (mode_ == FloatMode::kFpga) return sign;
    return sign | static_cast<uint32_t>(mant);
  }
  return sign | static_cast<uint32_t>(exp) << 23 | (static_cast<uint32_t>(mant) & kFracMask);
}

uint32_t AdderTree::Depth() const {
  uint32_t d = 0;
  while ((uint64_t{1} << d) < num_ports_) ++d;
  return d;
}

uint32_t AdderTree::ReduceRange(const uint32_t* leaves, uint32_t n) const {
  if (n == 1) return leaves[0];
  const uint32_t left = (n + 1) / 2;
  // fp_adder.v:107-135: fp_unit_0 = in0 + in1, fp_unit_1 = in2 + in3,
  // fp_unit_2 = fp_unit_0 + fp_unit_1 (first half as operand a).
  return adder_.Add(ReduceRange(leaves, left), ReduceRange(leaves + left, n - left));
}

uint32_t AdderTree::Reduce(inasim::Span<const uint32_t> leaves) const {
  return ReduceRange(leaves.data(), static_cast<uint32_t>(leaves.size()));
}

}  // namespace inasim::p4::panama
