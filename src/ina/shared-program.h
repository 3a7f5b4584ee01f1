// One switch program shared by several concurrent jobs: the first job to
// reach a switch installs its program there, and every later job joins the
// program already installed (adds its table partition, its trees, its job
// state) instead of replacing it, as one controller would install each job
// on a running switch.
#pragma once

#include "ina/ina-switch-node.h"

#include <memory>

namespace inasim {

/// The `Program` on `node`: when an earlier job installed one, `join(program)`
/// adds this job to it; otherwise `install()` builds the program for this job
/// (a std::unique_ptr<Program>) and it goes on the switch. Either way the
/// program is returned (it lives as long as the switch holds it).
template <typename Program, typename Install, typename Join>
Program& InstallOrJoin(InaSwitchNode& node, Install&& install, Join&& join) {
  if (auto* installed = dynamic_cast<Program*>(node.dataplane())) {
    join(*installed);
    return *installed;
  }
  std::unique_ptr<Program> program = install();
  Program& p = *program;
  node.SetDataplane(std::move(program));
  return p;
}

}  // namespace inasim
