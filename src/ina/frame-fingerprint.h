// The event-trajectory fingerprint of a run (results.json `sim.fingerprint`):
// a rolling 64-bit hash over every frame a device starts transmitting, so a
// change anywhere in who sends what when shows up as one differing number, as
// OMNeT++'s fingerprints and htsim's .ref files give their users
// (tests/golden/README.md). Not cryptographic: it detects accidental changes.
// Header-only and allocation-free: it runs once per frame on the hot path.
#pragma once

#include <cstdint>
#include <cstring>

namespace inasim {

/// Leading frame bytes hashed: the Ethernet/IPv4/UDP headers and the first
/// payload words (protocol headers, the first elements), like the switch's parse.
inline constexpr uint32_t kFingerprintBytes = 64;

/// One 8-byte word into the accumulator. For a fixed `w` the step is a
/// bijection of `h` (xor, rotate, odd multiply), and for a fixed `h` a
/// bijection of `w`; so one changed word always changes every later value,
/// never cancels out. The multiply of `w` does not depend on `h`, so the
/// dependency chain per word is xor + rotate + one multiply.
inline uint64_t FingerprintRound(uint64_t h, uint64_t w) {
  h ^= w * 0x9e3779b97f4a7c15ULL;
  h = h << 27 | h >> 37;
  return h * 0xbf58476d1ce4e5b9ULL;
}

/// Little-endian word of up to 8 bytes (zero-padded): the same value on every
/// platform, unlike a raw memcpy.
inline uint64_t FingerprintWord(const uint8_t* p, uint32_t n) {
  uint8_t b[8] = {};
  std::memcpy(b, p, n);
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = w << 8 | b[i];  // compilers turn this into one load on x86
  return w;
}

/// One frame: its start time, its length and its first `n` bytes (n <= 64;
/// the length tells a short frame's zero padding from real zeros).
inline uint64_t FingerprintFrame(uint64_t h, uint64_t time_ps, uint32_t frame_bytes, const uint8_t* head,
                                 uint32_t n) {
  h = FingerprintRound(h, time_ps);
  h = FingerprintRound(h, frame_bytes);
  if (n == kFingerprintBytes) {  // almost every frame: a constant trip count, fully unrolled
    for (uint32_t i = 0; i < kFingerprintBytes; i += 8) h = FingerprintRound(h, FingerprintWord(head + i, 8));
    return h;
  }
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) h = FingerprintRound(h, FingerprintWord(head + i, 8));
  if (i < n) h = FingerprintRound(h, FingerprintWord(head + i, n - i));
  return h;
}

/// Folds one device's accumulator and frame count into the run's fingerprint;
/// called for every device in a fixed order (fabric-wide port index), so the
/// result depends on each device's own frame sequence and its place, not on
/// how events at different devices interleave.
inline uint64_t FingerprintCombine(uint64_t run, uint64_t port_index, uint64_t device_hash, uint64_t frames) {
  run = FingerprintRound(run, port_index);
  run = FingerprintRound(run, device_hash);
  return FingerprintRound(run, frames);
}

}  // namespace inasim
