// Every spec the README and the reference pages show (in code blocks, a line starting with
// `conv2d(`) parses, survives a canonical round trip and generates variants that compile: the
// documentation cannot drift from the tool.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "codegen/generate.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
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
      if (in_code && line.rfind("conv2d(", 0) == 0) specs.push_back(line);
    }
  }
  return specs;
}

TEST(ReadmeExamples, EverySpecParsesRoundTripsAndCompiles) {
  const auto specs = readme_specs();
  ASSERT_GE(specs.size(), 8u) << "the documentation's spec examples not found";
  const auto limits = *fusetune::gpu::limits_for_arch("sm_90");
  for (const auto& s : specs) {
    SCOPED_TRACE(s);
    const auto p = fusetune::spec::parse(s);
    const auto canon = fusetune::spec::canonical(p);
    EXPECT_EQ(fusetune::spec::canonical(fusetune::spec::parse(canon)), canon);
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
}

}  // namespace
