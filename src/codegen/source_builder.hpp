#pragma once
// Assembles one complete, readable CUDA source (STYLE.md 1): a header comment naming the
// problem, variant and parameters; `#define FT_GENERATED 1`; the parameters and shape as
// #defines; then sections (ft_common.cuh, rendered op chains, kernel templates, instantiation
// lines) in the order added. Templates are inlined verbatim from the embedded copies, so
// NVRTC needs no include path and the source compiles on its own with nvcc too.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fusetune::codegen {

class SourceBuilder {
 public:
  SourceBuilder(std::string problem_text, std::string variant_name, std::string candidate);

  // #define FT_<NAME> value in the parameter block; also listed in the header comment.
  void param(const std::string& name, int64_t value);
  // A block of #define lines (the shape) placed after the parameters.
  void defines(const std::string& title, const std::string& text);
  // Generated code (op chains, instantiations) under a "// ---- title" banner.
  void code(const std::string& title, const std::string& text);
  // An embedded template file, verbatim; each file is inlined at most once.
  void template_file(const std::string& file_name);
  // Kernels the source defines, for the header comment.
  void kernel(const std::string& name);

  [[nodiscard]] std::string str() const;

 private:
  std::string problem_text_;
  std::string variant_name_;
  std::string candidate_;
  std::vector<std::pair<std::string, int64_t>> params_;
  std::vector<std::string> kernels_;
  std::vector<std::string> define_blocks_;
  std::vector<std::string> sections_;
  std::vector<std::string> files_;
};

}  // namespace fusetune::codegen
