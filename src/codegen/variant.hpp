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
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/gemm_activation.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

// Which candidate made a variant (docs/architecture.md, "Candidates"). Everything else about a candidate (its
// name, role, generator, colour, export rules) is its row in the registry, codegen/candidates.hpp.
// kCandidateCount follows the last value: the registry test checks that each value has a row.
enum class Candidate { unfused, cudnn, epilogue, fused_conv, cudnn_fused, fused_gemm, cublaslt_fused };
inline constexpr int kCandidateCount = int(Candidate::cublaslt_fused) + 1;

// The part a candidate plays in a tune:
//   baseline  what PyTorch eager runs; every speedup is measured against it
//   floor     the conv alone: not a full solution, no "conv, then epilogue" design beats it;
//             verified against the conv's own reference, never a winner
//   solution  a generated design competing to win
enum class Role { baseline, floor, solution };

// "unfused" | "cudnn" | "epilogue" | "fused-conv" | "cudnn-fused" | "fused-gemm" | "cublaslt-fused"
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
//
// Version-2 problems (not conv2d chain form) bind their inputs one tensor per buffer, each dense
// row-major in the shape PyTorch holds it (TensorLayout::row_major); `Buffer::index` says which
// parameter or extra input. The chain form's `filters` and `channels` stay what they were.
enum class BufferKind {
  input,     // the problem's input x, in the problem's input layout (v2: the main op's A / x)
  filters,   // the conv filters as PyTorch holds them, (K, C, R, S)
  channels,  // per-channel vectors: [conv bias][param 0][param 1]..., K floats each
  scratch,   // made by the plan
  weights,   // v2: the main op's weight as PyTorch holds it (conv (K, C/g, ...), transposed
             // (C, K/g, ...), linear (N, K), matmul's B)
  bias,      // v2: the main op's bias, K (conv) or N (linear) floats
  param,     // v2: parameter `index`, of Problem::param_shapes()[index]
  extra,     // v2: extra input tensor `index` (`input1` is 0), of Problem::input_shapes[index]
};

[[nodiscard]] std::string_view buffer_kind_name(BufferKind k);
[[nodiscard]] std::optional<BufferKind> buffer_kind_from_name(std::string_view name);

// How a buffer's floats are ordered; `dims` lists its extents in that order.
// row_major: a dense tensor of any rank (v2 buffers), its dims outermost first.
enum class TensorLayout { nchw, nhwc, kcrs, krsc, vector, row_major };

[[nodiscard]] std::string_view tensor_layout_name(TensorLayout l);  // "NCHW", ..., "vector", "row-major"
[[nodiscard]] std::optional<TensorLayout> tensor_layout_from_name(std::string_view name);

struct Buffer {
  std::string name;  // an identifier; plans, exports and messages use it
  BufferKind kind = BufferKind::scratch;
  TensorLayout layout = TensorLayout::vector;
  std::vector<std::pair<std::string, int64_t>> dims;  // named extents in layout order
  std::string what;  // one line for people: "the conv output", ...
  int index = -1;    // param / extra: which parameter or extra input (else -1)

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

// Version 2: out = the problem's GEMM through cuBLASLt (gpu::GemmPlan(handle, gemm, linear,
// ...)): out (batch, M, N) row-major = op(a) op(b) (+ bias[n]). `gemm` is the problem's, copied
// so the step says what it runs; the checker holds it equal to the problem's.
struct GemmStep {
  spec::Gemm gemm;
  bool linear = false;  // nn.Linear: b is W (N, K), used transposed (gpu::gemm_b_transposed)
  BufferRef a = 0;      // the input (M, K) / (K, M) with trans_a, per batch
  BufferRef b = 0;      // the weights
  BufferRef out = 0;
  std::optional<BufferRef> bias;  // N floats, cuBLASLt's EPILOGUE_BIAS
  // cublaslt-fused: the problem's first epilogue op, applied by cuBLASLt after the bias.
  GemmActivation activation = GemmActivation::none;
  // Which of cuBLASLt's heuristic's algorithms runs, by rank (0: its first choice, what PyTorch's
  // cuBLAS call would pick); the label the worker reports names the algorithm itself.
  int algo = 0;
  static constexpr int kMaxAlgo = 15;
};

// Version 2: out = any conv kind of the problem (conv2d, conv3d, conv_transpose2d/3d) through a
// cuDNN graph (worker/conv_nd_graph.hpp; geometry worker::conv_nd_geometry(main, problem.conv,
// layout)). Tensors are PyTorch's, dense: in (N, C, [D,] H, W), filters as `weights` holds them,
// out (N, K, [O,] P, Q); the conv's geometry is the problem's, as for ConvStep.
struct ConvNdStep {
  spec::MainKind main = spec::MainKind::conv3d;
  spec::Layout layout = spec::Layout::nchw;  // nchw: channels-first (the only one generated today)
  BufferRef in = 0;
  BufferRef filters = 0;
  BufferRef out = 0;
  std::optional<BufferRef> bias;  // K floats
};

// A kernel argument: a buffer's pointer, a null pointer (an operand slot or affine parameter the
// kernel does not use), or a struct passed by value (the per-stage kernels' geometry: its bytes
// as the host mirror in codegen/stage_source.hpp lays them out, `type` its device struct name).
struct NullArg {
  bool operator==(const NullArg&) const = default;
};
struct ValueArg {
  std::string type;  // e.g. "ft_st_ew_geom"
  std::vector<uint8_t> bytes;
  bool operator==(const ValueArg&) const = default;
};
using KernelArg = std::variant<BufferRef, NullArg, ValueArg>;

// The buffer an argument points to, or nullopt (null pointer, by-value struct).
[[nodiscard]] inline std::optional<BufferRef> arg_buffer(const KernelArg& a) {
  if (const BufferRef* r = std::get_if<BufferRef>(&a)) return *r;
  return std::nullopt;
}

// name<<<launch>>>(args...): the arguments in the kernel's parameter order.
struct KernelStep {
  std::string name;  // kernel symbol in the variant's source (an identifier)
  LaunchConfig launch;
  std::vector<KernelArg> args;
  std::vector<size_t> writes;  // indices into args that the kernel writes (buffers); the others it only reads
  // args[i] as a buffer; throws std::bad_variant_access for a null or by-value argument.
  [[nodiscard]] BufferRef buffer_arg(size_t i) const { return std::get<BufferRef>(args.at(i)); }
  // Whether every argument is a buffer (every kernel of the conv2d chain designs).
  [[nodiscard]] bool buffers_only() const {
    for (const auto& a : args)
      if (!arg_buffer(a)) return false;
    return true;
  }
};

enum class StepKind { cudnn_conv, kernel, cudnn_graph, gemm, conv_nd };

struct Step {
  std::variant<ConvStep, KernelStep, GraphStep, GemmStep, ConvNdStep> op;  // in StepKind's order
  // false: a one-time parameter transform (filters to KRSC), run before the timed region.
  bool timed = true;

  [[nodiscard]] StepKind kind() const { return StepKind(op.index()); }
  [[nodiscard]] const ConvStep& conv() const { return std::get<ConvStep>(op); }
  [[nodiscard]] const GraphStep& graph() const { return std::get<GraphStep>(op); }
  [[nodiscard]] const KernelStep& kernel() const { return std::get<KernelStep>(op); }
  [[nodiscard]] KernelStep& kernel() { return std::get<KernelStep>(op); }
  [[nodiscard]] ConvStep& conv() { return std::get<ConvStep>(op); }
  [[nodiscard]] GraphStep& graph() { return std::get<GraphStep>(op); }
  [[nodiscard]] const GemmStep& gemm() const { return std::get<GemmStep>(op); }
  [[nodiscard]] const ConvNdStep& conv_nd() const { return std::get<ConvNdStep>(op); }
  // Buffers the step reads and writes (a buffer may be in both: an in-place kernel).
  [[nodiscard]] std::vector<BufferRef> reads() const;
  [[nodiscard]] std::vector<BufferRef> writes() const;
};

// kind() is the alternative's index: the two orders must agree.
template <StepKind K, typename T>
inline constexpr bool kStepAt = std::is_same_v<std::variant_alternative_t<size_t(K), decltype(Step::op)>, T>;
static_assert(kStepAt<StepKind::cudnn_conv, ConvStep> && kStepAt<StepKind::kernel, KernelStep> &&
              kStepAt<StepKind::cudnn_graph, GraphStep> && kStepAt<StepKind::gemm, GemmStep> &&
              kStepAt<StepKind::conv_nd, ConvNdStep>);

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
  // The buffer a kernel argument points to; throws std::bad_variant_access for a null or
  // by-value argument.
  [[nodiscard]] const Buffer& buffer(const KernelArg& a) const { return buffers.at(std::get<BufferRef>(a)); }
  [[nodiscard]] const Buffer& output_buffer() const { return buffers.at(output); }
  [[nodiscard]] std::optional<BufferRef> find_buffer(std::string_view buffer_name) const;
  // The index of the last step that writes `output`, if it also reads it (an in-place
  // epilogue): verification runs that step out of place too (tune/verifier.cpp).
  [[nodiscard]] std::optional<size_t> in_place_output_step() const;
  // Whether the plan uses a version-2 part (a GEMM or N-d conv step, a null or by-value kernel
  // argument, a v2 buffer kind): what today's exports and worker cannot run yet.
  [[nodiscard]] bool model_plan() const;
};

}  // namespace fusetune::codegen
