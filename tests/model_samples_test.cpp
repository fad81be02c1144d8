// GPU-free: verification of a version-2 problem on a sample of its images
// (reference/model_samples.hpp). What a user relies on: the float64 reference of a block of
// images, made from the sampled problem and the sampled draw, is exactly those images' rows of
// the whole problem's reference (values, bounds, variances) for every construct that keeps images
// apart -- so checking a block checks those images as the whole reference would; the constructs
// that mix images (batch statistics, reductions, softmax or a layer norm over the batch) are
// refused, with the stage named; each draw's block is inside the batch, the first draw's first,
// the second's last, the third's over output element 2^31 when the output passes it. An "image" is
// a conv's image, a linear's row, a batched matmul's batch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "reference/model_bounds.hpp"
#include "reference/model_data.hpp"
#include "reference/model_samples.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

void expect_rows_equal(const std::string& text, const ImageSlice& sl) {
  SCOPED_TRACE(text + " images " + std::to_string(sl.first) + "+" + std::to_string(sl.images));
  const spec::Problem p = spec::parse(text);
  ASSERT_FALSE(why_images_not_independent(p).has_value()) << *why_images_not_independent(p);
  const ModelData data = draw_model_data(p, 5);
  const BoundedReference whole = model_reference_with_bounds(p, data);
  const spec::Problem sp = sample_problem(p, sl.images);
  const BoundedReference part = model_reference_with_bounds(sp, sample_data(p, data, sl));
  const size_t per = whole.values.size() / size_t(sample_batch(p));
  ASSERT_EQ(part.values.size(), per * size_t(sl.images));
  for (size_t i = 0; i < part.values.size(); ++i) {
    const size_t j = per * size_t(sl.first) + i;
    ASSERT_EQ(part.values[i], whole.values[j]) << "element " << j;
    ASSERT_EQ(part.bound[i], whole.bound[j]) << "element " << j;
    ASSERT_EQ(part.var[i], whole.var[j]) << "element " << j;
  }
}

TEST(ModelSamples, ABlocksReferenceIsThoseImagesRowsOfTheWhole) {
  for (const char* text : {
           "conv2d(n=5,c=3,h=9,w=9,k=8,r=3,pad=1) | group_norm(4) | as a | sigmoid | mul(a) | max_pool2d(2)",
           "conv_transpose2d(n=4,c=4,h=5,w=6,k=6,r=3,stride=2,pad=1,out_pad=1) | reduce_mean(spatial) | "
           "add(param[k]) | logsumexp(1) | mul(10)",
           "conv3d(n=4,c=2,d=4,h=5,w=5,k=4,r=3,pad=1) | add(input1) | softmax(1) | avg_pool3d(2)",
           "conv2d(n=3,c=4,h=8,w=8,k=6,r=3) | instance_norm | layer_norm(2) | reduce_sum(1,2,3,keepdim=false)",
           "conv_transpose3d(n=3,c=2,d=3,h=3,w=3,k=4,r=3,stride=2,pad=1,out_pad=1) | max_pool3d(2) | "
           "adaptive_avg_pool3d(1) | clamp(0,1)",
           // GEMMs: a linear's rows; a batched matmul's batch (both operands sliced)
           "linear(m=6,k=9,n=10,bias=true) | add(input1) | softmax(1) | mul(2)",
           "matmul(batch=4,m=5,k=7,n=6) | layer_norm(1) | reduce_max(2)",
           "matmul(batch=3,m=5,k=7,n=6,trans_a=true,trans_b=true) | gelu",
       }) {
    const spec::Problem p = spec::parse(text);
    const int64_t n = sample_batch(p), least = least_sample(p);
    expect_rows_equal(text, {0, least});
    expect_rows_equal(text, {n - 2, 2});
    expect_rows_equal(text, {1, n - 1});
  }
}

TEST(ModelSamples, AnExtraInputOfTheOutputsShapeIsSlicedWithTheBatch) {
  const spec::Problem p = spec::parse("conv2d(n=4,c=2,h=6,w=6,k=3,r=3) | add(input1)");
  const spec::Problem s = sample_problem(p, 2);
  EXPECT_EQ(s.conv.n, 2);
  ASSERT_EQ(s.input_shapes.size(), 1u);
  EXPECT_EQ(s.input_shapes[0], (spec::Shape{2, 3, 4, 4}));
  EXPECT_EQ(spec::out_shape(s), (spec::Shape{2, 3, 4, 4}));
}

TEST(ModelSamples, WhatMixesImagesIsRefusedWithItsStage) {
  const auto why = [](const char* text) { return why_images_not_independent(spec::parse(text)).value_or(""); };
  EXPECT_NE(why("conv2d(n=4,c=2,h=6,w=6,k=3,r=3) | batch_norm | relu").find("stage 1: batch norm"), std::string::npos);
  EXPECT_NE(why("conv2d(n=4,c=2,h=6,w=6,k=3,r=3) | relu | reduce_sum(all,keepdim=false)").find("stage 2"),
            std::string::npos);
  EXPECT_NE(why("conv2d(n=4,c=2,h=6,w=6,k=3,r=3) | layer_norm(4)").find("layer norm"), std::string::npos);
  EXPECT_NE(why("conv2d(n=4,c=2,h=6,w=6,k=3,r=3) | softmax(0)").find("batch dim"), std::string::npos);
  EXPECT_NE(why("linear(m=4,k=8,n=2) | softmax(0)").find("stage 1"), std::string::npos);
  EXPECT_NE(why("matmul(m=4,k=8,n=2,trans_a=true) | relu").find("not contiguous"), std::string::npos);
  EXPECT_NE(why("conv2d(n=4,c=2,h=6,w=6,k=3,r=3) | relu").find("chain-form"), std::string::npos);
}

TEST(ModelSamples, EachDrawsBlockIsInsideTheBatch) {
  // draw 0 the first images, draw 1 the last, draw 2 over element 2^31 where the output passes it
  EXPECT_EQ(sampled_block(128, 8, 4 << 20, 0), (ImageSlice{0, 8}));
  EXPECT_EQ(sampled_block(128, 8, 4 << 20, 1), (ImageSlice{120, 8}));
  const ImageSlice b = sampled_block(1024, 8, 4 << 20, 2);  // element 2^31 is in image 512
  EXPECT_LE(b.first, 512);
  EXPECT_GT(b.first + b.images, 512);
  EXPECT_EQ(sampled_block(128, 8, 1 << 10, 2), (ImageSlice{60, 8}));  // small output: the middle
  for (int d = 0; d < 8; ++d) {
    const ImageSlice s = sampled_block(10, 10, 100, d);
    EXPECT_EQ(s, (ImageSlice{0, 10})) << d;  // the whole batch when it fits
    const ImageSlice t = sampled_block(10, 3, 100, d);
    EXPECT_GE(t.first, 0);
    EXPECT_LE(t.first + 3, 10);
  }
}

// A batched matmul keeps at least two of its batch: with one, its output would lose the batch dim
// and every stage's dims would mean another dim.
TEST(ModelSamples, ABatchedMatmulsSampleKeepsTwoOfItsBatch) {
  const spec::Problem mm = spec::parse("matmul(batch=64,m=512,k=64,n=4096) | relu");
  EXPECT_EQ(least_sample(mm), 2);
  EXPECT_EQ(sample_images(mm, 1), 2);
  EXPECT_THROW((void)sample_problem(mm, 1), Error);
  EXPECT_EQ(sample_problem(mm, 2).main_shape(), (spec::Shape{2, 512, 4096}));
  EXPECT_EQ(least_sample(spec::parse("linear(m=64,k=8,n=2) | relu")), 1);
}

TEST(ModelSamples, TheBlockFitsTheValueBudget) {
  // KernelBench #2's problem: 2^29 output values, 2^22 per image
  const spec::Problem p = spec::parse(
      "conv_transpose2d(n=128,c=64,h=128,w=128,k=64,r=3,stride=2,pad=1,out_pad=1) | add(param[k]) | clamp(0,1)");
  EXPECT_EQ(sample_images(p, int64_t(1) << 25), 8);
  EXPECT_EQ(sample_images(p, 1), 1);
  EXPECT_EQ(sample_images(p, int64_t(1) << 40), 128);
}

}  // namespace
}  // namespace fusetune::reference
