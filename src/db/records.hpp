#pragma once
// What the tuning database stores, as plain data: the environment a result was measured in,
// one result per (environment, problem, math, variant), and one winner per (environment,
// problem, math) with everything needed to export or re-run it without recompiling.
#include <cstdint>
#include <string>

namespace fusetune::db {

// The environment fingerprint. Results are comparable only within one fingerprint; when only
// the software versions (driver, NVRTC, cuDNN) differ, stored top-k variants are re-verified
// and re-timed instead of re-tuning everything (see hardware_fingerprint()).
struct Environment {
  std::string gpu_name;        // "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t mem_bytes = 0;
  std::string driver;          // CUDA version the driver supports, "13.0"
  std::string cuda_runtime;    // CUDA toolkit the binary was built with (NVRTC headers), "13.0"
  std::string nvrtc;           // "13.0"
  std::string cudnn;           // "9.19.0"
  std::string templates_hash;  // FNV-1a of the embedded kernel templates

  // Every field: a change in any of them makes stored times stale.
  [[nodiscard]] std::string fingerprint() const;
  // GPU and templates only: the same kernels on the same chip, maybe other library versions.
  [[nodiscard]] std::string hardware_fingerprint() const;
  [[nodiscard]] std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

struct ResultRecord {
  std::string problem_key;
  std::string canonical;      // the problem's canonical spec
  std::string math;           // tf32 | fp32
  std::string candidate;      // unfused | cudnn | epilogue | ...
  std::string variant_name;   // procedural, unique per problem
  std::string params_json;    // {"block":256,...}: part of the record's identity
  std::string status;         // protocol::status_name
  std::string reason;
  std::string log_excerpt;
  int registers = -1;
  int spills = 0;
  double time_min_ms = 0, time_median_ms = 0, time_max_ms = 0;
  int time_count = 0;
  double kernel_median_ms = 0;
  double gbps = 0;            // generated kernels' achieved bandwidth
  double pct_copy = 0;        // ... as % of the copy bandwidth measured in the same run
  double max_abs = 0, max_rel = 0, rel_l2 = 0;
  std::string time_round;     // "first pass" | "finalists" | "confirmation": where the times come from
  double worst_ratio = 0;     // worst element's error over its tolerance (<= 1 passed)
  double rel_l2_limit = 0;    // tf32: the rule's rel-L2 limit; 0 under fp32
  int gpu = -1;               // the GPU (ordinal) the times were measured on; -1: not timed or not known
  std::string created_at;     // UTC, ISO 8601; filled by the database when empty
  std::string env_fingerprint;  // filled by queries (Database::results, top_results); writes ignore it
};

struct WinnerRecord {
  Environment env;
  std::string problem_key;
  std::string canonical;
  std::string math;
  std::string candidate;
  std::string variant_name;
  std::string variant_json;     // codegen::to_json(variant): params, source, plan (launch shapes)
  std::string compile_options;  // NVRTC options, space-joined
  std::string cubin;            // bytes (may be empty for library-only winners)
  std::string ptx;
  double time_median_ms = 0;
  double time_spread = 0;       // (q3 - q1) / median of the winner's final timing
  double unfused_median_ms = 0;
  double cudnn_median_ms = 0;
  std::string cudnn_algo;       // e.g. "IMPLICIT_PRECOMP_GEMM (tf32)"
  std::string conv_choices;     // JSON: cuDNN's algorithm per conv layout as tuned (re-checks reuse it)
  bool shipped = false;         // loaded from tuning_db/ rather than measured here
  std::string created_at;

  [[nodiscard]] double speedup_vs_unfused() const {
    return time_median_ms > 0 ? unfused_median_ms / time_median_ms : 0.0;
  }
  [[nodiscard]] double speedup_vs_cudnn() const {
    return time_median_ms > 0 ? cudnn_median_ms / time_median_ms : 0.0;
  }
};

}  // namespace fusetune::db
