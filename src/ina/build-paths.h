// Where this build's Python lives, for `inasim sweep|compare` (main.cc), set
// at configure time (src/ina/CMakeLists.txt). Functions rather than macros on
// the executables' command line, so every executable compiles with the same
// definitions and shares one precompiled header.
#pragma once

namespace inasim {

/// The Python interpreter that runs the inasim package (Debian's python3).
const char* BuildPythonExecutable();
/// PYTHONPATH for it: this source tree's python/ and this build's python/.
const char* BuildPythonPath();

}  // namespace inasim
