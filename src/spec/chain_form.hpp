#pragma once
// After parsing: the simplifications every spelling of a problem shares (so they share one
// canonical text and key), then the chain form when the epilogue fits it. Internal to the
// parser.
#include "spec/problem.hpp"

namespace fusetune::spec::detail {

// 1. A name never used is dropped (`| as a |` alone changes nothing).
// 2. A reduction or logsumexp with keepdim over dims of size 1 is the identity on them: those
//    dims are dropped from it, and the stage when none is left -- except a first stage of
//    that kind that reduces channels: version 1 kept it (a K = 1 conv's `reduce_min`), and so
//    its canonical text and key.
// 3. An epilogue of elementwise ops with scalar or per-channel operands and at most one
//    reduction over channels with keepdim moves to pre / reduce / post, and `stages`,
//    `param_shapes` and `input_shapes` are left empty: version 1's form, which today's
//    designs take and whose canonical text is version 1's.
void simplify_and_lower(Problem& problem);

}  // namespace fusetune::spec::detail
