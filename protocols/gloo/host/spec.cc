// Gloo's scenario keys: the workload.gloo section of a scenario -> GlooSpec
// (docs/SCENARIO.md), read through the registry (Protocol::parse).
#include "common/spec_fields.h"
#include "congestion/linux-tcp.h"
#include "ina/scenario-sections.h"
#include "protocols/gloo/host/spec.h"

#include <fmt/format.h>

namespace inasim::protocols::gloo {

using spec::Reader;

namespace {

using GlooSection = spec::Section<GlooSpec, Scenario>;

const GlooSection& Section() {
  static const GlooSection section =
      congestion::LinuxTcpKeys(
          GlooSection("workload.gloo", "Gloo ring allreduce over TCP")
              .U64("max_segment_bytes", &GlooSpec::max_segment_bytes, 1u << 20, 4, 1ull << 32, "bytes",
                   "The largest send/recv (`kMaxSegmentSize`, gloo allreduce.h:75-84: \"two are in flight at "
                   "all times\"); the tensor is cut into max(ceil(S / this), 2 n) segments rounded up to a "
                   "multiple of n."))
          .U32("rcvbuf_bytes", &GlooSpec::rcvbuf_bytes, 6u << 20, 4096, 1u << 30, "bytes",
               "Receive buffer (Linux `tcp_rmem[2]`, the ceiling its autotuning reaches); the send buffer is "
               "raised to the segment size as Gloo does (tcp/pair.cc:847-857), at least this.")
          .U16("port", &GlooSpec::port, 5200, 1, 65535, "", "The ranks' TCP listening port.");
  return section;
}

}  // namespace

void ParseWorkload(Reader& w, Scenario& s) { Section().ParseObject(w, "gloo", s.workload.spec<GlooSpec>(), s); }

std::vector<const spec::Doc*> WorkloadSections() { return {&Section()}; }

}  // namespace inasim::protocols::gloo
