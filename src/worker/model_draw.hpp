#pragma once
// One input draw of a version-2 problem on the device (docs/architecture.md, version-2 section,
// item 2): the host draw (model_verification_draw), every tensor of it uploaded once, a plan's
// input buffers bound to them through model_buffer_floats, and the float64 answers (model_answers:
// the GPU's main-operator terms, the stages on the CPU) in device memory as GpuReference::compare
// reads them. InputDraws keeps one per draw; plans never write their input buffers
// (check_variant), so the tensors stay as drawn.
#include <cuda.h>

#include <cstdint>
#include <vector>

#include "codegen/variant.hpp"
#include "gpu/device_buffer.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::worker {

class ModelDraw {
 public:
  // Draw d of `problem` (seeded), every tensor uploaded (the copies return when done).
  ModelDraw(const spec::Problem& problem, uint64_t seed, int d);

  // The device memory an input buffer of a v2 plan binds to: the tensor model_buffer_floats
  // names for it. Throws Error as model_buffer_floats does (a scratch or chain-form buffer, an
  // index out of range, a size that is not its tensor's).
  [[nodiscard]] CUdeviceptr bind(const codegen::Buffer& b) const;

  [[nodiscard]] const reference::ModelData& host() const { return host_; }
  // The main operator's input and weight in device memory, for the GPU reference's terms.
  [[nodiscard]] CUdeviceptr input() const { return device_of(host_.input.data()); }
  [[nodiscard]] CUdeviceptr weight() const { return device_of(host_.weight.data()); }

 private:
  struct Tensor {
    const float* host = nullptr;  // the host storage model_buffer_floats returns for it
    gpu::DeviceBuffer device;
  };
  [[nodiscard]] CUdeviceptr device_of(const float* host) const;

  reference::ModelData host_;    // its vectors' storage never moves: Tensor::host points into it
  std::vector<Tensor> tensors_;  // the non-empty ones
};

// A host answer's values (doubles) and, for the TF32 rule, bounds and variances (floats) in
// device memory, with the draw's kappa.
[[nodiscard]] reference::RefArrays upload_answer(const reference::BoundedReference& answer, double var_scale);

}  // namespace fusetune::worker
