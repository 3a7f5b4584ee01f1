// P4SGD's scenario keys: the workload.p4sgd section of a scenario -> P4SGDSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "protocols/p4sgd/host/spec.h"

#include "common/bounded_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::p4sgd {

using nlohmann::json;
using spec::Reader;

namespace {

/// workload.p4sgd: the FPGA workers' training and the switch protocol (p4sgd §3-§5).
void ParseP4SGD(Reader& w, Scenario& s) {
  Reader m = w.Obj("p4sgd");
  P4SGDSpec& p = s.workload.spec<P4SGDSpec>();
  p.mode = m.Enum("mode", "paper", {"paper"});
  p.task = m.Enum("task", "train", {"train", "allreduce"}) == "train" ? P4SGDTask::kTrain : P4SGDTask::kAllreduce;
  p.data_parallel = m.Enum("parallelism", "model", {"model", "data"}) == "data";
  p.hashed = m.Enum("arithmetic", "real", {"real", "hashed"}) == "hashed";
  p.dataset = m.Str("dataset", "synthetic");
  if (p.dataset.empty()) m.Fail("dataset", "must be \"synthetic\" or the path of a LIBSVM file");
  if (p.dataset != "synthetic" && p.hashed)
    m.Fail("dataset", "arithmetic \"hashed\" has no data: give samples and features instead of a file");
  if (p.dataset != "synthetic") {
    // Read at run time (relative to the working directory); checked now so a
    // FIFO, a device or an oversized file fails validation, not the run.
    try {
      util::CheckRegularFile(p.dataset, util::kMaxDatasetFileBytes, "LIBSVM dataset");
    } catch (const util::FileReadError& e) {
      m.Fail("dataset", e.what());
    }
  }
  p.samples = m.U32("samples", 2048, 8, 1u << 30);
  p.features = m.U32("features", 2048, 1, 1u << 26);
  p.max_samples = m.U32("max_samples", 0, 0, 1u << 30);
  p.density = m.Num("density", 0.1, 1e-6, 1.0);
  p.loss = m.Enum("loss", "logistic", {"linear", "logistic", "hinge"});
  p.precision_bits = m.U32("precision_bits", 4, 1, 8);
  p.minibatch = m.U32("minibatch", 64, 8, 1u << 20);
  if (p.minibatch % 8)
    m.Fail("minibatch", fmt::format("must be a multiple of 8 (micro-batches of 8 samples, p4sgd §4.1.2), got {}",
                                    p.minibatch));
  p.epochs = m.U32("epochs", 2, 1, 100000);
  p.learning_rate = m.Num("learning_rate", 1.0, 1e-9, 1e6);
  p.engines = m.U32("engines", 8, 1, 64);
  p.clock_mhz = m.Num("clock_mhz", 250, 1, 10000);
  p.bank_features = m.U32("bank_features", 64, 1, 4096);
  p.hbm_gbps_per_engine = m.Num("hbm_gbps_per_engine", 460, 0.001, 1e6);
  p.pipeline_cycles = m.U32("pipeline_cycles", 32, 0, 1u << 20);
  p.fpga_tx_ps = m.TimePs("fpga_tx_ns", 300, 0, 1e7, kPsPerNs);
  p.fpga_rx_ps = m.TimePs("fpga_rx_ns", 300, 0, 1e7, kPsPerNs);
  p.timeout_ps = m.TimePs("timeout_us", 50, 0.01, 1e9, kPsPerUs);
  p.slots = m.U32("slots", 65536, 1, 65536);
  if (p.slots & (p.slots - 1))
    m.Fail("slots", fmt::format("must be a power of two (the switch indexes its registers by the low bits), got {}",
                                p.slots));
  p.window = m.U32("window", 256, 1, 65536);
  p.udp_port = static_cast<uint16_t>(m.U32("udp_port", 20050, 1, 65535));
  p.pass_latency_ps = m.TimePs("pass_latency_ns", 520, 0, 1e6, kPsPerNs);
  p.operations = m.U32("operations", 1000, 1, 100'000'000);
  p.gap_ps = m.TimePs("gap_us", 0, 0, 1e9, kPsPerUs);
  if (p.data_parallel && p.task == P4SGDTask::kAllreduce)
    m.Fail("parallelism", "task \"allreduce\" is a latency benchmark; parallelism applies to task \"train\"");
  m.Done();
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) { ParseP4SGD(w, s); }

}  // namespace inasim::protocols::p4sgd
