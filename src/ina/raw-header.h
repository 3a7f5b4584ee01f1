// A header that is just bytes: lets the fabric add or rewrite the Ethernet and
// IPv4 headers of an ns3::Packet without ns-3's field-by-field header classes.
#pragma once

#include "ns3/header.h"

#include <cstdint>
#include <cstring>

namespace inasim {

class RawHeader : public ns3::Header {
 public:
  static constexpr uint32_t kMaxBytes = 64;
  static ns3::TypeId GetTypeId();
  ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }

  RawHeader() = default;
  explicit RawHeader(uint32_t size) : size_(size) {}
  RawHeader(const uint8_t* data, uint32_t size) : size_(size) { std::memcpy(bytes_, data, size); }

  uint8_t* data() { return bytes_; }
  const uint8_t* data() const { return bytes_; }
  uint32_t size() const { return size_; }

  uint32_t GetSerializedSize() const override { return size_; }
  void Serialize(ns3::Buffer::Iterator start) const override { start.Write(bytes_, size_); }
  uint32_t Deserialize(ns3::Buffer::Iterator start) override {
    start.Read(bytes_, size_);
    return size_;
  }
  void Print(std::ostream& os) const override;

 private:
  uint32_t size_ = 0;
  uint8_t bytes_[kMaxBytes] = {};
};

}  // namespace inasim
