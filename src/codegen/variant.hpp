#pragma once
// The one variant record every candidate produces: what to compile (one source, possibly
// several kernels), the buffers it uses (a typed table), and how to run it (a plan of steps
// over those buffers). The worker executes plans without knowing which candidate made them,
// so a new candidate (cudnn-fused, fused-conv) plugs in by emitting buffers and steps; a new
// *kind* of step is a new StepKind, and every `switch` over StepKind (no `default`) then
// names the sites it must touch.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::codegen {

// Which candidate made a variant (docs/architecture.md, "Candidates"). Everything else about a candidate (its
// name, role, generator, colour, export rules) is its row in the registry, codegen/candidates.hpp.
// kCandidateCount follows the last value: the registry test checks that each value has a row.
enum class Candidate { unfused, cudnn, epilogue, fused_conv, cudnn_fused };
inline constexpr int kCandidateCount = int(Candidate::cudnn_fused) + 1;

// The part a candidate plays in a tune:
//   baseline  what PyTorch eager runs; every speedup is measured against it
//   floor     the conv alone: not a full solution, no "conv, then epilogue" design beats it;
//             verified against the conv's own reference, never a winner
//   solution  a generated design competing to win
enum class Role { baseline, floor, solution };

// "unfused" | "cudnn" | "epilogue" | "fused-conv" | "cudnn-fused"
[[nodiscard]] std::string_view candidate_name(Candidate c);
[[nodiscard]] std::optional<Candidate> candidate_from_name(std::string_view name);
[[nodiscard]] Role role_of(Candidate c);
[[nodiscard]] std::string_view role_name(Role r);  // "baseline" | "floor" | "solution"

struct LaunchConfig {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t smem_bytes = 0;  // dynamic shared memory
  [[nodiscard]] uint64_t threads() const { return uint64_t(block[0]) * block[1] * block[2]; }
};

// What a buffer holds when a plan starts. The worker binds the first three to the input
// draw (read only: a plan never writes them); scratch it allocates, and poisons with NaN
// before each verification run.
enum class BufferKind {
  input,     // the problem's input x, in the problem's input layout
  filters,   // the conv filters as PyTorch holds them, (K, C, R, S)
  channels,  // per-channel vectors: [conv bias][param 0][param 1]..., K floats each
  scratch,   // made by the plan
};

[[nodiscard]] std::string_view buffer_kind_name(BufferKind k);
[[nodiscard]] std::optional<BufferKind> buffer_kind_from_name(std::string_view name);

// How a buffer's floats are ordered; `dims` lists its extents in that order.
enum class TensorLayout { nchw, nhwc, kcrs, krsc, vector };

[[nodiscard]] std::string_view tensor_layout_name(TensorLayout l);  // "NCHW", ..., "vector"
[[nodiscard]] std::optional<TensorLayout> tensor_layout_from_name(std::string_view name);

struct Buffer {
  std::string name;  // an identifier; plans, exports and messages use it
  BufferKind kind = BufferKind::scratch;
  TensorLayout layout = TensorLayout::vector;
  std::vector<std::pair<std::string, int64_t>> dims;  // named extents in layout order
  std::string what;  // one line for people: "the conv output", ...

  [[nodiscard]] int64_t floats() const;
  // "(N, K, P, Q) = (128, 128, 126, 126)"
  [[nodiscard]] std::string dims_text() const;
};

// Index into Variant::buffers.
using BufferRef = uint32_t;

// out = conv(in, filters) (+ bias[k]) through cuDNN. layout: of in and out (NCHW or NHWC);
// the filters are KCRS for NCHW, KRSC for NHWC (cuDNN's filter formats).
struct ConvStep {
  spec::Layout layout = spec::Layout::nchw;
  BufferRef in = 0;
  BufferRef filters = 0;
  BufferRef out = 0;
  std::optional<BufferRef> bias;  // the channels buffer, whose first K floats are the conv bias
};

// cuDNN's graph API (cudnn-frontend): conv -> (+ bias) -> (the problem's ops before the reduction)
// -> (the channel reduction) as ONE operation graph that cuDNN fuses at run time. The graph is
// built from the problem itself (gpu/cudnn_graph.hpp); the step says which part it covers and
// where its tensors live. x is read in `in_layout`, the filters are KRSC, `out` is written
// channels-last: (N, K, P, Q) NHWC, or (N, 1, P, Q) after the reduction. A mean reduction is a
// sum here: its 1/K scale is left to the step after. Which engine configuration runs comes from
// the variant's parameters (codegen/cudnn_engine.hpp): none means cuDNN's heuristic choice.
struct GraphStep {
  spec::Layout in_layout = spec::Layout::nhwc;
  BufferRef in = 0;
  BufferRef filters = 0;
  BufferRef out = 0;
  std::optional<BufferRef> chan;  // the channels buffer: conv bias and per-channel operands
  bool epilogue = false;          // false: the conv (+ bias) alone
};

// name<<<launch>>>(args...): each argument a buffer pointer, in the kernel's parameter order.
struct KernelStep {
  std::string name;  // kernel symbol in the variant's source (an identifier)
  LaunchConfig launch;
  std::vector<BufferRef> args;
  std::vector<size_t> writes;  // indices into args that the kernel writes; the others it only reads
};

enum class StepKind { cudnn_conv, kernel, cudnn_graph };

struct Step {
  std::variant<ConvStep, KernelStep, GraphStep> op;
  // false: a one-time parameter transform (filters to KRSC), run before the timed region.
  bool timed = true;

  [[nodiscard]] StepKind kind() const {
    return op.index() == 0 ? StepKind::cudnn_conv : op.index() == 1 ? StepKind::kernel : StepKind::cudnn_graph;
  }
  [[nodiscard]] const ConvStep& conv() const { return std::get<ConvStep>(op); }
  [[nodiscard]] const GraphStep& graph() const { return std::get<GraphStep>(op); }
  [[nodiscard]] const KernelStep& kernel() const { return std::get<KernelStep>(op); }
  [[nodiscard]] KernelStep& kernel() { return std::get<KernelStep>(op); }
  [[nodiscard]] ConvStep& conv() { return std::get<ConvStep>(op); }
  [[nodiscard]] GraphStep& graph() { return std::get<GraphStep>(op); }
  // Buffers the step reads and writes (a buffer may be in both: an in-place kernel).
  [[nodiscard]] std::vector<BufferRef> reads() const;
  [[nodiscard]] std::vector<BufferRef> writes() const;
};

struct Variant {
  Candidate candidate = Candidate::epilogue;
  std::string design;  // the design it instantiates, e.g. "epilogue.nchw": finalists are chosen per design
  std::string name;    // procedural and unique, e.g. "epilogue.nchw.b256.v4.e2"
  std::vector<std::pair<std::string, int64_t>> params;  // ordered; each is a #define in source
  std::string source;  // complete, readable CUDA source ("" when nothing to compile)
  std::vector<Buffer> buffers;
  std::vector<Step> plan;
  // The buffer holding the problem's output after the plan ran (for the floor: the conv output),
  // and its layout (nchw or nhwc; nhwc only when the spec allows out=nhwc|any).
  BufferRef output = 0;
  spec::Layout output_layout = spec::Layout::nchw;
  // Bytes the generated kernels must move (read + written) at minimum, for GB/s figures.
  double kernel_bytes = 0.0;
  // Compiled for the arch-specific target sm_XXa (sm_90a), not sm_XX: its kernels use wgmma,
  // which only the arch-specific target has. codegen/compile_target.hpp turns it into the
  // NVRTC arch; every compile of a variant goes through there.
  bool arch_specific = false;

  [[nodiscard]] Role role() const { return role_of(candidate); }
  [[nodiscard]] const Buffer& buffer(BufferRef r) const { return buffers.at(r); }
  [[nodiscard]] const Buffer& output_buffer() const { return buffers.at(output); }
  [[nodiscard]] std::optional<BufferRef> find_buffer(std::string_view buffer_name) const;
  // The index of the last step that writes `output`, if it also reads it (an in-place
  // epilogue): verification runs that step out of place too (tune/verifier.cpp).
  [[nodiscard]] std::optional<size_t> in_place_output_step() const;
};

}  // namespace fusetune::codegen
