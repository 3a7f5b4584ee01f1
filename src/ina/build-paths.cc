#include "ina/build-paths.h"

namespace inasim {

const char* BuildPythonExecutable() { return INASIM_PYTHON; }
const char* BuildPythonPath() { return INASIM_PYTHONPATH; }

}  // namespace inasim
