// The tuner's rows (tune/run/rows.hpp) and strategies (tune/search/), GPU-free: a row keeps its
// identity and its CUBIN path when rows move, on_batch sees the rows' results without the rows
// losing them, and the strategy words and the random draw are what the CLI and re-runs rely on.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tune/run/rows.hpp"
#include "tune/search/searcher.hpp"
#include "tune/search/strategy.hpp"

namespace fusetune::tune {
namespace {

protocol::VariantResult named(const std::string& name) {
  protocol::VariantResult r;
  r.variant.name = name;
  return r;
}

std::vector<std::string> names(const Rows& rows) {
  std::vector<std::string> out;
  for (size_t i = 0; i < rows.size(); ++i) out.push_back(rows.result(i).variant.name);
  return out;
}

TEST(TuneRows, IdentitiesAndCubinsStayWithTheirRowsWhenRowsMove) {
  Rows rows;
  for (const char* n : {"a", "t", "b"}) rows.add(named(n)).cubin_path = std::string(n) + ".cubin";
  const RowId b = rows[2].id;
  std::vector<Row> made;
  for (const char* n : {"t.0", "t.1"}) made.push_back(rows.make(named(n)));
  EXPECT_EQ(rows.replace(1, std::move(made)), 2u);
  EXPECT_EQ(names(rows), (std::vector<std::string>{"a", "t.0", "t.1", "b"}));
  EXPECT_EQ(rows[3].id, b);
  EXPECT_EQ(rows[3].cubin_path, "b.cubin");
  EXPECT_NE(rows[1].id, rows[2].id);
  rows.drop_if({false, true, false, false});
  EXPECT_EQ(names(rows), (std::vector<std::string>{"a", "t.1", "b"}));
  EXPECT_EQ(rows[2].id, b);
  EXPECT_EQ(rows[2].cubin_path, "b.cubin");
}

TEST(TuneRows, OnBatchSeesTheResultsAndTheRowsKeepThem) {
  Rows rows;
  for (const char* n : {"a", "b", "c"}) rows.add(named(n));
  TuneReport rep;
  TuneOptions opt;
  std::vector<std::string> seen;
  opt.on_batch = [&](const TuneReport& r, const std::vector<size_t>& batch) {
    for (size_t i : batch) seen.push_back(r.results.at(i).variant.name);
    EXPECT_EQ(r.results.size(), 3u);
  };
  rows.report_batch(rep, opt, {2, 0});
  EXPECT_EQ(seen, (std::vector<std::string>{"c", "a"}));
  EXPECT_TRUE(rep.results.empty());
  EXPECT_EQ(names(rows), (std::vector<std::string>{"a", "b", "c"}));
  // A callback that throws leaves the rows whole too.
  opt.on_batch = [](const TuneReport&, const std::vector<size_t>&) { throw std::runtime_error("disk full"); };
  EXPECT_THROW(rows.report_batch(rep, opt, {1}), std::runtime_error);
  EXPECT_EQ(names(rows), (std::vector<std::string>{"a", "b", "c"}));
  const auto results = rows.take_results();
  EXPECT_EQ(results.size(), 3u);
  EXPECT_EQ(rows.size(), 0u);
}

TEST(TuneStrategy, TheCliWordsRoundTrip) {
  for (Strategy s : {Strategy::exhaustive, Strategy::random, Strategy::model})
    EXPECT_EQ(parse_strategy(strategy_name(s)), s);
  EXPECT_EQ(strategy_name(Strategy::model), "model");
  EXPECT_THROW((void)parse_strategy("greedy"), Error);
}

codegen::Variant variant(const std::string& name, codegen::Candidate c) {
  codegen::Variant v;
  v.name = name;
  v.candidate = c;
  return v;
}

TEST(TuneStrategy, RandomDrawsItsBudgetOfSolutionsAndKeepsTheBaselines) {
  std::vector<codegen::Variant> all{variant("unfused", codegen::Candidate::unfused)};
  for (int i = 0; i < 20; ++i) all.push_back(variant(fmt::format("e{}", i), codegen::Candidate::epilogue));
  const auto a = make_random_searcher(5, 7)->choose(all);
  const auto b = make_random_searcher(5, 7)->choose(all);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].name, "unfused");
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);  // the same seed, the same draw
  EXPECT_EQ(make_random_searcher(0, 7)->choose(all).size(), all.size());  // no budget: all
  EXPECT_EQ(make_exhaustive_searcher()->choose(all).size(), all.size());
  EXPECT_FALSE(make_exhaustive_searcher()->measures_while_compiling());
  EXPECT_TRUE(make_guided_searcher(0)->measures_while_compiling());
  EXPECT_EQ(make_exhaustive_searcher()->conv_graph_head(), 0);
  EXPECT_GT(make_guided_searcher(0)->conv_graph_head(), 0);
}

}  // namespace
}  // namespace fusetune::tune
