// The float64 reference sliced by images on a GPU, below the worker: the references of slices of
// images (a GpuReference per slice size, inputs offset by the slice's first image), compared with
// the slices of one output and merged (reference/image_slices.hpp), give the figures of one
// comparison with the whole answer, for the output and the conv alone, NCHW and NHWC outputs,
// both math modes. Cheap and deterministic: the tune-level test (gpu_sliced_verify_test) adds
// the candidates. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "error_stats_expect.hpp"
#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/stream.hpp"
#include "reference/bounds.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/image_slices.hpp"
#include "reference/problem_data.hpp"
#include "spec/parser.hpp"
#include "gpu_fixture.hpp"

namespace fusetune::reference {
namespace {

class GpuReferenceSlices : public testing::GpuFixture<> {};

TEST_F(GpuReferenceSlices, MergedSlicesGiveTheWholeComparison) {
  for (const char* spec : {"conv2d(n=8,c=5,h=11,w=9,k=12,r=3,pad=1) | add(param[k]) | sigmoid",
                           "conv2d(n=8,c=4,h=10,w=7,k=6,r=3) | mul(2) | reduce_min | tanh"}) {
    const spec::Problem p = spec::parse(spec);
    const spec::Conv& c = p.conv;
    const int64_t pq = c.p() * c.q();
    for (MathMode math : {MathMode::tf32, MathMode::fp32}) {
      GpuReference whole(p, arch_, math);
      const std::vector<ImageSlice> slices = image_slices(c.n, 3);
      ASSERT_EQ(slices.size(), 3u);
      GpuReference three(slice_problem(p, 3), arch_, math), two(slice_problem(p, 2), arch_, math);
      const ProblemData host = make_problem_data(p, 7);
      gpu::DeviceBuffer x(host.x.size() * 4), w(host.w.size() * 4), chan(std::max<size_t>(1, host.chan.size()) * 4);
      x.upload(std::span<const float>(host.x), 0, stream());
      w.upload(std::span<const float>(host.w), 0, stream());
      if (!host.chan.empty()) chan.upload(std::span<const float>(host.chan), 0, stream());
      const RefAnswer a = whole.compute(x.ptr(), w.ptr(), chan.ptr(), true, stream());
      for (bool conv_alone : {false, true})
        for (bool nhwc : {false, true}) {
          SCOPED_TRACE(std::string(spec) + " " + std::string(math_mode_name(math)) +
                       (conv_alone ? " conv" : " output") + (nhwc ? " nhwc" : " nchw"));
          const RefArrays& arrays = conv_alone ? *a.conv : a.output;
          const uint64_t per_image = arrays.count / uint64_t(c.n);
          const int64_t channels = int64_t(per_image) / pq;
          // The candidate: the answer rounded to fp32, wrong in image 4 (NaN) and image 7.
          std::vector<double> ref = arrays.values.download<double>(stream());
          std::vector<float> nchw(ref.begin(), ref.end());
          const uint64_t first_bad = 4 * per_image + per_image / 3;
          nchw[first_bad] = std::numeric_limits<float>::quiet_NaN();
          nchw[7 * per_image + 5] += 10.0f;
          std::vector<float> host_out = nchw;
          if (nhwc)
            for (int64_t n = 0; n < c.n; ++n)
              for (int64_t k = 0; k < channels; ++k)
                for (int64_t i = 0; i < pq; ++i)
                  host_out[size_t((n * pq + i) * channels + k)] = nchw[size_t((n * channels + k) * pq + i)];
          gpu::DeviceBuffer out(host_out.size() * 4);
          out.upload(std::span<const float>(host_out), 0, stream());

          const double kappa = 1.3;  // a draw's var_scale: the merged sums take it once, as a whole answer does
          const GpuErrorStats want = finish_compare(whole.compare_sums(out.ptr(), nhwc, arrays, stream()),
                                                    arrays.count, math, kappa);
          EXPECT_EQ(want.first_bad, first_bad);
          EXPECT_GE(want.mismatches, 2u);

          ft_compare_acc total = ft_compare_acc_zero();
          for (const ImageSlice& sl : slices) {
            GpuReference& ref_s = sl.images == 3 ? three : two;
            const uint64_t first = uint64_t(sl.first);
            const RefAnswer sa = ref_s.compute(x.ptr() + 4 * first * uint64_t(c.c * c.h * c.w), w.ptr(), chan.ptr(),
                                               conv_alone, stream());
            const RefArrays& sarr = conv_alone ? *sa.conv : sa.output;
            ASSERT_EQ(sarr.count, uint64_t(sl.images) * per_image);
            merge_slice(total, ref_s.compare_sums(out.ptr() + 4 * first * per_image, nhwc, sarr, stream()),
                        first * per_image);
          }
          const GpuErrorStats got = finish_compare(total, arrays.count, math, kappa);
          expect_same_figures(want, got);
        }
    }
  }
}

}  // namespace
}  // namespace fusetune::reference
