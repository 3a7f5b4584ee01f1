// The floating-point datapath: one adder unit (the Xilinx Floating-Point
// Operator instance `axi_fp_unit`) and the adder tree built from them.
//
// nadeengebara/my_netfpga@92c98fe:lib/my_hw/std/cores/fp_adder_v1_0_0/hdl/fp_adder.v:107-135
// instantiates three `axi_fp_unit`s as ((in0 + in1) + (in2 + in3)); the IP is
// configured for addition (fp_adder_interface.tcl:4-14: floating_point 7.1,
// Add_Sub_Value Add, C_Latency 1). fp_datapath.v:273-301 instantiates
// NUM_FP_UNITS (2, :22) such trees side by side, one per 32-bit lane of the
// 64-bit bus (the SIMD trees of panama §5 (3), Fig. 6a), and masks the input
// of every port outside PORTS_BITMAP to +0 (:278-285).
#pragma once

#include <cstdint>
#include <vector>

#include "p4model/common/span.h"

namespace inasim::p4::panama {

/// How one adder unit treats the corners of IEEE-754.
enum class FloatMode : uint8_t {
  /// The hardware: the Xilinx Floating-Point Operator (fp_adder.v:107 axi_fp_unit).
  /// Round to nearest even; subnormal operands read as zero of their sign and
  /// subnormal results flushed to zero of the result's sign; every NaN result
  /// is kDefaultNaN (0x7fc00000). See README "Floating point".
  kFpga,
  /// panama §6 "fully compatible with the IEEE-754 single-precision standard":
  /// round to nearest even with gradual underflow; a NaN operand is returned
  /// quieted (the first operand's when both are NaN); inf - inf is kDefaultNaN.
  kIeee,
};

/// One `axi_fp_unit` (fp_adder.v:107, :117, :127): a + b in binary32.
class Fp32Adder {
 public:
  explicit Fp32Adder(FloatMode mode) : mode_(mode) {}
  uint32_t Add(uint32_t a, uint32_t b) const;
  FloatMode mode() const { return mode_; }

 private:
  FloatMode mode_;
};

/// The adder tree over all N input ports of the accelerator, in the fixed
/// order of the hardware: N = 4 is ((p0 + p1) + (p2 + p3)) (fp_adder.v:107-135);
/// other N split the ports into a first half of ceil(n/2) and a second half,
/// recursively (N - 1 adders, depth ceil(log2 N), panama Appendix A eq. (2)).
/// A port outside the job's bitmap feeds +0, as fp_datapath.v:278-285 masks it.
class AdderTree {
 public:
  AdderTree(uint32_t num_ports, FloatMode mode) : num_ports_(num_ports), adder_(mode) {}
  /// One lane: leaves[p] is port p's value (+0 for a non-member). leaves.size() == num_ports.
  uint32_t Reduce(inasim::Span<const uint32_t> leaves) const;
  uint32_t num_ports() const { return num_ports_; }
  /// Adder levels a value crosses: ceil(log2 N) (0 for N = 1).
  uint32_t Depth() const;
  const Fp32Adder& adder() const { return adder_; }

 private:
  uint32_t ReduceRange(const uint32_t* leaves, uint32_t n) const;
  uint32_t num_ports_;
  Fp32Adder adder_;
};

}  // namespace inasim::p4::panama
