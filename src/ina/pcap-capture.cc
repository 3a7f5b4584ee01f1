#include "ina/pcap-capture.h"

#include "common/scenario_error.h"
#include "ina/fabric.h"
#include "ina/ina-net-device.h"
#include "topology/topology.h"

#include <fmt/format.h>
#include <ns3/callback.h>
#include <ns3/simulator.h>

#include <algorithm>
#include <set>

namespace inasim {

namespace {

// libpcap's file format (https://wiki.wireshark.org/Development/LibpcapFileFormat):
// the magic 0xa1b23c4d says "nanosecond timestamps" (the simulator's clock is
// finer than a microsecond); link type 1 is Ethernet (LINKTYPE_ETHERNET).
constexpr uint32_t kMagicNs = 0xa1b23c4d;
constexpr uint32_t kLinkTypeEthernet = 1;
constexpr size_t kGlobalHeaderBytes = 24, kRecordHeaderBytes = 16;

void StoreLe32(char* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>(v >> (8 * i));
}

void PutLe32(std::string& out, uint32_t v) {
  char b[4];
  StoreLe32(b, v);
  out.append(b, 4);
}

std::string GlobalHeader(uint32_t snaplen) {
  char h[kGlobalHeaderBytes] = {};
  StoreLe32(h, kMagicNs);
  h[4] = 2;  // version 2.4, as little-endian u16s
  h[6] = 4;
  // thiszone and sigfigs (8..15) stay 0.
  StoreLe32(h + 16, snaplen);
  StoreLe32(h + 20, kLinkTypeEthernet);
  return std::string(h, kGlobalHeaderBytes);
}

}  // namespace

std::vector<uint32_t> SelectLinks(const std::vector<uint32_t>& links, const std::vector<std::string>& nodes,
                                  const topo::Topology& topology, const std::string& links_key,
                                  const std::string& nodes_key) {
  std::set<uint32_t> out;
  if (links.empty() && nodes.empty())
    for (uint32_t l = 0; l < topology.links().size(); ++l) out.insert(l);
  for (size_t i = 0; i < links.size(); ++i) {
    if (links[i] >= topology.links().size())
      throw ScenarioError(fmt::format("{}[{}]: no link {} (the topology has links 0..{}, as links.csv numbers them)",
                                      links_key, i, links[i], topology.links().size() - 1));
    out.insert(links[i]);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    bool found = false;
    for (uint32_t l = 0; l < topology.links().size(); ++l) {
      const topo::Link& link = topology.links()[l];
      if (topology.node(link.a).name == nodes[i] || topology.node(link.b).name == nodes[i]) {
        out.insert(l);
        found = true;
      }
    }
    if (!found) throw ScenarioError(fmt::format("{}[{}]: no node named \"{}\" with a link", nodes_key, i, nodes[i]));
  }
  return {out.begin(), out.end()};
}

PcapCapture::PcapCapture(const PcapSpec& spec, const topo::Topology& topology, Fabric& fabric) : spec_(spec) {
  for (uint32_t l : SelectLinks(spec.links, spec.nodes, topology, "outputs.pcap.links", "outputs.pcap.nodes")) {
    const topo::Link& link = topology.links()[l];
    File f;
    f.name = fmt::format("pcap/link-{}-{}-{}.pcap", l, topology.node(link.a).name, topology.node(link.b).name);
    f.bytes = GlobalHeader(spec.snaplen);
    files_.push_back(std::move(f));
    const size_t index = files_.size() - 1;
    for (int d = 0; d < 2; ++d)
      fabric.link_tx(l, d).TraceConnectWithoutContext(
          "TxStart", ns3::MakeBoundCallback(
                         +[](PcapCapture* self, size_t file, ns3::Ptr<const ns3::Packet> p, uint64_t) { self->OnTx(file, p); },
                         this, index));
  }
}

void PcapCapture::OnTx(size_t file, ns3::Ptr<const ns3::Packet> frame) {
  const uint64_t now_ps = static_cast<uint64_t>(ns3::Simulator::Now().GetPicoSeconds());
  if (now_ps < spec_.from_ps || now_ps >= spec_.until_ps) return;
  File& f = files_[file];
  const uint32_t size = frame->GetSize();
  const uint32_t kept = std::min(size, spec_.snaplen);
  if (f.bytes.size() + kRecordHeaderBytes + kept > spec_.max_bytes) {
    ++f.left_out;
    return;
  }
  const uint64_t ns = now_ps / 1000;
  PutLe32(f.bytes, static_cast<uint32_t>(ns / 1'000'000'000));
  PutLe32(f.bytes, static_cast<uint32_t>(ns % 1'000'000'000));
  PutLe32(f.bytes, kept);
  PutLe32(f.bytes, size);
  scratch_.resize(kept);
  frame->CopyData(scratch_.data(), kept);
  f.bytes.append(reinterpret_cast<const char*>(scratch_.data()), kept);
  ++f.frames;
}

std::vector<std::pair<std::string, std::string>> PcapCapture::Files() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const File& f : files_) out.emplace_back(f.name, f.bytes);
  return out;
}

nlohmann::json PcapCapture::Report() const {
  nlohmann::json files = nlohmann::json::array();
  for (const File& f : files_)
    files.push_back({{"file", f.name}, {"frames", f.frames}, {"left_out_full", f.left_out}, {"bytes", f.bytes.size()}});
  return files;
}

}  // namespace inasim
