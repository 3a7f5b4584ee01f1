// The structured event trace (scenario `outputs.trace`): one CSV row per
// packet event on chosen links and nodes, so a user can follow one block,
// slot or vector end to end, through every queue and switch program it
// passes. Rows come from the ns-3 trace sources (no new code on the packet
// path: each source costs one empty-list test while nothing listens):
//   InaNetDevice  Enqueue, TxStart (dequeue), Rx (receive), Drop, Mark, Pfc (pause/resume)
//   InaSwitchNode ProgramIn, ProgramOut, ProgramTimer
//   host agents   Timeout (the INA protocols' and the UDP ring's retransmission timers)
// Each frame is keyed by the running workload (Workload::KeyFrame,
// ina/frame-key.h): protocol, job, id, aux, kind; other frames are "tcp",
// "udp" or "other". Rows are kept in memory in event order, up to max_rows
// (the rest counted, not kept), and written with the results as trace.csv.
#pragma once

#include "ina/frame-key.h"
#include "ina/scenario.h"

#include <ns3/packet.h>
#include <ns3/ptr.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace inasim {

class Fabric;
class Workload;
namespace topo {
class Topology;
}

/// The events outputs.trace.events may name, in trace.csv's spelling.
const std::vector<std::string>& TraceEventNames();

class EventTrace {
 public:
  /// Connects to the trace sources of what `spec` selects. Throws
  /// ScenarioError naming outputs.trace.links[i] / .nodes[i] for a link or
  /// node the topology does not have. `workload` (may be null) keys frames;
  /// `protocol` is its name in the protocol column.
  EventTrace(const TraceSpec& spec, const topo::Topology& topology, Fabric& fabric, const Workload* workload,
             std::string protocol);

  /// trace.csv: the header, then the rows kept.
  std::string Csv() const;
  /// results.json outputs.trace: rows kept, rows left out, what was selected.
  nlohmann::json Report() const;

  static constexpr const char* kHeader =
      "time_ps,event,node,port,link,queue_bytes,frame_bytes,protocol,job,id,aux,kind,detail\n";

 private:
  enum Event : uint8_t { kEnqueue, kDequeue, kReceive, kDrop, kMark, kPause, kResume, kProgramIn, kProgramOut, kProgramTimer,
                         kTimeout, kNumEvents };
  /// One hooked device, switch or host: where its rows say they happened.
  struct Place {
    std::string node;
    uint16_t port = 0;
    int64_t link = -1;  ///< -1: none (a switch program or host agent event)
    const class InaNetDevice* device = nullptr;
    uint64_t drops_loss = 0, drops_down = 0;  ///< the device's counts at its last drop row
  };
  bool Wanted(Event e) const;
  /// Appends one row if `e` is wanted, the time in the window and the frame
  /// passes the protocol and id filters.
  void Row(Event e, size_t place, const uint8_t* frame, uint32_t frame_bytes, uint32_t captured, int64_t queue,
           int64_t port_override, const std::string& detail);
  void RowPacket(Event e, size_t place, const ns3::Packet& frame, int64_t queue, const std::string& detail);
  /// The time window, the protocol and id filters (`id` null: a row with no
  /// keyed frame) and max_rows, for a row about to be written: true keeps it
  /// (counted), false drops it (counted as left out when only max_rows did).
  bool Admit(const char* protocol, const uint64_t* id);
  void OnDrop(size_t place, ns3::Ptr<const ns3::Packet> frame);
  void OnTimeout(size_t place, uint32_t job, uint64_t id);
  void HookDevice(class InaNetDevice& device, std::string node, uint16_t port, uint32_t link);
  void HookSwitch(class InaSwitchNode& sw, std::string node);
  void HookHost(ns3::Ptr<ns3::Node> host, std::string node);

  TraceSpec spec_;
  const Workload* workload_;
  std::string protocol_;
  std::vector<Place> places_;
  bool wanted_[kNumEvents] = {};
  std::string rows_;
  uint64_t kept_ = 0, left_out_ = 0;
  uint32_t links_ = 0, switches_ = 0, hosts_ = 0, agents_ = 0;
  std::vector<uint8_t> scratch_;
};

}  // namespace inasim
