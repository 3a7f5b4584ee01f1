// What the protocols' scenario parsers (protocols/<name>/host/spec.cc) share
// with the scenario core: the time units of key names and the host-selection
// reader. A protocol parses its own section through its registry entry
// (Protocol::parse), after the core has read the keys every allreduce shares.
#pragma once

#include "common/spec_reader.h"
#include "ina/scenario.h"

namespace inasim {

/// Picoseconds per unit of a key written in _ns, _us, _ms.
inline constexpr double kPsPerNs = 1e3, kPsPerUs = 1e6, kPsPerMs = 1e9;

/// `hosts`: "all", a list of host ids, {"count", "placement"}, or (when
/// `allow_others`) "others", into `sel`; echoed into the resolved scenario.
void ParseHosts(spec::Reader& w, HostSelection& sel, bool allow_others = false);

}  // namespace inasim
