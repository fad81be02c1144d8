#pragma once
// Reading typed plans in tests by buffer and kernel names, as a person reads them.
#include <string>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::codegen::testing {

inline std::string buf(const Variant& v, BufferRef r) { return v.buffer(r).name; }

// A kernel step's name ("" for a conv step).
inline std::string kernel_name(const Step& s) { return s.kind() == StepKind::kernel ? s.kernel().name : ""; }

// A kernel step's arguments by name.
inline std::vector<std::string> arg_names(const Variant& v, const Step& s) {
  std::vector<std::string> out;
  for (BufferRef r : s.kernel().args) out.push_back(v.buffer(r).name);
  return out;
}

inline std::string output_name(const Variant& v) { return v.output_buffer().name; }

}  // namespace fusetune::codegen::testing
