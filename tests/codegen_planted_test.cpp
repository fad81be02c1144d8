// The test-only planted variants (FUSETUNE_TEST_PLANT) exist, differ from the real ones only
// where intended, and compile: the GPU tests that prove verification, fault and hang handling
// depend on them.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "codegen/generate.hpp"
#include "codegen/planted.hpp"
#include "codegen/variant_check.hpp"
#include "gpu/compiler.hpp"
#include "spec/parser.hpp"
#include "tune/compile_all.hpp"

namespace {

using fusetune::codegen::Variant;

std::vector<Variant> generate(const char* spec, const std::string& plant, bool strict_fp32 = false) {
  fusetune::codegen::GenerateOptions o;
  o.plant = plant;
  o.strict_fp32 = strict_fp32;
  return fusetune::codegen::generate_variants(fusetune::spec::parse(spec), *fusetune::gpu::limits_for_arch("sm_90"), o);
}

TEST(CodegenPlanted, NoneUnlessAsked) {
  for (const auto& v : generate("conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k])", ""))
    EXPECT_EQ(v.name.find("planted"), std::string::npos) << v.name;
}

TEST(CodegenPlanted, WrongFaultHangCompile) {
  for (const char* spec : {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)",
                           "conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | mul(2) | reduce_min"}) {
    SCOPED_TRACE(spec);
    const auto all = generate(spec, "wrong,fault,hang");
    std::vector<Variant> planted;
    for (const auto& v : all)
      if (v.name.find("planted") != std::string::npos) planted.push_back(v);
    ASSERT_EQ(planted.size(), 4u);  // wrong x {nchw, nhwc}, fault, hang
    int wrong = 0;
    for (const auto& v : planted) {
      if (v.name.find("planted-wrong") != std::string::npos) {
        ++wrong;
        EXPECT_NE(v.source.find("#define FT_PLANT_CHANNEL_SHIFT 1"), std::string::npos);
      } else {
        ASSERT_EQ(v.plan.back().kind(), fusetune::codegen::StepKind::kernel);
        EXPECT_NE(v.plan.back().kernel().name.find("ft_planted_"), std::string::npos);
      }
    }
    EXPECT_EQ(wrong, 2);
    for (const auto& v : all) {
      if (v.name.find("planted") == std::string::npos) {
        EXPECT_EQ(v.source.find("FT_PLANT_CHANNEL_SHIFT 1"), std::string::npos) << v.name;
      }
    }
    for (const auto& r : fusetune::tune::compile_all(planted, *fusetune::gpu::limits_for_arch("sm_90"), {}))
      EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason;
  }
}

// The subtle bugs of the trustworthy-verdicts issue: each planted in every design it applies to,
// each a sound plan (so only verification can reject it), each compiling.
TEST(CodegenPlanted, SubtleBugsArePlantedWhereTheyApply) {
  struct Case {
    const char* spec;
    std::vector<std::string> expected;  // planted variant names
  };
  const std::vector<Case> cases = {
      {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)",
       {"epilogue.nchw.b128.v1.e1.planted-bias", "epilogue.nchw.b128.v1.e1.planted-row",
        "epilogue.nchw.b128.v1.e1.planted-twice", "epilogue.nchw.b128.v1.e1.planted-tap",
        // the NHWC -> NCHW design stores through the fused transpose: no row plant there
        "epilogue.nhwc.t32.v1.o1.b128.planted-bias", "epilogue.nhwc.t32.v1.o1.b128.planted-twice",
        "epilogue.nhwc.t32.v1.o1.b128.planted-tap"}},
      {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | mul(2) | reduce_min",
       {"epilogue.nchw.t32.v1.c1.s2.planted-bias", "epilogue.nchw.t32.v1.c1.s2.planted-row",
        "epilogue.nchw.t32.v1.c1.s2.planted-reduce", "epilogue.nchw.t32.v1.c1.s2.planted-twice",
        "epilogue.nchw.t32.v1.c1.s2.planted-tap", "epilogue.nhwc.l4.v1.c1.b256.planted-bias",
        "epilogue.nhwc.l4.v1.c1.b256.planted-row", "epilogue.nhwc.l4.v1.c1.b256.planted-reduce",
        "epilogue.nhwc.l4.v1.c1.b256.planted-twice", "epilogue.nhwc.l4.v1.c1.b256.planted-tap"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    const auto problem = fusetune::spec::parse(c.spec);
    std::vector<Variant> planted;
    std::vector<std::string> names;
    for (const auto& v : generate(c.spec, "subtle")) {
      if (v.name.find("planted") == std::string::npos) continue;
      planted.push_back(v);
      names.push_back(v.name);
      EXPECT_EQ(fusetune::codegen::check_variant(v, problem), "") << v.name;
    }
    EXPECT_EQ(names, c.expected);
    for (const auto& r : fusetune::tune::compile_all(planted, *fusetune::gpu::limits_for_arch("sm_90"), {}))
      EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason << r.log_excerpt;
  }
}

// The dropped tap: a one-time step in front makes the filters the conv reads.
TEST(CodegenPlanted, DroppedTapFeedsTheConvThroughAPlantedCopy) {
  for (const auto& v : generate("conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | relu", "tap")) {
    if (v.name.find("planted-tap") == std::string::npos) continue;
    ASSERT_EQ(v.plan.front().kind(), fusetune::codegen::StepKind::kernel);
    EXPECT_EQ(v.plan.front().kernel().name, "ft_planted_drop_tap");
    EXPECT_FALSE(v.plan.front().timed);
    for (const auto& st : v.plan) {
      if (st.kind() == fusetune::codegen::StepKind::cudnn_conv && st.conv().layout == fusetune::spec::Layout::nchw) {
        EXPECT_EQ(v.buffer(st.conv().filters).name, "w_planted") << v.name;
      }
      if (st.kind() == fusetune::codegen::StepKind::kernel && st.kernel().name == "ft_transform_kcrs_to_krsc") {
        EXPECT_EQ(v.buffer(st.kernel().args[0]).name, "w_planted") << v.name;
      }
    }
  }
}

// The deep plants (issue 41): bugs inside the fused convs and the reductions, each planted where
// it applies, each a copy of a real variant that differs from it only by its one define, each
// compiling for sm_90a to code that differs from its base's (the hook is live).
TEST(CodegenPlanted, DeepPlantsDifferFromTheirBaseOnlyByTheirDefine) {
  struct Case {
    const char* spec;
    bool fp32;
    std::map<std::string, std::set<std::string>> words;  // design -> the deep plants expected on it
  };
  const std::set<std::string> conv = {"chunk", "edge", "filter", "stale", "trunc"};
  auto with = [](std::set<std::string> s, std::initializer_list<const char*> more) {
    for (const char* m : more) s.insert(m);
    return s;
  };
  const std::vector<Case> cases = {
      // K = 128: the halo design's bn = 64 variants have two column tiles
      {"conv2d(n=2,c=64,h=20,w=20,k=128,r=3) | mul(2) | reduce_min",
       false,
       {{"fused-conv.halo", with(conv, {"init", "lasttile"})}, {"epilogue.nchw", {"init"}}, {"epilogue.nhwc", {"init"}}}},
      // C = 16: the gather design too; K = 72 is no multiple of a column tile
      {"conv2d(n=2,c=16,h=32,w=32,k=72,r=3,pad=1,stride=2) | min(0.5) | add(param[k]) | mul(2)",
       false,
       {{"fused-conv.halo", conv}, {"fused-conv", conv}}},
      {"conv2d(n=2,c=64,h=32,w=32,k=128,r=3) | relu", true,
       {{"fused-conv.halo3x", {"chunk", "edge", "filter", "stale", "split"}}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    const auto all = generate(c.spec, "deep", c.fp32);
    std::map<std::string, const Variant*> real;
    for (const auto& v : all)
      if (v.design.find(".planted") == std::string::npos) real[v.name] = &v;
    std::map<std::string, std::set<std::string>> got;
    std::map<std::string, std::string> base_ptx;
    for (const auto& v : all) {
      if (v.design.find(".planted") == std::string::npos) continue;
      const size_t at = v.name.find(".planted-");
      ASSERT_NE(at, std::string::npos) << v.name;
      const std::string word = v.name.substr(at + 9);
      const auto base = real.find(v.name.substr(0, at));
      ASSERT_NE(base, real.end()) << v.name;
      const auto* d = std::find_if(std::begin(fusetune::codegen::kDeepPlants), std::end(fusetune::codegen::kDeepPlants),
                                   [&](const auto& p) { return word == p.word; });
      ASSERT_NE(d, std::end(fusetune::codegen::kDeepPlants)) << v.name;
      EXPECT_EQ(v.design, base->second->design + ".planted");
      EXPECT_EQ(v.source, std::string("#define FT_PLANT_") + d->macro + " 1\n" + base->second->source) << v.name;
      EXPECT_EQ(v.plan.size(), base->second->plan.size()) << v.name;
      got[base->second->design].insert(word);
      fusetune::gpu::CompileOptions o;
      o.arch = "sm_90a";
      o.ptxas_verbose = false;
      o.strict_fp32 = c.fp32;
      if (!base_ptx.contains(base->first)) {
        const auto r = fusetune::gpu::compile_cuda(base->second->source, base->first, o);
        ASSERT_TRUE(r.ok()) << base->first << r.log;
        base_ptx[base->first] = r.ptx;
      }
      const auto r = fusetune::gpu::compile_cuda(v.source, v.name, o);
      ASSERT_TRUE(r.ok()) << v.name << ": " << r.log;
      EXPECT_NE(r.ptx, base_ptx[base->first]) << v.name << ": the plant changes nothing";
    }
    for (const auto& [design, words] : c.words) EXPECT_EQ(got[design], words) << design;
    for (const auto& [design, words] : got) EXPECT_TRUE(c.words.contains(design)) << design;
  }
}

// `wrong` (every per-channel value read for the next channel) must change a fused conv even when
// its chain has no per-channel parameter, only the conv bias (#32's chain): call 112 found the
// plant left such a kernel correct, so it passed verification as the correct kernel it was.
TEST(CodegenPlanted, WrongChannelChangesTheFusedConvsWithOnlyABias) {
  const auto all = generate("conv2d(n=2,c=64,h=20,w=20,k=128,r=3) | mul(2) | reduce_min", "wrong");
  std::map<std::string, const Variant*> real;
  for (const auto& v : all)
    if (v.design.find(".planted") == std::string::npos) real[v.name] = &v;
  fusetune::gpu::CompileOptions o;
  o.arch = "sm_90a";
  o.ptxas_verbose = false;
  int fused = 0;
  for (const auto& v : all) {
    if (v.candidate != fusetune::codegen::Candidate::fused_conv || !v.name.ends_with(".planted-wrong")) continue;
    ++fused;
    const auto base = real.find(v.name.substr(0, v.name.find(".planted-")));
    ASSERT_NE(base, real.end()) << v.name;
    const auto b = fusetune::gpu::compile_cuda(base->second->source, base->first, o);
    const auto r = fusetune::gpu::compile_cuda(v.source, v.name, o);
    ASSERT_TRUE(b.ok() && r.ok()) << v.name << ": " << b.log << r.log;
    EXPECT_NE(r.ptx, b.ptx) << v.name << ": the plant changes nothing";
  }
  EXPECT_GT(fused, 0);
}

}  // namespace
