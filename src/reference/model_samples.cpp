#include "reference/model_samples.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

bool has_dim0(const std::vector<int>& dims) { return std::find(dims.begin(), dims.end(), 0) != dims.end(); }

// Whether extra input `i` carries the batch as its dim 0 (aligned with the value's dim 0).
bool batched_input(const spec::Problem& p, size_t i, size_t value_rank) {
  const spec::Shape& s = p.input_shapes.at(i);
  return s.size() == value_rank && !s.empty() && s[0] != 1;
}

}  // namespace

int64_t largest_output(const spec::Problem& p) { return std::max(p.main_out_elems(), spec::elems(spec::out_shape(p))); }

int64_t sample_batch(const spec::Problem& p) {
  if (p.is_conv()) return p.conv.n;
  return p.gemm.batch > 1 ? p.gemm.batch : p.gemm.m;
}

std::optional<std::string> why_images_not_independent(const spec::Problem& p) {
  if (p.main == spec::MainKind::matmul && p.gemm.batch == 1 && p.gemm.trans_a)
    return "a transposed single-batch matmul's rows are not contiguous in its input";
  if (p.is_conv2d_chain()) return "a chain-form conv2d, sliced by image_slices instead";
  // The chain form of the other convs (stages empty: ops, a reduction over channels, ops with
  // per-channel parameters) keeps images apart: the loop below has nothing to refuse.
  std::vector<spec::Shape> value_shapes;
  const std::vector<spec::Shape> shapes = spec::epilogue_shapes(p, &value_shapes);
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const spec::Stage& st = p.stages[i];
    const size_t rank = shapes[i].size();
    const std::string where = fmt::format("stage {}", i + 1);
    switch (st.kind) {
      case spec::StageKind::norm:
        if (st.norm == spec::NormKind::batch) return where + ": batch norm's statistics are over the whole batch";
        if (st.norm == spec::NormKind::layer && size_t(st.norm_dims) >= rank)
          return where + ": the layer norm's dims include the batch";
        break;
      case spec::StageKind::reduce:
      case spec::StageKind::logsumexp:
      case spec::StageKind::softmax:
      case spec::StageKind::log_softmax:
        if (has_dim0(st.dims)) return where + ": it reduces over the batch dim";
        break;
      case spec::StageKind::pool:
        if (size_t(st.pool_dims) >= rank) return where + ": the pool's window covers the batch dim";
        break;
      case spec::StageKind::op:
        for (const spec::Operand& a : st.op.args) {
          if (a.param_index >= 0 && !p.param_shapes.empty()) {
            const spec::Shape& s = p.param_shapes.at(size_t(a.param_index));
            if (s.size() == rank && !s.empty() && s[0] != 1) return where + ": a parameter differs per image";
          }
        }
        break;
      case spec::StageKind::name: break;
    }
  }
  if (shapes.back().empty() || shapes.back()[0] != sample_batch(p)) return "the output's dim 0 is not the batch";
  return std::nullopt;
}

int64_t least_sample(const spec::Problem& p) { return !p.is_conv() && p.gemm.batch > 1 ? 2 : 1; }

spec::Problem sample_problem(const spec::Problem& p, int64_t images) {
  if (images < least_sample(p) || images > sample_batch(p))
    throw Error(ExitCode::failure, fmt::format("sample_problem: {} images of {}", images, sample_batch(p)));
  const size_t rank = p.main_shape().size();
  spec::Problem s = p;
  if (p.is_conv()) {
    s.conv.n = images;
  } else if (p.gemm.batch > 1) {
    s.gemm.batch = images;
  } else {
    s.gemm.m = images;
  }
  for (size_t i = 0; i < s.input_shapes.size(); ++i)
    if (batched_input(p, i, rank)) s.input_shapes[i][0] = images;
  return s;
}

SampleOffsets sample_offsets(const spec::Problem& p, const ImageSlice& sl) {
  const ModelSizes sizes = model_sizes(p);
  const int64_t n = sample_batch(p);
  // A matmul's batch slices both operands; a linear's rows only its input.
  const bool batched_weight = !p.is_conv() && p.gemm.batch > 1;
  return {sizes.input / n * sl.first, batched_weight ? sizes.weight / n * sl.first : 0};
}

ModelData sample_data(const spec::Problem& p, const ModelData& data, const ImageSlice& sl) {
  check_model_data(p, data);
  const int64_t n = sample_batch(p);
  if (sl.first < 0 || sl.images < 1 || sl.first + sl.images > n)
    throw Error(ExitCode::failure, fmt::format("sample_data: images [{}, {}) of {}", sl.first, sl.first + sl.images, n));
  const auto rows = [&](const std::vector<float>& t) {
    const size_t per = t.size() / size_t(n);
    return std::vector<float>(t.begin() + std::ptrdiff_t(per * size_t(sl.first)),
                              t.begin() + std::ptrdiff_t(per * size_t(sl.first + sl.images)));
  };
  ModelData s;
  s.input = rows(data.input);
  s.weight = !p.is_conv() && p.gemm.batch > 1 ? rows(data.weight) : data.weight;
  s.bias = data.bias;
  s.params = data.params;
  const size_t rank = p.main_shape().size();
  for (size_t i = 0; i < data.inputs.size(); ++i)
    s.inputs.push_back(batched_input(p, i, rank) ? rows(data.inputs[i]) : data.inputs[i]);
  return s;
}

ImageSlice sampled_block(int64_t n, int64_t images, int64_t out_per_image, int d) {
  if (images < 1 || images > n) throw Error(ExitCode::failure, fmt::format("sampled_block: {} images of {}", images, n));
  const int64_t last = n - images;  // the last block's first image
  int64_t first = 0;
  if (d == 1) {
    first = last;
  } else if (d >= 2) {
    // Draw 2: the block holding element 2^31 (an index that wraps in 32 bits goes wrong from
    // there), else the middle; later draws step through the batch.
    const int64_t boundary = (int64_t(1) << 31) / std::max<int64_t>(1, out_per_image);
    const int64_t centre = d == 2 && boundary < n ? boundary : n * (2 * (d - 2) + 1) / (2 * (d - 1));
    first = std::clamp<int64_t>(centre - images / 2, 0, last);
  }
  return {first, images};
}

int64_t sample_images(const spec::Problem& p, int64_t max_values) {
  const int64_t n = sample_batch(p);
  const int64_t per_image = std::max<int64_t>(1, largest_output(p) / n);
  return std::clamp<int64_t>(max_values / per_image, least_sample(p), n);
}

}  // namespace fusetune::reference
