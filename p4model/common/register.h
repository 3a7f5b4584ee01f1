// A Tofino register array, as the models of P4 programs hold them: one
// `Register<T, I>(size)` of the P4 source is one Register<T>(size) here,
// declared under the P4 name by the control that owns it (the model checker
// reads those names from each model's description).
#pragma once

#include <cstdint>
#include <vector>

namespace inasim::p4 {

/// A Register<T, I>(size): allocated on first use (most pipes and slots never
/// see traffic). Which cells were ever written is kept as a bit per cell (no
/// allocation on the packet path, and 2 KiB of bits for 16384 cells stay in
/// cache); `touched()` / `Touched()` list them for DumpState.
template <typename T>
class Register {
 public:
  explicit Register(uint32_t size) : size_(size) {}
  /// Tofino addresses a register with the low log2(size) bits of the index.
  T& At(uint32_t index) {
    if (cells_.empty()) Allocate();
    index &= size_ - 1;
    touched_[index >> 6] |= uint64_t{1} << (index & 63);
    return cells_[index];
  }
  /// The cell without marking it written (T{} before the first write).
  T Peek(uint32_t index) const { return cells_.empty() ? T{} : cells_[index & (size_ - 1)]; }
  /// Whether At() ever returned this cell.
  bool Touched(uint32_t index) const {
    if (touched_.empty()) return false;
    index &= size_ - 1;
    return touched_[index >> 6] >> (index & 63) & 1;
  }
  /// The cells ever written, in index order.
  std::vector<uint32_t> touched() const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < size_ && !touched_.empty(); ++i)
      if (touched_[i >> 6] >> (i & 63) & 1) out.push_back(i);
    return out;
  }
  uint32_t size() const { return size_; }

 private:
  // Out of line so that At() stays small enough to inline.
  __attribute__((noinline)) void Allocate() {
    cells_.assign(size_, T{});
    touched_.assign((size_ + 63) / 64, 0);
  }
  uint32_t size_;
  std::vector<T> cells_;
  std::vector<uint64_t> touched_;
};

}  // namespace inasim::p4
