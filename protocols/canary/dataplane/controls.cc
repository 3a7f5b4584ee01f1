#include "protocols/canary/dataplane/controls.h"

#include "p4model/common/frame.h"

#include <new>

namespace inasim::p4::canary {

void DescriptorTable::accumulator_write(uint32_t* acc, const uint8_t* data, uint32_t k) {
  for (uint32_t i = 0; i < k; ++i) acc[i] = LoadBe32(data + 4 * i);
}

void DescriptorTable::accumulator_add(uint32_t* acc, const uint8_t* data, uint32_t k) {
  // Unsigned addition is the int32 two's-complement sum modulo 2^32 without
  // signed-overflow UB.
  for (uint32_t i = 0; i < k; ++i) acc[i] += LoadBe32(data + 4 * i);
}

uint32_t* DescriptorTable::Accumulator(uint32_t index) {
  if (slot_.empty()) slot_.assign(size_, kNoSlot);
  if (slot_[index] == kNoSlot) {
    if (!free_slots_.empty()) {
      slot_[index] = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot_[index] = static_cast<uint32_t>(pool_.size() / elements_);
      pool_.resize(pool_.size() + elements_, 0);
    }
  }
  return pool_.data() + size_t{slot_[index]} * elements_;
}

std::vector<uint32_t> DescriptorTable::ValidIndices() const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].valid) out.push_back(i);
  return out;
}

}  // namespace inasim::p4::canary
