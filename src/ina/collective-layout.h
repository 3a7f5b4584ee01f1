// How a job numbers its units (packets, blocks: `k` elements each) over a
// whole run: every collective of an iteration in order, iteration after
// iteration. Unit g of the run belongs to collective c (counting every
// collective of every iteration) and carries elements [first, first + count)
// of it. The protocols whose hosts number their packets globally (Canary's
// blocks, PANAMA's vectors) share it; Locate is on their per-packet path:
// one division, one search over the (few) collectives of an iteration.
// Pure C++ (no ns-3).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace inasim {

class CollectiveLayout {
 public:
  /// `elements`: per collective of an iteration (at least one); `k` elements per unit.
  CollectiveLayout(std::vector<uint64_t> elements, uint32_t k, uint32_t iterations)
      : elements_(std::move(elements)), k_(k), iterations_(iterations) {
    if (elements_.empty() || k_ == 0) throw std::invalid_argument("CollectiveLayout: no collective, or k = 0");
    for (uint64_t e : elements_) {
      first_unit_.push_back(per_iteration_);
      per_iteration_ += (e + k_ - 1) / k_;
    }
    first_unit_.push_back(per_iteration_);
  }

  /// Where unit g is: its collective, its first element there and its element count.
  struct Unit {
    uint32_t collective;
    uint64_t first_element, count;
  };
  Unit Locate(uint64_t g) const {
    const uint64_t it = g / per_iteration_, within = g - it * per_iteration_;
    const size_t kind = static_cast<size_t>(
        std::upper_bound(first_unit_.begin(), first_unit_.end(), within) - first_unit_.begin() - 1);
    const uint64_t first = (within - first_unit_[kind]) * k_;
    return {static_cast<uint32_t>(it * elements_.size() + kind), first, std::min<uint64_t>(k_, elements_[kind] - first)};
  }

  /// Collective c's units: [FirstUnitOf(c), FirstUnitOf(c) + UnitsOf(c)).
  uint64_t FirstUnitOf(uint32_t c) const { return c / elements_.size() * per_iteration_ + first_unit_[c % elements_.size()]; }
  uint64_t UnitsOf(uint32_t c) const {
    const size_t kind = c % elements_.size();
    return first_unit_[kind + 1] - first_unit_[kind];
  }
  uint64_t ElementsOf(uint32_t c) const { return elements_[c % elements_.size()]; }

  const std::vector<uint64_t>& elements() const { return elements_; }  ///< per collective of an iteration
  uint64_t units_per_iteration() const { return per_iteration_; }
  uint64_t total_units() const { return per_iteration_ * iterations_; }
  uint32_t iterations() const { return iterations_; }

 private:
  std::vector<uint64_t> elements_;
  uint32_t k_;
  uint32_t iterations_;
  std::vector<uint64_t> first_unit_;  ///< per collective of an iteration, then per_iteration_
  uint64_t per_iteration_ = 0;
};

}  // namespace inasim
