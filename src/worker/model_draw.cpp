#include "worker/model_draw.hpp"

#include <fmt/format.h>

#include <span>

#include "common/error.hpp"
#include "worker/model_inputs.hpp"

namespace fusetune::worker {

namespace {

template <typename T>
gpu::DeviceBuffer upload(std::span<const T> host) {
  gpu::DeviceBuffer b(host.size_bytes());
  b.upload(host);
  return b;
}

}  // namespace

ModelDraw::ModelDraw(const spec::Problem& problem, uint64_t seed, int d)
    : host_(model_verification_draw(problem, seed, d)) {
  const auto add = [&](const std::vector<float>& t) {
    if (!t.empty()) tensors_.push_back({t.data(), upload(std::span<const float>(t))});
  };
  add(host_.input);
  add(host_.weight);
  add(host_.bias);
  for (const auto& t : host_.params) add(t);
  for (const auto& t : host_.inputs) add(t);
}

CUdeviceptr ModelDraw::bind(const codegen::Buffer& b) const {
  const std::span<const float> floats = model_buffer_floats(host_, b);
  for (const Tensor& t : tensors_)
    if (t.host == floats.data()) return t.device.ptr();
  throw Error(ExitCode::failure, fmt::format("buffer {}: its tensor of the draw was not uploaded", b.name));
}

CUdeviceptr ModelDraw::device_of(const float* host) const {
  for (const Tensor& t : tensors_)
    if (t.host == host) return t.device.ptr();
  throw Error(ExitCode::failure, "ModelDraw: a tensor of the draw was not uploaded");
}

reference::RefArrays upload_answer(const reference::BoundedReference& answer, double var_scale) {
  reference::RefArrays a;
  a.count = answer.values.size();
  a.values = upload(std::span<const double>(answer.values));
  // The TF32 rule reads both; the fp32 rule reads the variances (its dot-product term).
  a.bound = upload(std::span<const float>(answer.bound));
  a.var = upload(std::span<const float>(answer.var));
  a.var_scale = var_scale;
  return a;
}

}  // namespace fusetune::worker
