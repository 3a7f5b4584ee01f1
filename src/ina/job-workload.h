// The Workload (ina/workload.h) of a protocol whose run is one object: a job,
// or a set of concurrent jobs. Every protocol's registry entry had the same
// adapter around its job set; this is that adapter, once.
#pragma once

#include "ina/scenario.h"
#include "ina/workload.h"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace inasim {

/// `Jobs` has `std::function<void()> on_finished`, `double progress() const`,
/// `void Report(const Scenario&, bool finished, WorkloadReport&) const` and
/// either `void Start(uint64_t at_ps)` (started at workload.start_us) or
/// `void Start()` (each job at a start time of its own), and may have
/// `bool KeyFrame(const p4::FrameView&, inasim::Span<const uint8_t>, FrameKey&) const`
/// (Workload::KeyFrame, for the event trace).
template <typename Jobs>
class JobWorkload final : public Workload {
 public:
  /// `make()` builds the jobs on the fabric (a std::unique_ptr<Jobs>); a
  /// std::invalid_argument from it is input the scenario parser could not
  /// see, reported as ScenarioError "workload: ...".
  template <typename Make>
  JobWorkload(const Scenario& s, Make&& make) : s_(s) {
    try {
      jobs_ = make();
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(fmt::format("workload: {}", e.what()));
    }
  }
  void Start(std::function<void()> on_finished) override {
    jobs_->on_finished = std::move(on_finished);
    if constexpr (kStartsAtWorkloadStart) jobs_->Start(s_.workload.start_ps);
    else jobs_->Start();
  }
  double Progress() const override { return jobs_->progress(); }
  void Report(bool finished, WorkloadReport& out) const override { jobs_->Report(s_, finished, out); }
  /// Forwarded to `Jobs::KeyFrame` when the job set has one.
  bool KeyFrame(const p4::FrameView& view, inasim::Span<const uint8_t> frame, FrameKey& key) const override {
    if constexpr (kKeysFrames) return jobs_->KeyFrame(view, frame, key);
    else return false;
  }

 private:
  template <typename J, typename = void>
  struct TakesStartTime : std::false_type {};
  template <typename J>
  struct TakesStartTime<J, std::void_t<decltype(std::declval<J&>().Start(uint64_t{}))>> : std::true_type {};
  static constexpr bool kStartsAtWorkloadStart = TakesStartTime<Jobs>::value;
  template <typename J, typename = void>
  struct HasKeyFrame : std::false_type {};
  template <typename J>
  struct HasKeyFrame<J, std::void_t<decltype(std::declval<const J&>().KeyFrame(
                            std::declval<const p4::FrameView&>(), inasim::Span<const uint8_t>(),
                            std::declval<FrameKey&>()))>> : std::true_type {};
  static constexpr bool kKeysFrames = HasKeyFrame<Jobs>::value;

  const Scenario& s_;
  std::unique_ptr<Jobs> jobs_;
};

/// A protocol's MakeWorkload: `return MakeJobWorkload<MyJob>(context, [&] { return std::make_unique<MyJob>(...); });`
template <typename Jobs, typename Make>
std::unique_ptr<Workload> MakeJobWorkload(const WorkloadContext& context, Make&& make) {
  return std::make_unique<JobWorkload<Jobs>>(context.scenario, std::forward<Make>(make));
}

}  // namespace inasim
