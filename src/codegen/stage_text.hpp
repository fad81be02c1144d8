#pragma once
// The text of the stage kernels' sources: the module (element type, stage_kernels.cu, the
// geometry structs' size checks, each kernel), an op rendered in either precision, a comment for
// it, and the rows kernels' modes. Used only by codegen/stage_source.cpp.
#include <string>
#include <vector>

#include "codegen/stage_source.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen::stage_detail {

[[nodiscard]] const char* precision_suffix(StagePrecision p);
[[nodiscard]] std::string hex16(uint64_t v);
// A complete source: the element type's math, stage_kernels.cu, the size checks of the
// geometry structs, then each kernel's code (its functor, its instantiation line), in order.
[[nodiscard]] std::string module_source(StagePrecision precision, const std::string& title,
                                        const std::vector<const StageKernel*>& kernels);
// "add(value 0)": the op for a comment, without any spec text but numbers (as fp32 literals).
[[nodiscard]] std::string op_comment(const spec::Op& op);
// The op as an expression of v, its tensor operands read from chan[slot] (slot = position).
[[nodiscard]] std::string op_expression(const spec::Op& op, StagePrecision precision);

// The rows kernel's mode: the FT_ST_MODE_* macro and the kernel name's part.
struct RowsMode {
  const char* macro;
  const char* name;
  bool splits = false;  // has the split form (partials per chunk, then a combine)
  bool stats = false;   // norm statistics: 2 outputs per row, 3 partials per chunk
};
[[nodiscard]] RowsMode rows_mode(const spec::Stage& st);

}  // namespace fusetune::codegen::stage_detail
