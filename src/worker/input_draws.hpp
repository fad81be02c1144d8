#pragma once
// The worker's inputs: `count` independent draws of x, the filters and the per-channel vectors
// (or, for accuracy tests, draws of wide range: protocol.hpp's protocol::InputRange)
// (the second and later draws put conv biases on the epilogue's thresholds), their
// channels-last copies (for cuDNN's NHWC algorithm search), and, unless verification is sliced
// by images (verify_memory.hpp), the float64 reference answer of each: the problem's output and
// the conv alone, with the math mode's bounds.
// A version-2 problem's draws are ModelDraws (model_draw.hpp): every tensor drawn on the host,
// the answers (the whole problem, and the main operator alone for the floor) from the CPU
// reference (model_answer.hpp), or, past its limits, those of one block of images per draw.
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "codegen/variant.hpp"
#include "common/math_mode.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device_buffer.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/image_slices.hpp"
#include "spec/problem.hpp"
#include "protocol/protocol.hpp"
#include "worker/model_draw.hpp"

namespace fusetune::worker {

struct Draw {
  // conv2d chain problems (empty for version-2 ones)
  gpu::DeviceBuffer x_nchw, x_nhwc;  // the input in both layouts
  gpu::DeviceBuffer w, w_krsc;       // (K, C, R, S) and (K, R, S, C)
  gpu::DeviceBuffer chan;            // [bias][param 0]..., at least 4 bytes
  bool has_chan = false;             // chan holds values (else the reference is passed 0)
  // tf32: kappa (reference/l2_model.hpp) of these inputs, for every answer of this draw
  double var_scale = 1.0;
  // The whole answer; empty when verification is sliced (ReferenceCheck computes slices). For a
  // version-2 problem `conv` holds the main operator alone, with its bias (the floor's answer).
  std::optional<reference::RefAnswer> answer;
  std::unique_ptr<ModelDraw> model;  // version-2 problems: the drawn tensors on the device
  // Version 2 past the whole reference's limits: the images `answer` covers (model_inputs.hpp's
  // model_sample_images); the answer's element 0 is the output's element first * (per image).
  std::optional<reference::ImageSlice> sample;

  [[nodiscard]] CUdeviceptr chan_or_0() const { return has_chan ? chan.ptr() : 0; }
};

class InputDraws {
 public:
  // cudnn: on stream s (it makes the channels-last copies of x). whole_answers: compute and
  // keep each draw's answer (false: verification is sliced by images; never for a version-2
  // problem, whose draws are all whole and uniform: InputRange::wide is refused for them).
  InputDraws(const spec::Problem& problem, reference::GpuReference& ref, const gpu::CudnnHandle& cudnn, uint64_t seed,
             int count, protocol::InputRange inputs, bool whole_answers, CUstream s);

  [[nodiscard]] int count() const { return int(draws_.size()); }
  [[nodiscard]] const Draw& draw(int d) const { return draws_.at(size_t(d)); }
  // The device buffer a plan's input buffer binds to in draw d (by its kind; for a version-2
  // plan through model_buffer_floats, by kind and index).
  [[nodiscard]] CUdeviceptr input(int d, const codegen::Buffer& b) const;

  // Device memory one draw's inputs take (without its answer), for the "does it fit" check.
  [[nodiscard]] static double input_bytes(const spec::Problem& problem);

 private:
  spec::Problem problem_;
  std::vector<Draw> draws_;
};

}  // namespace fusetune::worker
