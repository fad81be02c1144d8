// The typed variant record: every generated plan is sound (check_variant) and survives JSON
// unchanged; crafted and old-format records are refused with a reason (GPU-free).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <functional>

#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "codegen/variant_json.hpp"
#include "codegen_problems.hpp"
#include "common/error.hpp"
#include "spec/parser.hpp"

namespace fusetune::codegen {
namespace {

std::vector<spec::Problem> problems() {
  std::vector<spec::Problem> all = testing::awkward_problems();
  all.push_back(testing::preset31());
  all.push_back(testing::preset32());
  for (const char* s : {"conv2d(n=2,c=8,h=12,w=12,k=16,r=3,in=nhwc) | min(0.5) | add(param[k])",
                        "conv2d(n=2,c=8,h=12,w=12,k=16,r=3,in=nhwc,out=nhwc) | relu | reduce_min",
                        "conv2d(n=2,c=8,h=12,w=12,k=16,r=3,out=any) | mul(2) | hardswish",
                        "conv2d(n=2,c=8,h=12,w=12,k=16,r=3,out=nhwc,bias=false) | gelu",
                        "conv2d(n=1,c=3,h=9,w=7,k=5,r=3,bias=false)"})
    all.push_back(spec::parse(s));
  return all;
}

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

Variant first(const spec::Problem& p, const std::string& name) {
  for (auto& v : generate_variants(p, sm90()))
    if (v.name == name) return v;
  throw std::runtime_error("no " + name);
}

TEST(VariantRecord, EveryGeneratedPlanIsSound) {
  size_t n = 0;
  for (const auto& p : problems()) {
    GenerateOptions o;
    // fault and hang copy the NCHW design, which only some layouts have.
    const bool nchw_design = p.conv.in != spec::Layout::nhwc && (p.reduce || p.conv.out != spec::Layout::nhwc);
    o.plant = nchw_design ? "wrong,subtle,fault,hang" : "wrong,subtle";
    for (const auto& v : generate_variants(p, sm90(), o)) {
      EXPECT_EQ(check_variant(v, p), "") << v.name;
      ++n;
    }
  }
  EXPECT_GT(n, 500u);
}

TEST(VariantRecord, RolesFollowCandidates) {
  EXPECT_EQ(role_of(Candidate::unfused), Role::baseline);
  EXPECT_EQ(role_of(Candidate::cudnn), Role::floor);
  EXPECT_EQ(role_of(Candidate::epilogue), Role::solution);
  for (Candidate c : {Candidate::unfused, Candidate::cudnn, Candidate::epilogue})
    EXPECT_EQ(candidate_from_name(candidate_name(c)), c);
  EXPECT_FALSE(candidate_from_name("Epilogue").has_value());
}

TEST(VariantRecord, JsonRoundTripIsLossless) {
  for (const auto& p : problems()) {
    for (const auto& v : generate_variants(p, sm90())) {
      const nlohmann::json j = to_json(v);
      EXPECT_EQ(j.at("format"), kVariantFormat);
      const Variant back = variant_from_json(j);
      EXPECT_EQ(to_json(back), j) << v.name;
      EXPECT_EQ(back.output, v.output);
      EXPECT_EQ(back.plan.size(), v.plan.size());
    }
  }
}

TEST(VariantRecord, OtherFormatsAndBrokenRecordsAreRefusedByName) {
  const Variant v = first(testing::preset31(), "epilogue.nchw.b256.v4.e2");
  nlohmann::json old = to_json(v);
  old.erase("format");  // how fusetune before the typed plan wrote it
  try {
    (void)variant_from_json(old);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("variant format 1"), std::string::npos) << e.what();
  }
  nlohmann::json unknown = to_json(v);
  unknown["plan"][1]["args"][0] = "secret";
  EXPECT_THROW((void)variant_from_json(unknown), InputError);
  nlohmann::json wrong_type = to_json(v);
  wrong_type["plan"][1]["grid"] = "big";
  EXPECT_THROW((void)variant_from_json(wrong_type), InputError);
  EXPECT_THROW((void)variant_from_json(nlohmann::json::array()), InputError);
  nlohmann::json cand = to_json(v);
  cand["candidate"] = "rootkit";
  EXPECT_THROW((void)variant_from_json(cand), InputError);
}

// Integer fields given floats out of every integer's range, negatives where sizes go, or the wrong
// count are refused by name (a float such as 1e118 read as an integer was undefined behaviour:
// the dump fuzzer's find of 2026-12-07).
TEST(VariantRecord, IntegerFieldsMustBeIntegersInRange) {
  const Variant v = first(testing::preset31(), "epilogue.nchw.b256.v4.e2");
  const auto refused = [&](const std::function<void(nlohmann::json&)>& spoil, const char* what) {
    nlohmann::json j = to_json(v);
    spoil(j);
    try {
      (void)variant_from_json(j);
      ADD_FAILURE() << what << ": accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused([](nlohmann::json& j) { j["buffers"][0]["dims"][0][1] = 1.33333e118; }, "a dim is not an integer");
  refused([](nlohmann::json& j) { j["buffers"][0]["dims"][0][1] = 2.0; }, "a dim is not an integer");
  refused([](nlohmann::json& j) { j["plan"][1]["smem"] = -1; }, "smem -1 is out of range");
  refused([](nlohmann::json& j) { j["plan"][1]["smem"] = uint64_t(1) << 40; }, "smem 1099511627776 is out of range");
  refused([](nlohmann::json& j) { j["plan"][1]["grid"] = nlohmann::json::array({1, 2}); }, "a grid is not an array of 3");
  refused([](nlohmann::json& j) { j["plan"][1]["writes"][0] = -3; }, "a written argument -3 is out of range");
  refused([](nlohmann::json& j) { j["params"][0][1] = 1e300; }, "a parameter is not an integer");
  refused([](nlohmann::json& j) { j["format"] = 1e300; }, "format is not an integer");
}

// A plan from a database or a dump is untrusted: each fault names itself.
TEST(VariantRecord, CheckRefusesUnsoundPlans) {
  const spec::Problem p = testing::preset31();
  const Variant good = first(p, "epilogue.nhwc.t64.v4.o4.b256");
  ASSERT_EQ(check_variant(good, p), "");
  struct Case {
    const char* what;
    std::function<void(Variant&)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"kernel name with a newline", [](Variant& v) { v.plan.back().kernel().name = "x\nimport os"; },
       "kernel name is not an identifier"},
      {"buffer name with a quote", [](Variant& v) { v.buffers[0].name = "x\"+1"; }, "is not an identifier"},
      {"variant name with a slash", [](Variant& v) { v.name = "../../etc"; }, "variant name"},
      {"huge scratch", [](Variant& v) { v.buffers[*v.find_buffer("x_nhwc")].dims[0].second = int64_t(1) << 36; },
       "floats (1 to"},
      {"writes an input", [](Variant& v) { v.plan.back().kernel().args[1] = *v.find_buffer("x"); },
       "an input of the problem"},
      {"reads scratch nobody wrote", [](Variant& v) { v.plan.erase(v.plan.begin() + 1); }, "before any step writes it"},
      {"zero grid", [](Variant& v) { v.plan.back().kernel().launch.grid[0] = 0; }, "grid"},
      {"too many threads", [](Variant& v) { v.plan.back().kernel().launch.block = {2048, 1, 1}; }, "block"},
      {"written argument out of range", [](Variant& v) { v.plan.back().kernel().writes = {7}; }, "written arguments"},
      {"buffer ref out of range", [](Variant& v) { v.plan.back().kernel().args[0] = BufferRef{99}; }, "outside the table"},
      {"output of the wrong size", [](Variant& v) { v.output = *v.find_buffer("chan"); }, "no step writes"},
      {"conv filters of the other layout",
       [](Variant& v) {
         for (auto& st : v.plan)
           if (st.kind() == StepKind::cudnn_conv) st.conv().filters = *v.find_buffer("w");
       },
       "do not fit the conv's layout"},
  };
  for (const auto& c : cases) {
    Variant v = good;
    c.edit(v);
    const std::string why = check_variant(v, p);
    EXPECT_NE(why.find(c.expect), std::string::npos) << c.what << ": " << why;
  }
}

TEST(VariantRecord, InPlaceOutputStepIsTheLastWriterThatAlsoReads) {
  const spec::Problem p = testing::preset31();
  EXPECT_EQ(first(p, "epilogue.nchw.b256.v4.e2").in_place_output_step(), std::optional<size_t>(1));
  EXPECT_FALSE(first(p, "epilogue.nhwc.t64.v4.o4.b256").in_place_output_step().has_value());
  EXPECT_FALSE(first(p, "unfused.nchw").in_place_output_step().has_value());
  EXPECT_FALSE(first(p, "cudnn.nchw").in_place_output_step().has_value());
}

}  // namespace
}  // namespace fusetune::codegen
