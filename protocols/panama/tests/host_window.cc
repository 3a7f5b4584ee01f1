// PANAMA's congestion control (panama-mlsys21 Fig. 5) on scripted sequences of
// result packets: the window trace is worked out by hand below (every value
// is a dyadic rational, so exact in double).
#include "protocols/panama/host/panama_window.h"

#include <gtest/gtest.h>

using inasim::congestion::PanamaWindow;
using inasim::congestion::PanamaWindowConfig;

namespace {
constexpr uint16_t kNoCap = 0xffff;
void Results(PanamaWindow& w, int n, int marked_first = 0, uint16_t cap = kNoCap) {
  for (int i = 0; i < n; ++i) w.OnResult(i < marked_first, cap);
}
}  // namespace

TEST(PanamaWindow, InitialisationIsFig5s) {
  PanamaWindow w;
  EXPECT_EQ(w.cwnd(), 2);
  EXPECT_EQ(w.ssthresh(), 64);
  EXPECT_EQ(w.alpha(), 1);
  EXPECT_EQ(w.Allowed(), 2u);
}

TEST(PanamaWindow, WorkedTraceSlowStartMarksDecreaseAdditiveIncreaseAndCap) {
  PanamaWindow w;  // g = 1/16
  // Window 1: 2 unmarked results. alpha = 1 * 15/16; cwnd < ssthresh: doubles.
  Results(w, 1);
  EXPECT_EQ(w.cwnd(), 2) << "the window changes only when rcvd reaches cwnd";
  EXPECT_EQ(w.rcvd_agg_packets(), 1u);
  Results(w, 1);
  EXPECT_EQ(w.alpha(), 0.9375);
  EXPECT_EQ(w.cwnd(), 4);
  // Window 2: 4 unmarked. alpha = 0.9375 * 15/16.
  Results(w, 4);
  EXPECT_EQ(w.alpha(), 0.87890625);
  EXPECT_EQ(w.cwnd(), 8);
  // Window 3: 8 results, 2 marked. alpha = 0.87890625 * 15/16 + 1/16 * 2/8;
  // cwnd = 8 * (1 - alpha/2); ssthresh = cwnd.
  Results(w, 8, 2);
  EXPECT_EQ(w.alpha(), 0.839599609375);
  EXPECT_EQ(w.cwnd(), 4.6416015625);
  EXPECT_EQ(w.ssthresh(), 4.6416015625);
  EXPECT_EQ(w.Allowed(), 4u);
  EXPECT_EQ(w.ecn_count(), 0u) << "reset with the window (DCTCP)";
  // Window 4 ends at the 5th result (rcvd >= 4.64): no marks, cwnd == ssthresh
  // is not below it, so +1.
  Results(w, 4);
  EXPECT_EQ(w.cwnd(), 4.6416015625);
  Results(w, 1);
  EXPECT_EQ(w.alpha(), 0.7871246337890625);
  EXPECT_EQ(w.cwnd(), 5.6416015625);
  EXPECT_EQ(w.windows(), 4u);
  // A result carrying wnd_cap 3 caps the window at once, mid-window.
  w.OnResult(false, 3);
  EXPECT_EQ(w.cwnd(), 3);
  EXPECT_EQ(w.Allowed(), 3u);
  EXPECT_EQ(w.cap_hits(), 1u);
}

TEST(PanamaWindow, CapAppliesInSlowStartToo) {
  PanamaWindow w;
  Results(w, 2, 0, 3);  // would double to 4: capped to 3
  EXPECT_EQ(w.cwnd(), 3);
  Results(w, 3, 0, 3);  // would double to 6: capped again
  EXPECT_EQ(w.cwnd(), 3);
  EXPECT_EQ(w.cap_hits(), 2u);
}

TEST(PanamaWindow, EveryResultMarkedConvergesToMinimum) {
  PanamaWindow w;
  for (int i = 0; i < 200; ++i) w.OnResult(true, kNoCap);
  EXPECT_EQ(w.cwnd(), 1);
  EXPECT_EQ(w.Allowed(), 1u);
  EXPECT_GT(w.alpha(), 0.99);
}

TEST(PanamaWindow, LiteralPseudoCodeNeverIncreasesAfterTheFirstMark) {
  PanamaWindowConfig literal;
  literal.reset_ecn_count_per_window = false;
  PanamaWindow lit(literal), dctcp;
  for (PanamaWindow* w : {&lit, &dctcp}) {
    Results(*w, 2);        // 2 -> 4
    Results(*w, 4, 1);     // one mark: decrease
  }
  EXPECT_EQ(lit.cwnd(), dctcp.cwnd());
  const double after_mark = lit.cwnd();
  for (PanamaWindow* w : {&lit, &dctcp}) Results(*w, 20);  // no more marks
  EXPECT_GT(dctcp.cwnd(), after_mark);
  EXPECT_LT(lit.cwnd(), after_mark) << "ecn_count stays 1: every window decreases again";
  EXPECT_EQ(lit.ecn_count(), 1u);
}

TEST(PanamaWindow, GWeighsTheNewestWindow) {
  PanamaWindowConfig c;
  c.g = 0.5;
  PanamaWindow w(c);
  Results(w, 2, 1);  // alpha = 1 * 0.5 + 0.5 * 1/2 = 0.75; cwnd = 2 * (1 - 0.375)
  EXPECT_EQ(w.alpha(), 0.75);
  EXPECT_EQ(w.cwnd(), 1.25);
  EXPECT_EQ(w.ssthresh(), 1.25);
}

TEST(PanamaWindow, EveryWindowModeKeepsTheAdditiveIncreaseInMarkedWindows) {
  // Same start as the worked trace: windows of 2 and 4 unmarked -> cwnd 8,
  // alpha 0.87890625; then 8 results with 2 marked.
  PanamaWindowConfig c;
  c.increase_in_marked_windows = true;
  PanamaWindow w(c);
  Results(w, 2);
  Results(w, 4);
  Results(w, 8, 2);
  // cwnd = 8 * (1 - 0.839599609375/2) + 1 (DCTCP keeps growing); ssthresh the cut value.
  EXPECT_EQ(w.alpha(), 0.839599609375);
  EXPECT_EQ(w.ssthresh(), 4.6416015625);
  EXPECT_EQ(w.cwnd(), 5.6416015625);
  // Fig. 5 (default) would be at 4.6416015625; every later marked window differs by the +1.
  PanamaWindow fig5;
  Results(fig5, 2);
  Results(fig5, 4);
  Results(fig5, 8, 2);
  EXPECT_EQ(fig5.cwnd(), 4.6416015625);
}

TEST(PanamaWindow, OncePerFlightCutsOnceForResultsSentBeforeTheCut) {
  // Worked: initial_cwnd = ssthresh = 8, alpha = 1 (Fig. 5's), g = 1/2.
  // Window 1: 8 results, all marked, 8 more in flight after the last one.
  // alpha = 1 * 1/2 + 1/2 * 8/8 = 1; cwnd = 8 * (1 - 1/2) = 4.
  PanamaWindowConfig c;
  c.initial_cwnd = 8;
  c.initial_ssthresh = 8;
  c.g = 0.5;
  PanamaWindow fig5(c);
  c.cut_once_per_flight = true;
  PanamaWindow cwr(c);
  for (PanamaWindow* w : {&fig5, &cwr}) {
    for (int i = 0; i < 8; ++i) w->OnResult(true, kNoCap, 8);
    EXPECT_EQ(w->cwnd(), 4);
  }
  EXPECT_EQ(cwr.cwr_left(), 8u);
  // Window 2: 4 marked results of packets sent before the cut (in flight 7..4
  // after them). alpha = 1/2 + 1/2 * 4/4 = 1 in both. Fig. 5 cuts again to 2;
  // DCTCP's CWR neither cuts nor grows: 4 results of the 8 still owed.
  for (int i = 0; i < 4; ++i) fig5.OnResult(true, kNoCap, 7 - i);
  for (int i = 0; i < 4; ++i) cwr.OnResult(true, kNoCap, 7 - i);
  EXPECT_EQ(fig5.cwnd(), 2);
  EXPECT_EQ(cwr.cwnd(), 4);
  EXPECT_EQ(cwr.alpha(), 1);
  EXPECT_EQ(cwr.cwr_left(), 4u);
  // Window 3: the last 4 owed, unmarked. Its last result clears the debt, so
  // the window ends out of CWR (as ns-3 leaves CWR on the ACK past the
  // recovery point and grows on that ACK): alpha = 1/2, cwnd 4 >= ssthresh 4: +1.
  for (int i = 0; i < 3; ++i) cwr.OnResult(false, kNoCap, 4);
  EXPECT_EQ(cwr.cwr_left(), 1u);
  cwr.OnResult(false, kNoCap, 4);
  EXPECT_EQ(cwr.cwr_left(), 0u);
  EXPECT_EQ(cwr.alpha(), 0.5);
  EXPECT_EQ(cwr.cwnd(), 5);
  // A marked window now cuts: alpha = 1/4 + 1/2 * 5/5 = 3/4, cwnd = 5 * 5/8.
  for (int i = 0; i < 5; ++i) cwr.OnResult(true, kNoCap, 3);
  EXPECT_EQ(cwr.cwnd(), 3.125);
  EXPECT_EQ(cwr.cwr_left(), 3u);
}
