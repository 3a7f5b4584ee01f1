// P4SGD's scenario section, workload.p4sgd (parsed by spec.cc).
#pragma once

#include "ina/scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace inasim {

/// P4SGD: FPGA workers and the P4SGD switch (scenario `workload.p4sgd`; p4sgd §3-§5).
enum class P4SGDTask : uint8_t { kTrain, kAllreduce };
struct P4SGDSpec {
  std::string mode = "paper";            ///< switch program: "paper" (Algorithm 2/3)
  P4SGDTask task = P4SGDTask::kTrain;
  bool data_parallel = false;            ///< §2.1 / Fig. 9: gradients summed instead of activations
  bool hashed = false;                   ///< arithmetic "hashed": timing only, hashed values (sums still checked)
  std::string dataset = "synthetic";     ///< "synthetic" or a LIBSVM file
  uint32_t samples = 2048, features = 2048;  ///< synthetic / hashed dimensions
  uint32_t max_samples = 0;              ///< LIBSVM: first N samples (0 = all)
  double density = 0.1;                  ///< synthetic: fraction of non-zero features
  std::string loss = "logistic";         ///< linear | logistic | hinge
  uint32_t precision_bits = 4;           ///< §5.1: 4-bit features
  uint32_t minibatch = 64;               ///< B; micro-batches of 8 (§4.1.2)
  uint32_t epochs = 2;
  double learning_rate = 1.0;
  // The FPGA worker (§4.1): engines x banks, bit-serial over 64 features per cycle.
  uint32_t engines = 8;                  ///< §4.1.1: up to 8 per U280
  double clock_mhz = 250;                ///< Table III
  uint32_t bank_features = 64;           ///< §4.1.3: 64 bit-serial multipliers per bank
  double hbm_gbps_per_engine = 460;      ///< 4 HBM channels per engine (§4.1.1), Gb/s
  uint32_t pipeline_cycles = 32;         ///< fill latency of a forward or backward pass (ours)
  uint64_t fpga_tx_ps = 310'000;         ///< FPGA send path: the RTL's stages + MAC (docs/research/p4sgd-fpga-path.md)
  uint64_t fpga_rx_ps = 189'000;         ///< FPGA receive path: MAC + the RTL's stages
  // Protocol (Algorithm 3).
  uint64_t timeout_ps = 50'000'000;      ///< retransmission timer per packet
  uint32_t slots = 65536;                ///< switch register cells (§4.2: 64K)
  uint32_t window = 256;                 ///< data-parallel: packets in flight per worker
  uint16_t udp_port = 20050;
  uint64_t pass_latency_ps = 520'000;
  uint32_t operations = 1000;            ///< task allreduce: sequential 8-element allreduces
  uint64_t gap_ps = 0;                   ///< task allreduce: pause between operations
};

}  // namespace inasim
