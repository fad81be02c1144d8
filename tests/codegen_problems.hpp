#pragma once
// Problems for the codegen tests, built as structs (no dependency on the spec parser).
#include <optional>
#include <vector>

#include "spec/problem.hpp"
#include "spec_builders.hpp"

namespace fusetune::codegen::testing {

using spec_builders::op;
using spec_builders::param;
using spec_builders::scalar;

// kernelbench-31: conv 64->128 3x3 on (128, 64, 128, 128), bias; min(0.5) | add(param[k]) | mul(2).
inline spec::Problem preset31() {
  spec::Problem p;
  p.conv.n = 128; p.conv.c = 64; p.conv.h = 128; p.conv.w = 128;
  p.conv.k = 128; p.conv.r = 3; p.conv.s = 3;
  p.conv.bias = true;
  p.pre = {op(spec::OpKind::min, {scalar(0.5)}), op(spec::OpKind::add, {param(0)}), op(spec::OpKind::mul, {scalar(2.0)})};
  p.num_params = 1;
  return p;
}

// kernelbench-32: conv 64->128 3x3 on (64, 64, 256, 256), bias; mul(2) | reduce_min.
inline spec::Problem preset32() {
  spec::Problem p;
  p.conv.n = 64; p.conv.c = 64; p.conv.h = 256; p.conv.w = 256;
  p.conv.k = 128; p.conv.r = 3; p.conv.s = 3;
  p.conv.bias = true;
  p.pre = {op(spec::OpKind::mul, {scalar(2.0)})};
  p.reduce = spec::ReduceKind::min;
  return p;
}

// An awkward conv: N=1, C=1, K=3, H=W=7, 3x3, stride 2, pad 1, dilation 2 -> P=Q=3
// (P*Q = 9: no 2- or 4-wide vectors along pixels; K = 3: none along channels).
inline spec::Conv awkward_conv() {
  spec::Conv c;
  c.n = 1; c.c = 1; c.h = 7; c.w = 7;
  c.k = 3; c.r = 3; c.s = 3;
  c.stride_h = c.stride_w = 2;
  c.pad_h = c.pad_w = 1;
  c.dil_h = c.dil_w = 2;
  c.bias = true;
  return c;
}

// Awkward-shape problems that together use every op kind (scalar and per-channel operands)
// and every reduction, in several layouts.
inline std::vector<spec::Problem> awkward_problems() {
  using K = spec::OpKind;
  std::vector<spec::Problem> out;
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.pre = {op(K::add, {param(0)}), op(K::sub, {scalar(0.25)}), op(K::rsub, {param(1)}), op(K::mul, {scalar(-1.5)}),
             op(K::div, {scalar(3.0)}), op(K::rdiv, {scalar(7.0)}), op(K::min, {param(0)}), op(K::max, {scalar(-0.5)})};
    p.num_params = 2;
    out.push_back(p);
  }
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.conv.bias = false;
    p.conv.out = spec::Layout::any;
    p.pre = {op(K::clamp, {scalar(-1.0), scalar(1.0)}), op(K::relu), op(K::leaky_relu, {scalar(0.1)}), op(K::gelu),
             op(K::gelu_tanh), op(K::tanh), op(K::sigmoid), op(K::silu)};
    out.push_back(p);
  }
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.conv.in = spec::Layout::nhwc;
    p.pre = {op(K::mish), op(K::hardswish), op(K::hardsigmoid), op(K::hardtanh, {scalar(-2.0), scalar(2.0)}),
             op(K::softplus, {scalar(1.0), scalar(20.0)}), op(K::exp)};
    p.reduce = spec::ReduceKind::min;
    p.post = {op(K::log)};
    out.push_back(p);
  }
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.conv.out = spec::Layout::nhwc;
    p.pre = {op(K::abs), op(K::neg), op(K::square), op(K::sqrt), op(K::mul, {param(0)})};
    p.num_params = 1;
    out.push_back(p);
  }
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.pre = {op(K::add, {param(0)})};
    p.num_params = 1;
    p.reduce = spec::ReduceKind::max;
    p.post = {op(K::mul, {scalar(0.5)})};
    out.push_back(p);
  }
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.reduce = spec::ReduceKind::sum;
    p.post = {op(K::abs)};
    out.push_back(p);
  }
  {
    spec::Problem p;
    p.conv = awkward_conv();
    p.conv.k = 5;
    p.conv.bias = false;
    p.reduce = spec::ReduceKind::mean;
    out.push_back(p);
  }
  return out;
}

}  // namespace fusetune::codegen::testing
