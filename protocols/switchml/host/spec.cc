// SwitchML's scenario keys: the workload.switchml section of a scenario -> SwitchMLSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "protocols/switchml/host/spec.h"
#include "protocols/switchml/dataplane/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::switchml {

using nlohmann::json;
using spec::Reader;

namespace {

using SwitchMLSection = spec::Section<SwitchMLSpec, Scenario>;

/// tensors: the byte sizes of one iteration's tensors (absent: workload.bytes).
void ParseTensors(Reader& m, SwitchMLSpec& ml, const Scenario& s) {
  ml.tensors.clear();
  if (s.workload.schedule.given) {  // each collective of the step is a tensor (a SwitchML job)
    if (m.Has("tensors"))
      m.Fail("tensors", "is not used with workload.schedule: its collectives are the iteration's tensors");
    ml.tensors = s.workload.schedule.bytes;  // not echoed: the resolved scenario must parse again as it is
    return;
  }
  if (const json* t = m.Raw("tensors")) {
    if (!t->is_array() || t->empty()) m.Fail("tensors", "must be a non-empty array of tensor sizes in bytes");
    for (size_t i = 0; i < t->size(); ++i) {
      const json& b = (*t)[i];
      if (!b.is_number_integer() || b.get<int64_t>() <= 0 || b.get<uint64_t>() % 4 || b.get<uint64_t>() > (1ull << 40))
        m.Fail(fmt::format("tensors[{}]", i),
               fmt::format("must be a positive multiple of 4 bytes (whole 32-bit elements), at most 2^40; got {}",
                           b.dump()));
      ml.tensors.push_back(b.get<uint64_t>());
    }
    m.out()["tensors"] = *t;
  } else {
    m.out()["tensors"] = json::array({s.workload.bytes});
  }
}

json TensorsSchema() {
  return {{"type", "array"},
          {"minItems", 1},
          {"items", {{"type", "integer"}, {"minimum", 4}, {"maximum", 1ull << 40}, {"multipleOf", 4}}},
          {"description", "The tensors of one iteration, streamed back to back (one job each). (unit: bytes)"}};
}

void CheckWarmup(const SwitchMLSpec& ml, const Scenario& s, Reader& m) {
  const uint64_t jobs = uint64_t{s.workload.iterations} * (ml.tensors.empty() ? 1 : ml.tensors.size());
  if (ml.warmup_tensors >= jobs)
    m.Fail("warmup_tensors", fmt::format("{} warm-up tensors leave nothing to measure: the workload aggregates {} "
                                         "(iterations x tensors)", ml.warmup_tensors, jobs));
}

SwitchMLSection& DeclareTransport(SwitchMLSection& m) {
  // Shared with inasim-p4's replay config (protocols/switchml/dataplane/keys.h).
  p4::switchml::keys::ElementsPerPacket(m, &SwitchMLSpec::elements_per_packet, 256);
  p4::switchml::keys::PoolSize(m, &SwitchMLSpec::pool_size, 512);
  return m
      .TimePs("timeout_us", &SwitchMLSpec::timeout_ps, 10000, 0.001, 1e9, spec::TimeUnit::kUs,
              "Retransmission timeout (`timeout = 10` ms; the paper's loss experiments used 1 ms).")
      .U64("timeout_threshold", &SwitchMLSpec::timeout_threshold, 100, 1, 1ull << 40, "timeouts",
           "After this many timeouts the timeout doubles (the library's backoff).")
      .U64("timeout_threshold_increment", &SwitchMLSpec::timeout_threshold_increment, 100, 0, 1ull << 40, "timeouts",
           "... and the threshold grows by this much.")
      .Enum("timer_mode", &SwitchMLSpec::timer_mode, "paper",
            {{"paper", SwitchMLTimerMode::kPaper}, {"upstream", SwitchMLTimerMode::kUpstream}},
            "`paper`: one timer per outstanding packet (Algorithm 4). `upstream`: `dpdk_worker_thread.cc` as "
            "written, whose first-batch timers are filed one slot off with the next packet's id (a lost "
            "first-batch packet then completes with another packet's sums; see `src/ina/README.md`).")
      .Bool("vcl_rounding", &SwitchMLSpec::vcl, true,
            "Quantize as the library's default VCL build (round half to even in 16-element vector chunks); "
            "`false`: `std::round` everywhere.");
}

// The worker's DPDK host (docs/research/switchml-dpdk-threads.md).
SwitchMLSection& DeclareHost(SwitchMLSection& m) {
  return m
      .Enum("backend", &SwitchMLSpec::backend, "dpdk",
            {{"dpdk", SwitchMLBackend::kDpdk}, {"ideal", SwitchMLBackend::kIdeal}, {"rdma", SwitchMLBackend::kRdma}},
            "`dpdk`: the client library's DPDK worker as it runs (switchml-nsdi21.txt:424, :711; "
            "dpdk_worker_thread.cc:274-389): `worker_threads` lcores, each with its UDP port, its share of the "
            "pool and its slice of every tensor; rx bursts processed at `core_gbps`, replies through a tx "
            "buffer that leaves when full or on the drain timer. `ideal`: a host with no cost and no batching, "
            "one thread (the model before issue 28). `rdma`: the RDMA backend (switchml-nsdi21.txt:432-434, "
            "rdma_worker_thread.cc): RDMA UC writes with immediate over RoCEv2, `rdma_message_packets` packets "
            "per message, one queue pair per message in flight (pool_size / rdma_message_packets per host), "
            "the NIC sending at line rate and the CPU paying `rdma_verbs_op_us` per verbs call; int32 only, "
            "one switch (the program's RoCE path has no hierarchy).")
      .U32("rdma_message_packets", &SwitchMLSpec::rdma_message_packets, 16, 1, 8192, "packets",
           "RDMA: packets per message, a power of two (\"we use small, multi-packet messages (generally 16 "
           "packets per message)\", switchml-nsdi21.txt:432; the shipped rdma.cfg: msg_numel 1024 = 4 packets "
           "of 256 elements).")
      .TimePs("rdma_verbs_op_us", &SwitchMLSpec::rdma_verbs_op_ps, 0.1, 0, 1e3, spec::TimeUnit::kUs,
              "RDMA: CPU time of one verbs call (post_send, post_recv, a CQ poll): linux-rdma/perftest README: "
              "\"post_send ~ 10 Mpps\" (its \"~ 500 ns between each SW post_send\" is the other reading). A "
              "completion costs three calls, a first post two, a retransmission one.")
      .TimePs("rdma_nic_tx_us", &SwitchMLSpec::rdma_nic_tx_ps, 1.399, 0, 1e3, spec::TimeUnit::kUs,
              "RDMA: a post to its first packet on the NIC's queue: two PCIe reads on the paper's Xeon E5-2630v4, "
              "the WQE (546 ns, 64 B) and the data (853 ns, 1 KiB) (pcie-bench data, docs/research/host-costs.md).")
      .TimePs("rdma_nic_rx_us", &SwitchMLSpec::rdma_nic_rx_ps, 0.387, 0, 1e3, spec::TimeUnit::kUs,
              "RDMA: a message's last packet to its completion seen by the CPU: half of pcie-bench's "
              "write-then-read round trip (773 ns), the data and CQE writes being posted.")
      .U32("worker_threads", &SwitchMLSpec::worker_threads, 0, 0, 64, "threads",
           "Worker lcores per host (`num_worker_threads`; the pool is split evenly). 0: 1 on links up to 10 Gb/s "
           "(\"One CPU core is sufficient to do reduction at line rate on a 10 Gbps network\", "
           "switchml-nsdi21.txt:711), 8 above (\"We use up to 8 cores per worker\", :424). `dpdk` only.")
      .U32("burst_rx", &SwitchMLSpec::burst_rx, 32, 1, 4096, "packets",
           "Packets per `rte_eth_rx_burst` (\"Packets are batched in groups of 32\", switchml-nsdi21.txt:711; "
           "the shipped dpdk.cfg: 64).")
      .U32("burst_tx", &SwitchMLSpec::burst_tx, 32, 1, 4096, "packets",
           "The tx buffer's size: it leaves by itself when this many replies wait (paper 32, dpdk.cfg 64).")
      .TimePs("tx_drain_us", &SwitchMLSpec::tx_drain_ps, 10, 0, 1e6, spec::TimeUnit::kUs,
              "An empty poll flushes the tx buffer once this long has passed since the last drain "
              "(`bulk_drain_tx_us = 10`, dev_root/client_lib/src/configs/dpdk.cfg:56; the code's default is 100).")
      .Num("core_gbps", &SwitchMLSpec::core_gbps, 11.25, 0.001, 1e4, "Gb/s",
           "Wire bits one lcore processes per second (a packet costs its frame + 24 B at this rate). No number "
           "is published; two statements bracket it: one core keeps up with 10 Gb/s (:711), and up to 8 cores "
           "fall short of 100 Gb/s \"due to packet processing costs\" (:430, :424), so 10 < core_gbps < 12.5; "
           "the default is the middle. Fig. 9's pool sizes are the check, not the source.")
      .Enum("timer_check", &SwitchMLSpec::timer_check, "deadline",
            {{"deadline", SwitchMLTimerCheck::kDeadline}, {"empty_poll", SwitchMLTimerCheck::kEmptyPoll}},
            "`deadline`: every timer fires at its deadline: the paper's \"retransmission timeout is set to 1 ms\" "
            "(switchml-nsdi21.txt:502) and Algorithm 4. `empty_poll`: as the library's DPDK loop runs them, "
            "`rte_timer_manage` only on an empty poll and only once more than the timeout has passed since its "
            "last run (dpdk_worker_thread.cc:292-296), so a lost packet is resent between one and about two "
            "timeouts after its send. `dpdk` only (`ideal` and `rdma` keep their own).")
      .Enum("ps", &SwitchMLSpec::ps, "none",
            {{"none", SwitchMLPs::kNone}, {"dedicated", SwitchMLPs::kDedicated}, {"colocated", SwitchMLPs::kColocated}},
            "The paper's parameter-server baseline (Fig. 3: \"as many PS processes (each using 8 cores) as "
            "workers\", switchml-nsdi21.txt:458): `dedicated` on the lowest-numbered hosts that are not workers, "
            "`colocated` on the workers themselves; slot g's packets go to PS g mod n, which runs the switch's "
            "program on `ps_cores` lcores. `none`: the switches aggregate.")
      .U32("ps_cores", &SwitchMLSpec::ps_cores, 8, 1, 64, "lcores",
           "Lcores of each parameter server (the paper: 8); packets reach them by slot.");
}

const SwitchMLSection& SwitchML() {
  static const SwitchMLSection section = [] {
    SwitchMLSection m("workload.switchml", "SwitchML workers (p4app-switchML client library)");
    DeclareTransport(m);
    p4::switchml::keys::Harvest3(m, &SwitchMLSpec::harvest3_port, "pipe2");
    m.U16("worker_udp_port", &SwitchMLSpec::worker_udp_port, 4000, 1, 65535, "",
             "The workers' UDP port (`dpdk.cfg worker_port`); the switch's is 0xbee0.")
        .AllowedNote("not 0xbee0-0xbeef")
        .SchemaAlso({{"not", {{"minimum", 0xbee0}, {"maximum", 0xbeef}}}})
        .Check([](const SwitchMLSpec& ml, Reader& r) {
          if ((ml.worker_udp_port & 0xfff0) == 0xbee0)
            r.Fail("worker_udp_port", fmt::format("{} is in the switch's SwitchML range 0xbee0-0xbeef: switches "
                                                  "would take results for worker packets", ml.worker_udp_port));
        });
    p4::switchml::keys::PassLatency(m, &SwitchMLSpec::pass_latency_ps)
        .Custom("tensors",
                {"array of integers", "bytes", "`[workload.bytes]`", "each a positive multiple of 4, at most 2^40",
                 "The tensors of one iteration, streamed back to back (one job each)."},
                TensorsSchema, ParseTensors)
        .U32("warmup_tensors", &SwitchMLSpec::warmup_tensors, 0, 0, 1'000'000, "tensors",
             "Left out of the summary means (the paper: 10 warm-ups).")
        .Allowed("0 .. 1000000, fewer than iterations x tensors")
        .CheckWithContext(CheckWarmup)
        .TimePs("timeline_bin_us", &SwitchMLSpec::timeline_bin_ps, 0, 0, 1e9, spec::TimeUnit::kUs,
                "If > 0, `switchml_timeline.csv`: packets worker 0 sent per bin (Fig. 7).");
    DeclareHost(m);
    return m;
  }();
  return section;
}

}  // namespace

/// workload.switchml: the client library's knobs (dev_root/client_lib/src/configs).
void ParseWorkload(Reader& w, Scenario& s) {
  SwitchML().ParseObject(w, "switchml", s.workload.spec<SwitchMLSpec>(), s);
}

std::vector<const spec::Doc*> WorkloadSections() { return {&SwitchML()}; }

}  // namespace inasim::protocols::switchml
