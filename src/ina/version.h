#pragma once

namespace inasim {

// "<project version>+<git describe --always --dirty --tags>" of the tree this
// binary was built from, taken at build time (cmake/InasimVersion.cmake);
// echoed into every results.json, `inasim --version` and inasim.version().
const char* Version();

}  // namespace inasim
