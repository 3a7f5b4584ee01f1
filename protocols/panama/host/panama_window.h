// PanamaWindow: the congestion window of one aggregation tree at one worker,
// exactly as PANAMA's Fig. 5 (panama-mlsys21 §4.2.2, "PANAMA congestion
// control algorithm"). Result packets are implicit acknowledgements: every
// packet a worker sends on a tree comes back as one aggregation result, whose
// ECN bits are the OR of every contribution's (the accelerators' ECN-OR) and
// whose wnd_cap is the smallest accelerator share on the tree.
//
// Pure C++ (no ns-3): the worker agent asks Allowed() before it sends and
// calls OnResult() per result; tests replay scripted mark sequences.
#pragma once

#include <cstdint>
#include <string>

namespace inasim::congestion {

struct PanamaWindowConfig {
  /// Fig. 5 initialisation: ssthresh_i <- 64, alpha_i <- 1, cwnd_i <- 2.
  double initial_ssthresh = 64;
  double initial_alpha = 1;
  double initial_cwnd = 2;
  /// g: weight of the newest window's marked fraction in alpha (Fig. 5's
  /// parameter; the paper gives no value, DCTCP's 1/16 is the default).
  double g = 1.0 / 16;
  /// Fig. 5 never resets ecn_count_i. Read literally, the first marked window
  /// stops every later increase (ecn_count_i stays > 0 for ever). `true`
  /// (default) resets it with rcvd_agg_packets_i at the end of each window, as
  /// DCTCP does and as §4.2.2 says the mechanism "matches that of DCTCP";
  /// `false` is the literal pseudo-code.
  bool reset_ecn_count_per_window = true;
  /// Fig. 5 grows the window only in windows without a mark. So does DCTCP
  /// in ns-3 (and Linux): a mark puts it in CWR for a window, in which the
  /// window is cut and not grown (nsnam/ns-3-dev-git@4407a95 (ns-3.37):
  /// src/internet/model/tcp-socket-base.cc:2108-2118; growth only in CA_OPEN,
  /// :2211-2213). `false` (default): that. `true`: the other reading, an
  /// additive increase in marked windows too (a marked window ends at cwnd x
  /// (1 - alpha/2) + 1 above ssthresh, 2 x cwnd x (1 - alpha/2) below it).
  bool increase_in_marked_windows = false;
  /// Fig. 5 cuts at the end of every window of results that carried a mark,
  /// so the results of packets already in flight when it cut (sent at the
  /// old window, into the same queue) cut again a window later. DCTCP cuts
  /// once per window of data: a mark puts it in CWR until everything in
  /// flight at the cut is acknowledged, and it neither cuts nor grows
  /// meanwhile (ns-3.37 tcp-socket-base.cc:1864-1891). `true`: that; the
  /// caller passes the packets in flight with each result. `false`
  /// (default): Fig. 5 as printed.
  bool cut_once_per_flight = false;
  /// The window never falls below this (packets): cwnd * (1 - alpha/2) would
  /// otherwise approach 0 and the tree would stall (the paper does not say).
  double min_cwnd = 1;
};

class PanamaWindow {
 public:
  explicit PanamaWindow(const PanamaWindowConfig& config = {});

  /// Fig. 5 "Input: Aggregation Result Packet": `ecn_marked` = the result's
  /// ECN field is CE; `wnd_cap` = its 16-bit wnd_cap field; `in_flight` =
  /// the tree's packets still in flight after this result (read only with
  /// cut_once_per_flight).
  void OnResult(bool ecn_marked, uint16_t wnd_cap, uint32_t in_flight = 0);

  /// Packets that may be in flight on the tree: floor(cwnd), at least 1.
  uint32_t Allowed() const;

  double cwnd() const { return cwnd_; }
  double ssthresh() const { return ssthresh_; }
  double alpha() const { return alpha_; }
  uint32_t rcvd_agg_packets() const { return rcvd_agg_packets_; }
  uint32_t ecn_count() const { return ecn_count_; }
  /// Windows ended (the "rcvd_agg_packets_i == cwnd_i" branch taken).
  uint64_t windows() const { return windows_; }
  /// Times the window was cut to the packet's wnd_cap.
  uint64_t cap_hits() const { return cap_hits_; }
  /// cut_once_per_flight: results still to come of packets in flight at the last cut.
  uint32_t cwr_left() const { return cwr_left_; }

  /// "cwnd=.. ssthresh=.. alpha=.." for traces and test messages.
  std::string ToString() const;

 private:
  PanamaWindowConfig config_;
  double cwnd_, ssthresh_, alpha_;
  uint32_t rcvd_agg_packets_ = 0;
  uint32_t ecn_count_ = 0;
  uint32_t cwr_left_ = 0;  ///< cut_once_per_flight: results still owed to packets in flight at the last cut
  uint64_t windows_ = 0;
  uint64_t cap_hits_ = 0;
};

}  // namespace inasim::congestion
