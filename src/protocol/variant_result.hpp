#pragma once
// Everything learned about one variant: compile, verify, time. The same record goes to the
// results table, the JSON output and the database.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/variant.hpp"
#include "protocol/status.hpp"

namespace fusetune::protocol {

struct CompileFigures {
  int registers = -1;  // the most of any kernel of the source
  // Each kernel's own (from ptxas's report; empty where none was made): a plan's launch limits are
  // per kernel, and a fused-gemm kernel's 168 beside a stage kernel's 512 threads is no violation.
  std::map<std::string, int> kernel_registers;
  int spill_stores = 0;
  int spill_loads = 0;
  int stack_bytes = 0;
  int smem_bytes = 0;
  double compile_ms = 0.0;
  std::string options;  // space-joined NVRTC options
  std::string cubin;    // bytes
  std::string ptx;
  bool from_cache = false;  // taken from the compile cache (compile_cache.hpp): compile_ms is 0
};

// The worst draw's figures against the float64 reference (reference/gpu_reference.hpp).
struct ErrorFigures {
  double max_abs = 0.0;
  double max_rel = 0.0;
  double rel_l2 = 0.0;
  double rel_l2_limit = 0.0;  // tf32: the rule's limit on rel_l2; 0 under fp32
  double worst_ratio = 0.0;   // max over elements of |out - ref| / tolerance (<= 1 passes)
  uint64_t unchecked = 0;     // tf32: ill-conditioned elements (infinite bound)
};

// Which measurement a time comes from. The first pass times every variant on its own; the
// finalists are then re-timed interleaved with the baselines, and the winner, the runner-up
// and the baselines once more in a confirmation round, whose figures are the ones reported.
enum class TimeRound { first_pass, finalists, confirmation };
[[nodiscard]] std::string_view time_round_name(TimeRound r);  // "first pass" | "finalists" | "confirmation"

struct TimeFigures {
  double min_ms = 0.0;
  double median_ms = 0.0;
  double max_ms = 0.0;
  int count = 0;
  double spread = 0.0;            // (q3 - q1) / median
  double kernel_median_ms = 0.0;  // the generated kernel steps alone
  std::vector<double> step_median_ms;  // per plan step (0 for steps outside the timed region)
  int batch = 1;                  // plan runs per sample (short plans run back to back, see tune/timer.hpp)
  TimeRound round = TimeRound::first_pass;
  std::vector<double> samples;    // interleaved rounds: one per round, in round order (paired ratios)
};

struct VariantResult {
  codegen::Variant variant;
  Status status = Status::ok;
  std::string reason;       // one line, when status != ok
  std::string log_excerpt;  // compiler log (trimmed) when relevant
  CompileFigures compile;
  ErrorFigures error;
  TimeFigures time;
  bool verified = false;
  bool timed = false;
  int gpu = -1;  // the GPU (ordinal) whose figures `time` holds; -1 when not timed
};

// A failure that belongs to cuDNN, not to fusetune, among the results `all` of one run: a
// `cudnn-fused` engine configuration cuDNN refuses (every one under strict fp32), or one that
// computes wrong values (seen on cuDNN 9.19: `eng7` with knob 12 = 29) while another configuration
// of the same design verified. When every configuration of a design is wrong, the kernels
// fusetune generates around cuDNN's graph (transposes, mean's 1/K, the ops after the reduction)
// are suspect: not cuDNN's. Verification caught it either way; it never wins.
[[nodiscard]] bool cudnn_owned_failure(const std::vector<VariantResult>& all, const VariantResult& r);

}  // namespace fusetune::protocol
