// Every spec the README and the reference pages show (in code blocks, a line starting with a
// main operator such as `conv2d(`) parses and survives a canonical round trip; those `tune`
// takes today generate variants that compile, the others are refused with the documented line:
// the documentation cannot drift from the tool.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "codegen/generate.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/support.hpp"
#include "tune/compile_all.hpp"

namespace {

std::vector<std::string> readme_specs() {
  std::vector<std::string> specs;
  for (const char* page : {"/README.md", "/docs/spec-language.md", "/docs/commands.md", "/docs/cluster.md"}) {
    std::ifstream f(std::string(FUSETUNE_SOURCE_DIR) + page);
    EXPECT_TRUE(f.good()) << page;
    std::string line;
    bool in_code = false;
    while (std::getline(f, line)) {
      if (line.rfind("```", 0) == 0) {
        in_code = !in_code;
        continue;
      }
      if (!in_code) continue;
      for (const char* main : {"conv2d(", "conv3d(", "conv_transpose2d(", "conv_transpose3d(", "linear(", "matmul("}) {
        if (line.rfind(main, 0) == 0) specs.push_back(line);
      }
    }
  }
  return specs;
}

TEST(ReadmeExamples, EverySpecParsesRoundTripsAndCompiles) {
  const auto specs = readme_specs();
  ASSERT_GE(specs.size(), 8u) << "the documentation's spec examples not found";
  const auto limits = *fusetune::gpu::limits_for_arch("sm_90");
  int version2 = 0;
  for (const auto& s : specs) {
    SCOPED_TRACE(s);
    const auto p = fusetune::spec::parse(s);
    const auto canon = fusetune::spec::canonical(p);
    EXPECT_EQ(fusetune::spec::canonical(fusetune::spec::parse(canon)), canon);
    // Every example is tunable: version-2 ones take generate_model_variants' plans.
    ASSERT_FALSE(fusetune::spec::why_not_tunable(p).has_value()) << *fusetune::spec::why_not_tunable(p);
    if (!p.is_conv2d_chain()) ++version2;
    auto variants = fusetune::codegen::generate_variants(p, limits);
    ASSERT_FALSE(variants.empty());
    // One variant per candidate keeps this fast; codegen tests compile whole spaces.
    std::vector<fusetune::codegen::Variant> sample;
    for (const auto& v : variants)
      if (std::none_of(sample.begin(), sample.end(), [&](const auto& x) { return x.candidate == v.candidate; }))
        sample.push_back(v);
    for (const auto& r : fusetune::tune::compile_all(sample, limits, {}))
      EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason << "\n" << r.log_excerpt;
  }
  EXPECT_GE(version2, 4) << "docs/spec-language.md's version 2 examples not found";
}

}  // namespace
