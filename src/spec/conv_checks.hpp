#pragma once
// Whole-operator checks the parser runs once every key is known: output extents, groups,
// tensor sizes. Internal to the parser.
#include <string_view>

#include "spec/problem.hpp"

namespace fusetune::spec::detail {

// Throws SpecError at `column` when a conv output would be empty (O, P or Q <= 0), groups
// do not divide both channel counts, a transposed conv's output padding is not below its
// stride or dilation (PyTorch's rule), or any tensor has more than kMaxTensorElems elements.
// Expects each field already in range (sizes and dilation/stride >= 1, pad >= 0, all <=
// kMaxTensorElems), and guarantees afterwards that Conv::o(), p(), q() and every *_elems()
// are exact (no overflow). `op` names the operator in messages.
void check_conv(const Conv& conv, int column, std::string_view op = "conv2d");

// The same for linear/matmul: every operand and the output within kMaxTensorElems.
void check_gemm(const Gemm& gemm, int column, std::string_view op);

}  // namespace fusetune::spec::detail
