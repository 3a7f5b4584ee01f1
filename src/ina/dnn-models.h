// DNN models by name (data/models/dnn-models.csv, compiled in; a scenario
// adds or replaces rows from a file of the same form): parameter counts and
// a GPU's training throughput, each row citing its source. Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inasim {

struct DnnModel {
  std::string name;           ///< scenario name
  uint64_t parameters = 0;    ///< fp32 gradients per iteration
  uint32_t batch = 0;         ///< per-GPU batch of the timing
  std::string gpu;            ///< the GPU the timing is for
  double images_per_s = 0;    ///< that GPU's training throughput, synthetic data
  std::string source;
  uint64_t GradientBytes() const { return parameters * 4; }
  double ComputeSeconds() const { return batch / images_per_s; }
};

/// Rows of a models CSV: a header `name,parameters,batch,gpu,images_per_s,source`,
/// then one model per line (# comments and blank lines skipped).
/// std::invalid_argument "<origin>:<line>: <field>: <problem>" for bad input.
std::vector<DnnModel> ParseDnnModels(std::string_view text, const std::string& origin);
/// data/models/dnn-models.csv, as compiled in.
const std::vector<DnnModel>& BuiltinDnnModels();
/// `base` with `more` merged in: a row of `more` replaces the model of its name, or is added.
std::vector<DnnModel> MergeDnnModels(std::vector<DnnModel> base, const std::vector<DnnModel>& more);
/// nullptr for an unknown name.
const DnnModel* FindDnnModel(const std::vector<DnnModel>& models, std::string_view name);

}  // namespace inasim
