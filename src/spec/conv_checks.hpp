#pragma once
// Whole-conv checks the parser runs once every key is known: output extents and
// tensor sizes. Internal to the parser.
#include "spec/problem.hpp"

namespace fusetune::spec::detail {

// Throws SpecError at `column` when the conv output would be empty (P or Q <= 0) or
// any tensor has more than kMaxTensorElems elements. Expects each field already in
// range (sizes and dilation/stride >= 1, pad >= 0, all <= kMaxTensorElems), and
// guarantees afterwards that Conv::p(), q() and every *_elems() are exact (no overflow).
void check_conv(const Conv& conv, int column);

}  // namespace fusetune::spec::detail
