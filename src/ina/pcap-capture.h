// Wireshark-readable captures of chosen links (scenario `outputs.pcap`): every
// frame that starts on the wire of a captured link, in either direction, as a
// libpcap record (nanosecond timestamps, Ethernet link type) at the time it
// starts. One file per link, `pcap/link-<index>-<a>-<b>.pcap` (the link's
// index and end names as links.csv gives them). Files are kept in memory, up
// to `max_bytes` each, and written with the results (atomically, with
// results.json), so a failed run leaves none behind.
#pragma once

#include "ina/scenario.h"

#include <ns3/packet.h>
#include <ns3/ptr.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace inasim {

class Fabric;
namespace topo {
class Topology;
}

/// The links named by number (`links`, as links.csv numbers them) and by
/// node (every link of each of `nodes`), in link order, without repeats;
/// with both lists empty, every link.
/// Throws ScenarioError naming `<key>.links[i]` / `<key>.nodes[i]` (`links_key`
/// and `nodes_key` are the full key paths) for a link or node the topology
/// does not have.
std::vector<uint32_t> SelectLinks(const std::vector<uint32_t>& links, const std::vector<std::string>& nodes,
                                  const topo::Topology& topology, const std::string& links_key,
                                  const std::string& nodes_key);

class PcapCapture {
 public:
  /// Hooks the TxStart trace of both directions of every selected link.
  /// Throws ScenarioError naming `outputs.pcap.links[i]` / `.nodes[i]` for a
  /// link or node the topology does not have.
  PcapCapture(const PcapSpec& spec, const topo::Topology& topology, Fabric& fabric);

  /// (file name under the results directory, bytes), in link order.
  std::vector<std::pair<std::string, std::string>> Files() const;
  /// Per file: frames written, frames left out because the file was full.
  nlohmann::json Report() const;

 private:
  struct File {
    std::string name;
    std::string bytes;  ///< the libpcap file: global header, then records
    uint64_t frames = 0;
    uint64_t left_out = 0;
  };
  void OnTx(size_t file, ns3::Ptr<const ns3::Packet> frame);

  PcapSpec spec_;
  std::vector<File> files_;
  std::vector<uint8_t> scratch_;
};

}  // namespace inasim
