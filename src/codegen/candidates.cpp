#include "codegen/candidates.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

namespace {

std::vector<Variant> unfused(const GenerateInput& in) { return generate_unfused(in.problem, in.shape, in.options); }
std::vector<Variant> cudnn(const GenerateInput& in) { return generate_cudnn(in.problem, in.shape, in.options); }
std::vector<Variant> epilogue(const GenerateInput& in) {
  return generate_epilogue(in.problem, in.shape, in.limits, in.options);
}
std::vector<Variant> fused_conv(const GenerateInput& in) {
  return generate_fused_conv(in.problem, in.shape, in.limits, in.options);
}
std::vector<Variant> cudnn_fused(const GenerateInput& in) {
  return generate_cudnn_fused(in.problem, in.shape, in.options);
}
std::vector<Variant> fused_gemm(const GenerateInput& in) {
  return generate_fused_gemm(in.problem, in.limits, in.options);
}

std::vector<Variant> cublaslt_fused(const GenerateInput& in) { return generate_cublaslt_fused(in.problem); }

// The registry. Colours: tests/report_screenshot.py counts bars by their fill, so none may equal
// a reference line's colour or a plot tint (report/palette.hpp); the registry test checks that.
constexpr std::array kTable = {
    CandidateInfo{.id = Candidate::unfused, .name = "unfused", .role = Role::baseline, .colour = "#9aa5b1",
                  .generate = unfused},
    CandidateInfo{.id = Candidate::cudnn, .name = "cudnn", .role = Role::floor, .colour = "#a1887f", .generate = cudnn},
    CandidateInfo{.id = Candidate::epilogue, .name = "epilogue", .role = Role::solution, .colour = "#3f7fbf",
                  .generate = epilogue},
    CandidateInfo{.id = Candidate::fused_conv, .name = "fused-conv", .role = Role::solution, .colour = "#e8873a",
                  .generate = fused_conv, .own_conv = true},
    CandidateInfo{.id = Candidate::cudnn_fused, .name = "cudnn-fused", .role = Role::solution, .colour = "#4c9f5a",
                  .generate = cudnn_fused, .engines_at_run_time = true, .runs_in_torch = false},
    CandidateInfo{.id = Candidate::fused_gemm, .name = "fused-gemm", .role = Role::solution, .colour = "#8e6bbf",
                  .generate = fused_gemm, .model_only = true},
    // cuBLASLt's own fused epilogue (bias, then relu or tanh-GELU) and the heuristic's other
    // algorithms, the stage kernels after it: the vendor's best for a GEMM problem. PyTorch cannot
    // choose cuBLASLt's algorithm or epilogue, so an export takes the best other candidate.
    CandidateInfo{.id = Candidate::cublaslt_fused, .name = "cublaslt-fused", .role = Role::solution,
                  .colour = "#2a9d8f", .generate = cublaslt_fused, .runs_in_torch = false, .model_only = true},
};

}  // namespace

std::span<const CandidateInfo> candidate_table() { return kTable; }

const CandidateInfo& candidate_info(Candidate c) {
  for (const CandidateInfo& row : kTable)
    if (row.id == c) return row;
  throw std::logic_error("candidate " + std::to_string(int(c)) + " has no row in the registry (codegen/candidates.cpp)");
}

const CandidateInfo* candidate_info(std::string_view name) {
  for (const CandidateInfo& row : kTable)
    if (row.name == name) return &row;
  return nullptr;
}

bool engines_at_run_time(const Variant& v) { return candidate_info(v.candidate).engines_at_run_time; }

bool runs_in_torch(std::string_view candidate_name) {
  const CandidateInfo* row = candidate_info(candidate_name);
  return row && row->runs_in_torch;
}

std::optional<Role> role_of(std::string_view candidate_name) {
  const CandidateInfo* row = candidate_info(candidate_name);
  return row ? std::optional<Role>(row->role) : std::nullopt;
}

}  // namespace fusetune::codegen
