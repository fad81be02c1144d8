#pragma once
// The one variant record every candidate produces: what to compile (one source, possibly
// several kernels) and how to run it (a plan of steps over named buffers). The worker
// process executes plans without knowing which candidate made them, so a new candidate
// (cudnn-fused, fused-conv) plugs in by emitting new steps, not new worker code.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::codegen {

struct LaunchConfig {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t smem_bytes = 0;  // dynamic shared memory
  [[nodiscard]] uint64_t threads() const {
    return uint64_t(block[0]) * block[1] * block[2];
  }
};

// Named buffers a plan can refer to. Sizes follow from the problem:
//   x        input, in the problem's input layout
//   x_nhwc   input transposed to NHWC (channels-last designs)
//   w        filters KCRS (w_krsc: KRSC for NHWC convs)
//   y        conv output (N,K,P,Q) in the step's layout
//   out      the problem's output
//   chan     per-channel vectors: [conv bias][param 0][param 1]..., each K floats
//   tmp0/1   scratch of conv-output size (unfused chains ping-pong)
enum class StepKind { cudnn_conv, kernel };

struct Step {
  StepKind kind = StepKind::kernel;
  // cudnn_conv: y = conv(in) (+ bias when with_bias)
  spec::Layout conv_layout = spec::Layout::nchw;
  bool with_bias = false;
  // kernel: kernel_name<<<launch>>>(args...), each arg a buffer name
  std::string kernel_name;
  LaunchConfig launch;
  std::vector<std::string> args;
  // Buffers read and written (for cudnn_conv: {in}, {out}).
  std::string in;
  std::string out;
  bool timed = true;  // false: a one-time parameter transform, run outside the timed region
};

struct Variant {
  std::string candidate;  // unfused | cudnn | cudnn-fused | epilogue | fused-conv
  std::string name;       // procedural and unique, e.g. "epilogue.nchw.b256.v4.e2"
  std::vector<std::pair<std::string, int64_t>> params;  // ordered; each is a #define in source
  std::string source;     // complete, readable CUDA source ("" when nothing to compile)
  std::vector<Step> plan;
  // The buffer holding the problem's output after the plan ran ("y" when the epilogue ran in place).
  std::string output_buffer = "out";
  // Layout of output_buffer (nchw or nhwc; nhwc only when the spec allows out=nhwc|any).
  spec::Layout output_layout = spec::Layout::nchw;
  // Bytes the generated kernels must move (read + written) at minimum, for GB/s figures.
  double kernel_bytes = 0.0;
};

}  // namespace fusetune::codegen
