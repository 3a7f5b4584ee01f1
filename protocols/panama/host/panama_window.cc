#include "protocols/panama/host/panama_window.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace inasim::congestion {

PanamaWindow::PanamaWindow(const PanamaWindowConfig& config)
    : config_(config), cwnd_(config.initial_cwnd), ssthresh_(config.initial_ssthresh), alpha_(config.initial_alpha) {}

void PanamaWindow::OnResult(bool ecn_marked, uint16_t wnd_cap, uint32_t in_flight) {
  ++rcvd_agg_packets_;
  if (ecn_marked) ++ecn_count_;
  if (cwr_left_ > 0) --cwr_left_;
  // Fig. 5 tests rcvd_agg_packets_i == cwnd_i; after a decrease cwnd is not
  // a whole number, so the window ends when the count reaches it.
  if (static_cast<double>(rcvd_agg_packets_) >= cwnd_) {
    ++windows_;
    alpha_ = alpha_ * (1 - config_.g) + config_.g * (static_cast<double>(ecn_count_) / cwnd_);
    rcvd_agg_packets_ = 0;
    if (cwr_left_ > 0) {
      // DCTCP's CWR: this window's results were sent before the last cut.
    } else if (ecn_count_ == 0) {
      cwnd_ = cwnd_ < ssthresh_ ? 2 * cwnd_ : cwnd_ + 1;  // slow start, then +1 per window
    } else {
      cwnd_ = std::max(config_.min_cwnd, cwnd_ * (1 - alpha_ / 2));
      ssthresh_ = cwnd_;
      if (config_.increase_in_marked_windows) cwnd_ += 1;  // the other reading: additive increase here too
      if (config_.cut_once_per_flight) cwr_left_ = in_flight;
    }
    if (config_.reset_ecn_count_per_window) ecn_count_ = 0;
  }
  // Congestion window capping (§4.2.2): never more in flight than the
  // smallest accelerator share on the tree.
  if (cwnd_ > static_cast<double>(wnd_cap)) {
    cwnd_ = std::max(config_.min_cwnd, static_cast<double>(wnd_cap));
    ++cap_hits_;
  }
}

uint32_t PanamaWindow::Allowed() const {
  return static_cast<uint32_t>(std::max(1.0, std::floor(cwnd_)));
}

std::string PanamaWindow::ToString() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "cwnd=%.6g ssthresh=%.6g alpha=%.6g rcvd=%u ecn=%u", cwnd_, ssthresh_, alpha_,
                rcvd_agg_packets_, ecn_count_);
  return buf;
}

}  // namespace inasim::congestion
