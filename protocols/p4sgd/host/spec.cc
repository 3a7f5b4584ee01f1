// P4SGD's scenario keys: the workload.p4sgd section of a scenario -> P4SGDSpec
// (docs/SCENARIO.md), through the registry (Protocol::parse).
#include "ina/scenario-sections.h"
#include "common/spec_fields.h"
#include "protocols/p4sgd/host/spec.h"
#include "protocols/p4sgd/dataplane/keys.h"

#include "common/bounded_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace inasim::protocols::p4sgd {

using nlohmann::json;
using spec::Reader;

namespace {

using P4SGDSection = spec::Section<P4SGDSpec, Scenario>;

void CheckDataset(const P4SGDSpec& p, Reader& m) {
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
}

/// The task, the data and the GLM (p4sgd §3).
P4SGDSection& DeclareTraining(P4SGDSection& m) {
  return m
      .Enum("mode", &P4SGDSpec::mode, "paper", {{"paper", std::string("paper")}},
            "Switch program (Algorithm 2). The public P4 runs in `inasim-p4 replay` only (it cannot recover a lost "
            "result; see `protocols/p4sgd/dataplane/README.md`).")
      .Enum("task", &P4SGDSpec::task, "train", {{"train", P4SGDTask::kTrain}, {"allreduce", P4SGDTask::kAllreduce}},
            "`allreduce`: `operations` sequential 8 x int32 allreduces of hashed values (Fig. 8 latency).")
      .Enum("parallelism", &P4SGDSpec::data_parallel, "model", {{"model", false}, {"data", true}},
            "Model-parallel (features split, activations summed: P4SGD) or data-parallel (samples split, gradients "
            "summed; Fig. 9).")
      .Enum("arithmetic", &P4SGDSpec::hashed, "real", {{"real", false}, {"hashed", true}},
            "`hashed`: timing only (no dataset in memory), values hashed; sums are still checked. For full-size "
            "sweeps (1M features).")
      .Str("dataset", &P4SGDSpec::dataset, "synthetic",
           "Training data; LIBSVM features are min-max scaled per column and quantized.")
      .Allowed("`\"synthetic\"` or a LIBSVM file path")
      .Check(CheckDataset)
      .U32("samples", &P4SGDSpec::samples, 2048, 8, 1u << 30, "", "Synthetic / hashed dataset size.")
      .U32("features", &P4SGDSpec::features, 2048, 1, 1u << 26, "",
           "Synthetic / hashed model size. `samples x features` must fit 4 GiB with `real` arithmetic.")
      .U32("max_samples", &P4SGDSpec::max_samples, 0, 0, 1u << 30, "", "LIBSVM: read only the first N samples.")
      .DocDefault("`0` (all)")
      .Num("density", &P4SGDSpec::density, 0.1, 1e-6, 1.0, "", "Synthetic: fraction of non-zero features.")
      .Enum("loss", &P4SGDSpec::loss, "logistic",
            {{"linear", std::string("linear")}, {"logistic", std::string("logistic")}, {"hinge", std::string("hinge")}},
            "The GLM (linear regression, logistic regression, SVM).")
      .U32("precision_bits", &P4SGDSpec::precision_bits, 4, 1, 8, "bits", "Feature precision (§5.1: 4).")
      .U32("minibatch", &P4SGDSpec::minibatch, 64, 8, 1u << 20, "samples",
           "B; data-parallel also needs B divisible by the workers.")
      .AllowedNote("multiple of 8")
      .SchemaAlso({{"multipleOf", 8}})
      .Check([](const P4SGDSpec& p, Reader& r) {
        if (p.minibatch % 8)
          r.Fail("minibatch", fmt::format("must be a multiple of 8 (micro-batches of 8 samples, p4sgd §4.1.2), got {}",
                                          p.minibatch));
      })
      .U32("epochs", &P4SGDSpec::epochs, 2, 1, 100000, "", "Passes over the data (floor(samples / B) mini-batches each).")
      .Num("learning_rate", &P4SGDSpec::learning_rate, 1.0, 1e-9, 1e6, "", "Step size (update = lr x mean gradient).");
}

/// The FPGA worker (§4.1): engines x banks, bit-serial over 64 features per cycle.
P4SGDSection& DeclareWorker(P4SGDSection& m) {
  return m
      .U32("engines", &P4SGDSpec::engines, 8, 1, 64, "",
           "Engines per worker (§4.1.1), the worker's features split over them.")
      .Num("clock_mhz", &P4SGDSpec::clock_mhz, 250, 1, 10000, "MHz", "Engine clock (Table III).")
      .U32("bank_features", &P4SGDSpec::bank_features, 64, 1, 4096, "features/cycle",
           "Bit-serial multipliers per bank (§4.1.3).")
      .Num("hbm_gbps_per_engine", &P4SGDSpec::hbm_gbps_per_engine, 460, 0.001, 1e6, "Gb/s",
           "HBM read bandwidth of one engine (4 channels, §4.1.1).")
      .U32("pipeline_cycles", &P4SGDSpec::pipeline_cycles, 32, 0, 1u << 20, "cycles",
           "Fill latency added to each forward, backward and update pass (ours; the paper gives none).")
      .TimePs("fpga_tx_ns", &P4SGDSpec::fpga_tx_ps, 310, 0, 1e7, spec::TimeUnit::kNs,
              "The FPGA's send path, from the partial dot products to the wire: 20 + 15 cycles of the "
              "public RTL at 250 MHz (sgd_work_send.sv:63-186 and the registers before it), the padding "
              "core's 16 (its netlist's HLS_SYN_LAT), ~41 ns of Xilinx IP (register slices, the clock "
              "crossing to the MAC's 322 MHz) and ~125 ns of CMAC and transceiver (no Xilinx figure: half "
              "a 250 ns MAC+PHY round trip, a cross-vendor anchor under the VNx echo on the same U280). "
              "docs/research/p4sgd-fpga-path.md; not fitted to Fig. 8.")
      .TimePs("fpga_rx_ns", &P4SGDSpec::fpga_rx_ps, 189, 0, 1e7, spec::TimeUnit::kNs,
              "The FPGA's receive path: ~125 ns of CMAC and transceiver, ~32 ns of Xilinx IP (the clock "
              "crossing back to 250 MHz) and 8 cycles of the RTL (sgd_serial_loss and its fan-out "
              "registers). docs/research/p4sgd-fpga-path.md.");
}

/// The switch protocol (Algorithm 3); slots, udp_port and pass_latency_ns are
/// shared with inasim-p4's replay config (protocols/p4sgd/dataplane/keys.h).
P4SGDSection& DeclareProtocol(P4SGDSection& m) {
  m.TimePs("timeout_us", &P4SGDSpec::timeout_ps, 50, 0.01, 1e9, spec::TimeUnit::kUs,
           "Retransmission timer per aggregation or ack packet (Algorithm 3).");
  p4::p4sgd::keys::Slots(m, &P4SGDSpec::slots)
      .U32("window", &P4SGDSpec::window, 256, 1, 65536, "packets", "Data-parallel: gradient packets in flight per worker.");
  p4::p4sgd::keys::UdpPort(m, &P4SGDSpec::udp_port);
  p4::p4sgd::keys::PassLatency(m, &P4SGDSpec::pass_latency_ps);
  return m.U32("operations", &P4SGDSpec::operations, 1000, 1, 100'000'000, "", "Task `allreduce`: operations.")
      .TimePs("gap_us", &P4SGDSpec::gap_ps, 0, 0, 1e9, spec::TimeUnit::kUs, "Task `allreduce`: pause between operations.")
      .Check([](const P4SGDSpec& p, Reader& r) {
        if (p.data_parallel && p.task == P4SGDTask::kAllreduce)
          r.Fail("parallelism", "task \"allreduce\" is a latency benchmark; parallelism applies to task \"train\"");
      });
}

/// workload.p4sgd: the FPGA workers' training and the switch protocol (p4sgd §3-§5).
const P4SGDSection& P4SGD() {
  static const P4SGDSection section = [] {
    P4SGDSection m("workload.p4sgd", "P4SGD FPGA workers and switch (p4sgd-tpds23)");
    DeclareTraining(m);
    DeclareWorker(m);
    DeclareProtocol(m);
    return m;
  }();
  return section;
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) { P4SGD().ParseObject(w, "p4sgd", s.workload.spec<P4SGDSpec>(), s); }

std::vector<const spec::Doc*> WorkloadSections() { return {&P4SGD()}; }

}  // namespace inasim::protocols::p4sgd
