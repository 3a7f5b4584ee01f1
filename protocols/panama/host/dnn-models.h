// The DNNs of PANAMA's shared-cluster workload (panama-mlsys21 §7: "VGG16,
// AlexNet, Resnet152, Resnet50, Inceptionv3, and GoogleNet", compute time "as
// measured with P100 GPUs"), as data with sources. The paper gives neither the
// sizes nor its P100 times, so both come from public tables:
//   parameters: Keras Applications' model table (keras.io/api/applications,
//     include_top=True) for VGG16, ResNet50, ResNet152 and InceptionV3;
//     AlexNet: "60 million parameters" (Krizhevsky et al., NIPS 2012, abstract).
//   P100 time per iteration = batch / (images/s) of one P100 training with
//     synthetic data, TensorFlow's benchmark table (tensorflow/docs@62da04c
//     site/en/r1/guide/performance/benchmarks.md, "Details for NVIDIA DGX-1
//     (NVIDIA Tesla P100)", GPUs = 1; batch 64, AlexNet 512).
// GoogLeNet is left out: that table has no P100 figure for it, and we found
// no other citable one.
// analysis/fig_panama_fig1.py (PANAMA Fig. 1) reads kDnnModels from this file,
// one {"name", parameters, batch, images_per_s} per line: keep that form.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace inasim {

struct DnnModel {
  std::string_view name;     ///< scenario name
  uint64_t parameters;       ///< fp32 gradients per iteration
  uint32_t batch;            ///< per-GPU batch of the timing
  double images_per_s;       ///< one P100, synthetic data
  uint64_t GradientBytes() const { return parameters * 4; }
  double ComputeSeconds() const { return batch / images_per_s; }
};

inline constexpr std::array<DnnModel, 5> kDnnModels = {{
    {"vgg16", 138'357'544, 64, 154.0},
    {"alexnet", 60'000'000, 512, 2987.0},
    {"resnet152", 60'419'944, 64, 91.8},
    {"resnet50", 25'636'712, 64, 219.0},
    {"inceptionv3", 23'851'784, 64, 142.0},
}};

/// nullptr for an unknown name.
inline const DnnModel* FindDnnModel(std::string_view name) {
  for (const DnnModel& m : kDnnModels)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace inasim
