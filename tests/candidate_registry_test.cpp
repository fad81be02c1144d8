// The candidate registry (codegen/candidates.hpp) is the one place that knows the candidates:
// these tests fail when a Candidate value has no row, when rows clash, or when a row's facts
// disagree with what its generator makes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "codegen/candidates.hpp"
#include "codegen/cudnn_engine.hpp"
#include "codegen/generate.hpp"
#include "gpu/device_limits.hpp"
#include "report/palette.hpp"
#include "spec/parser.hpp"

namespace fusetune::codegen {
namespace {

TEST(CandidateRegistry, EveryValueHasExactlyOneRow) {
  ASSERT_EQ(candidate_table().size(), size_t(kCandidateCount));
  for (int i = 0; i < kCandidateCount; ++i) {
    int rows = 0;
    for (const auto& row : candidate_table()) rows += int(row.id) == i;
    EXPECT_EQ(rows, 1) << "Candidate value " << i;
    EXPECT_EQ(candidate_info(Candidate(i)).id, Candidate(i));
  }
}

TEST(CandidateRegistry, NamesAreUniqueWordsThatRoundTrip) {
  std::set<std::string_view> names;
  for (const auto& row : candidate_table()) {
    EXPECT_TRUE(std::regex_match(std::string(row.name), std::regex("[a-z][a-z0-9-]*"))) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
    EXPECT_EQ(candidate_from_name(row.name), row.id);
    EXPECT_EQ(candidate_name(row.id), row.name);
    ASSERT_NE(candidate_info(row.name), nullptr);
  }
  EXPECT_EQ(candidate_info("no-such-candidate"), nullptr);
}

TEST(CandidateRegistry, ColoursAreDistinctFromEachOtherAndFromTheReportsLinesAndTints) {
  namespace pal = report::palette;
  const std::set<std::string_view> reserved = {pal::kUnfused,    pal::kConvFloor,     pal::kRoofline,  pal::kWinner,
                                               pal::kCopy,       pal::kBound,         pal::kParamBar,  pal::kTimesTint,
                                               pal::kBandwidthTint, pal::kParamsTint, pal::kErrorTint, pal::kRelL2Tint};
  std::set<std::string_view> colours;
  for (const auto& row : candidate_table()) {
    EXPECT_TRUE(std::regex_match(std::string(row.colour), std::regex("#[0-9a-f]{6}"))) << row.name;
    EXPECT_TRUE(colours.insert(row.colour).second) << row.name << " repeats a colour";
    EXPECT_EQ(reserved.count(row.colour), 0u) << row.name << "'s colour is a reference line's or a tint";
    EXPECT_EQ(pal::candidate_color(row.name), row.colour);
  }
}

TEST(CandidateRegistry, RolesHaveOneBaselineAndAFloor) {
  int baselines = 0, floors = 0;
  for (const auto& row : candidate_table()) {
    baselines += row.role == Role::baseline;
    floors += row.role == Role::floor;
    EXPECT_EQ(role_of(row.id), row.role);
  }
  EXPECT_EQ(baselines, 1);  // every speedup is measured against the one baseline
  EXPECT_GE(floors, 1);
}

// Each row's generator makes variants of its own candidate (and only those), in table order, and
// the run-time expansion rule matches what it makes: templates without an engine configuration.
TEST(CandidateRegistry, GeneratorsMakeTheirOwnCandidatesInTableOrder) {
  const auto p = spec::parse("conv2d(n=2,c=32,h=18,w=18,k=64,r=3,s=3) | min(0.5) | add(param[k]) | mul(2.0)");
  const auto limits = *gpu::limits_for_arch("sm_90");
  const auto all = generate_variants(p, limits);
  size_t pos = 0;
  for (const auto& row : candidate_table()) {
    size_t made = 0;
    for (; pos < all.size() && all[pos].candidate == row.id; ++pos, ++made) {
      if (row.engines_at_run_time) {
        EXPECT_FALSE(engine_of(all[pos])) << all[pos].name;
      }
    }
    if (row.model_only) {
      EXPECT_EQ(made, 0u) << row.name << " is for version-2 problems only";
      // ... where its generator makes its own candidate's variants only
      const auto linear = spec::parse("linear(m=256,k=64,n=128) | add(param[k]) | relu");
      const Shape s = shape_of(linear);
      const auto mine = row.generate(GenerateInput{linear, s, limits, GenerateOptions{}});
      EXPECT_FALSE(mine.empty()) << row.name;
      for (const auto& v : mine) EXPECT_EQ(v.candidate, row.id) << v.name;
      continue;
    }
    EXPECT_GT(made, 0u) << row.name << " made no variant for a problem every conv2d candidate covers";
  }
  EXPECT_EQ(pos, all.size()) << "a variant out of table order: " << (pos < all.size() ? all[pos].name : "");
}

// Adding a candidate touches only its own files and its registry row: no code outside them picks
// out a candidate by its name ("fused-conv" == ...) or by its Candidate value. Allowed: the
// registry, the enum, each generator (codegen/generate_<name>.cpp and its design spaces) and the
// test-only plants, which live in their designs' templates. Everything else asks the row
// (runs_in_torch, engines_at_run_time, own_conv, role).
TEST(CandidateRegistry, NoCodeOutsideTheRegistryPicksOutACandidate) {
  namespace fs = std::filesystem;
  std::string names;
  for (const auto& row : candidate_table()) {
    if (!names.empty()) names += '|';
    names += row.name;
  }
  const std::regex by_name("[=!]=\\s*(std::string_view\\()?\"(" + names + ")\"|\"(" + names + ")\"\\)?\\s*[=!]=");
  const std::regex by_value("Candidate::[a-z_]+");
  const std::regex allowed("codegen/(candidates\\.cpp|variant\\.(hpp|cpp)|generate_[a-z_]+\\.cpp|space_[a-z_]+\\.cpp|planted\\.cpp)");
  int scanned = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(FUSETUNE_SOURCE_DIR) / "src")) {
    const std::string path = e.path().generic_string();
    if (!e.is_regular_file() || !std::regex_search(path, std::regex("\\.(cpp|hpp)$"))) continue;
    ++scanned;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string code = text.str();
    EXPECT_FALSE(std::regex_search(code, by_name)) << path << " compares a candidate's name";
    if (!std::regex_search(path, allowed)) {
      EXPECT_FALSE(std::regex_search(code, by_value)) << path << " names a Candidate value";
    }
  }
  EXPECT_GT(scanned, 100);
}

}  // namespace
}  // namespace fusetune::codegen
