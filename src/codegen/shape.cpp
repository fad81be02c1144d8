#include "codegen/shape.hpp"

#include <algorithm>
#include <initializer_list>

namespace fusetune::codegen {

namespace {

// Kernels compute flat offsets up to one launch's worth of threads past the last element
// before masking them off, so 32-bit indices need this much headroom below 2^31.
constexpr int64_t kIndexSlack = int64_t(1) << 22;

// "#define NAME value  // what\n"
void define_line(std::string& out, const char* name, int64_t value, const char* what) {
  out += "#define ";
  out += name;
  out += ' ';
  out += std::to_string(value);
  out += "  // ";
  out += what;
  out += '\n';
}

}  // namespace

Shape shape_of(const spec::Problem& problem) {
  const spec::Conv& cv = problem.conv;
  Shape s;
  s.n = cv.n; s.c = cv.c; s.h = cv.h; s.w = cv.w;
  s.k = cv.k; s.r = cv.r; s.s = cv.s;
  s.p = cv.p(); s.q = cv.q();
  s.pq = s.p * s.q;
  s.hw = s.h * s.w;
  s.rs = s.r * s.s;
  s.conv_bias = cv.bias;
  s.num_params = problem.num_params;
  const int64_t largest = std::max({s.input_elems(), s.weight_elems(), s.conv_out_elems(), s.chan_floats()});
  s.index64 = largest + kIndexSlack >= (int64_t(1) << 31);
  return s;
}

std::string shape_defines(const Shape& s) {
  std::string out;
  const auto def = [&](const char* name, int64_t value, const char* what) { define_line(out, name, value, what); };
  def("FT_N", s.n, "batch");
  def("FT_C", s.c, "input channels");
  def("FT_H", s.h, "input height");
  def("FT_W", s.w, "input width");
  def("FT_K", s.k, "output channels");
  def("FT_R", s.r, "filter height");
  def("FT_S", s.s, "filter width");
  def("FT_P", s.p, "output height");
  def("FT_Q", s.q, "output width");
  def("FT_PQ", s.pq, "output pixels per image");
  def("FT_HW", s.hw, "input pixels per image");
  def("FT_RS", s.rs, "filter taps");
  def("FT_HAS_BIAS", s.conv_bias ? 1 : 0, "the epilogue adds the conv bias chan[0 .. K)");
  def("FT_NUM_PARAMS", s.num_params, "per-channel parameter vectors after the bias in chan");
  def("FT_CHAN_FLOATS", s.chan_floats(), "floats in chan");
  def("FT_INDEX_64", s.index64 ? 1 : 0, "64-bit flat indices");
  return out;
}

std::string conv_geometry_defines(const spec::Problem& problem) {
  const spec::Conv& c = problem.conv;
  std::string out;
  define_line(out, "FT_STRIDE_H", c.stride_h, "vertical stride");
  define_line(out, "FT_STRIDE_W", c.stride_w, "horizontal stride");
  define_line(out, "FT_PAD_H", c.pad_h, "zero padding above and below");
  define_line(out, "FT_PAD_W", c.pad_w, "zero padding left and right");
  define_line(out, "FT_DIL_H", c.dil_h, "vertical dilation");
  define_line(out, "FT_DIL_W", c.dil_w, "horizontal dilation");
  return out;
}

}  // namespace fusetune::codegen
