// The background compile the guided search takes variants from (tune/compile_queue.hpp): each
// result is what compiling the variant alone gives, whichever thread compiled it; a variant the
// pool has not reached is compiled on the asking thread; after stop() the pool takes nothing new
// but every variant asked for still comes; destroying a queue mid-compile neither hangs nor loses
// a result asked for. GPU-free (NVRTC only).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "gpu/device_limits.hpp"
#include "spec/parser.hpp"
#include "tune/compile_queue.hpp"

namespace fusetune::tune {
namespace {

std::vector<codegen::Variant> some_variants(size_t n) {
  const auto limits = *gpu::limits_for_arch("sm_90");
  auto variants = codegen::generate_variants(spec::parse("conv2d(n=1,c=8,h=12,w=12,k=16,r=3) | relu | reduce_min"), limits);
  std::vector<codegen::Variant> out;
  for (auto& v : variants)
    if (!v.source.empty() && out.size() < n) out.push_back(std::move(v));
  return out;
}

TEST(CompileQueue, EachResultIsTheVariantsOwnCompile) {
  const auto limits = *gpu::limits_for_arch("sm_90");
  const auto variants = some_variants(4);
  ASSERT_EQ(variants.size(), 4u);
  CompileAllOptions o;
  o.jobs = 2;
  CompileQueue q(variants, {3, 2, 1, 0}, limits, o);
  for (size_t i = 0; i < variants.size(); ++i) {
    const fusetune::protocol::VariantResult& r = q.get(i);
    const fusetune::protocol::VariantResult alone = compile_variant(variants[i], limits, o);
    EXPECT_EQ(r.variant.name, variants[i].name);
    EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.reason;
    EXPECT_EQ(r.compile.registers, alone.compile.registers) << variants[i].name;
    EXPECT_EQ(r.compile.cubin.empty(), alone.compile.cubin.empty());
    EXPECT_TRUE(q.done(i));
  }
}

TEST(CompileQueue, AVariantOutsideThePoolsOrderIsCompiledWhenAskedFor) {
  const auto limits = *gpu::limits_for_arch("sm_90");
  const auto variants = some_variants(2);
  std::atomic<int> compiled{0};
  CompileAllOptions o;
  o.on_done = [&](const fusetune::protocol::VariantResult&) { ++compiled; };
  CompileQueue q(variants, {}, limits, o);  // no pool work at all
  EXPECT_FALSE(q.done(1));
  EXPECT_EQ(q.get(1).status, fusetune::protocol::Status::ok);
  EXPECT_TRUE(q.done(1));
  EXPECT_FALSE(q.done(0));
  EXPECT_EQ(compiled.load(), 1);  // only what was asked for
}

TEST(CompileQueue, AfterStopThePoolTakesNothingNewButGetStillAnswers) {
  const auto limits = *gpu::limits_for_arch("sm_90");
  const auto variants = some_variants(4);
  std::atomic<int> compiled{0};
  CompileAllOptions o;
  o.jobs = 1;
  o.on_done = [&](const fusetune::protocol::VariantResult&) { ++compiled; };
  {
    CompileQueue q(variants, {0, 1, 2, 3}, limits, o);
    q.stop();
    // The one pool thread may have started one variant before stop(); nothing after it.
    EXPECT_EQ(q.get(3).status, fusetune::protocol::Status::ok);
    EXPECT_EQ(q.get(2).status, fusetune::protocol::Status::ok);
  }  // joins the pool
  EXPECT_LE(compiled.load(), 3);
  EXPECT_GE(compiled.load(), 2);
}

TEST(CompileQueue, ThePoolTakesThePreferredVariantsFirst) {
  // The guided search names what it will ask for next (GuidedSearch::ranking): the pool compiles
  // those before the rest of its order.
  const auto limits = *gpu::limits_for_arch("sm_90");
  const auto variants = some_variants(4);
  std::mutex m;
  std::vector<std::string> finished;
  CompileAllOptions o;
  o.jobs = 1;
  o.on_done = [&](const fusetune::protocol::VariantResult& r) {
    const std::lock_guard<std::mutex> lock(m);
    finished.push_back(r.variant.name);
  };
  {
    CompileQueue q(variants, {0, 1, 2, 3}, limits, o);
    q.prefer({3, 2});  // the one thread may have started variant 0 already; then 3, 2, 1
    // Nothing asked for (get() would compile a queued variant on this thread): the pool alone.
    while (!(q.done(0) && q.done(1) && q.done(2) && q.done(3))) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(finished.size(), 4u);
  const auto at = [&](size_t i) { return std::find(finished.begin(), finished.end(), variants[i].name) - finished.begin(); };
  EXPECT_LT(at(3), at(2));
  EXPECT_LT(at(2), at(1));
}

TEST(CompileQueue, DestroyingItMidCompileJoinsCleanly) {
  const auto limits = *gpu::limits_for_arch("sm_90");
  CompileAllOptions o;
  o.jobs = 2;
  CompileQueue q(some_variants(4), {0, 1, 2, 3}, limits, o);
  EXPECT_EQ(q.get(0).status, fusetune::protocol::Status::ok);
}

}  // namespace
}  // namespace fusetune::tune
