#pragma once
// The shapes of a general-form epilogue: what each stage does to the shape of the value it
// reads (PyTorch's rules: broadcasting, keepdim, pooling's floor), and the shape of each
// parameter. One place, read by the parser (to check dims and sizes as it goes), the
// references and codegen.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::spec {

using Shape = std::vector<int64_t>;

// A stage that cannot apply to the value's shape; what() says why, without position (the
// parser adds the column).
class ShapeFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// PyTorch's broadcast of two shapes (aligned at the last dim), or ShapeFault.
Shape broadcast(const Shape& a, const Shape& b);

// The shape after `stage`, given the shape before it; named values' and inputs' shapes come
// from `problem` (value_shapes: the shape of each named value as defined). Throws ShapeFault.
Shape stage_shape(const Problem& problem, const Stage& stage, const Shape& in, const std::vector<Shape>& value_shapes);

// The shape of an operand of a binary op applied to a value of shape `in`: {} for a scalar.
Shape operand_shape(const Problem& problem, const Operand& operand, const std::vector<Shape>& value_shapes);

// Shapes through the epilogue: [0] the main operator's output, [i + 1] after stage i
// (general form) or, for the chain form, [1] the output. value_shapes (optional) receives
// each named value's shape.
std::vector<Shape> epilogue_shapes(const Problem& problem, std::vector<Shape>* value_shapes = nullptr);

// The output's shape and element count (either form).
Shape out_shape(const Problem& problem);
int64_t elems(const Shape& shape);

// "(16, 64, 32, 32)"
std::string shape_text(const Shape& shape);

}  // namespace fusetune::spec
