// Writing and reading records: one row per result identity, winner replacement rules, and the
// queries behind `query`, `export` and the top-k re-tune.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "db/database.hpp"
#include "db_test_support.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::db {
namespace {

using testing::a100;
using testing::h200;
using testing::result;

// "2026-11-29T12:34:56.789Z": digits where the pattern has 'd', the rest literally.
bool looks_like_iso8601_ms(const std::string& s) {
  const std::string pattern = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != pattern.size()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (pattern[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != pattern[i]) return false;
  return true;
}

class DbRecords : public ::testing::Test {
 protected:
  TempDir dir_{"ft-db"};
  Database db_ = Database::open((dir_.path() / "tuning.db").string(), OpenOptions{.load_shipped = false});
  const std::string key_ = "ca98e8d32aaaaf30";
};

// winner() and top_results() match on these strings: a format change orphans stored records.
TEST(DbFingerprint, IsStableText) {
  EXPECT_EQ(h200().fingerprint(),
            "gpu=NVIDIA H200;cc=9.0;sms=132;mem=150754820096;driver=13.0;runtime=13.0;nvrtc=13.0;cudnn=9.19.0;"
            "templates=0123456789abcdef");
  EXPECT_EQ(h200().hardware_fingerprint(), "gpu=NVIDIA H200;cc=9.0;sms=132;mem=150754820096;templates=0123456789abcdef");
  EXPECT_NE(h200("12.8").fingerprint(), h200().fingerprint());
  EXPECT_EQ(h200("12.8").hardware_fingerprint(), h200().hardware_fingerprint());
}

TEST_F(DbRecords, EnvironmentIdIsInsertOrGet) {
  const int64_t a = db_.environment_id(h200());
  EXPECT_EQ(db_.environment_id(h200()), a);
  EXPECT_NE(db_.environment_id(h200("12.8")), a);
}

// A result carries only its environment's fingerprint; the environment itself is found by it
// (a ';' in a GPU name does not confuse it), and a fingerprint nothing stored is nullopt.
TEST_F(DbRecords, EnvironmentIsFoundByItsFingerprint) {
  auto e = h200();
  e.gpu_name = "odd;cc=1.2;gpu name";
  db_.write_results(e, {result("r1", 1.0)});
  const auto back = db_.environment(e.fingerprint());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->fingerprint(), e.fingerprint());
  EXPECT_EQ(back->gpu_name, e.gpu_name);
  EXPECT_EQ(back->sm_count, 132);
  EXPECT_EQ(back->cc_major, 9);
  EXPECT_FALSE(db_.environment("gpu=x;cc=9;sms=1").has_value());
  EXPECT_FALSE(db_.environment("").has_value());
}

TEST_F(DbRecords, WritingAResultAgainUpdatesItsOneRow) {
  db_.write_results(h200(), {result("v1", 2.0)});
  auto again = result("v1", 1.5);
  again.status = "wrong_result";
  again.reason = "max abs error 3e-2";
  db_.write_results(h200(), {again});
  const auto rows = db_.results(key_, "", std::nullopt);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].time_median_ms, 1.5);
  EXPECT_EQ(rows[0].status, "wrong_result");
  EXPECT_EQ(rows[0].reason, "max abs error 3e-2");
  EXPECT_EQ(rows[0].env_fingerprint, h200().fingerprint());
}

TEST_F(DbRecords, ANewParameterValueIsANewRowAndKeepsTheOld) {
  db_.write_results(h200(), {result("v1", 2.0)});
  auto wider = result("v1", 1.0);
  wider.params_json = "{\"block\":256,\"unroll\":4}";  // a parameter added to the space later
  db_.write_results(h200(), {wider});
  db_.write_results(h200(), {result("v1", 3.0, "epilogue", key_, "fp32")});  // other math
  db_.write_results(h200("12.8"), {result("v1", 3.0)});                     // other environment
  db_.write_results(h200(), {result("v1", 3.0, "epilogue", "a73ebae46f0947b2")});  // other problem
  EXPECT_EQ(db_.results(std::nullopt, "", std::nullopt).size(), 5u);
  EXPECT_EQ(db_.results(key_, "", std::string("tf32")).size(), 3u);
}

TEST_F(DbRecords, FiguresRoundTripIncludingNanAndInfinity) {
  auto r = result("v1", 1.25);
  r.max_abs = std::numeric_limits<double>::quiet_NaN();  // SQLite stores NaN as NULL
  r.max_rel = std::numeric_limits<double>::infinity();
  r.rel_l2 = 1e-300;
  r.log_excerpt = "line 1\nline 2: error: \"quoted\"\t\xc3\xa9";
  r.registers = -1;
  r.gpu = 1;  // measured on the second GPU of `tune --devices 0,1`
  db_.write_results(h200(), {r});
  const auto got = db_.results(key_, "", std::nullopt).at(0);
  EXPECT_EQ(got.gpu, 1);
  EXPECT_TRUE(std::isnan(got.max_abs));
  EXPECT_EQ(got.max_rel, std::numeric_limits<double>::infinity());
  EXPECT_EQ(got.rel_l2, 1e-300);
  EXPECT_EQ(got.time_min_ms, r.time_min_ms);
  EXPECT_EQ(got.log_excerpt, r.log_excerpt);
  EXPECT_EQ(got.registers, -1);
  EXPECT_EQ(got.params_json, r.params_json);
  EXPECT_EQ(got.canonical, r.canonical);
}

TEST_F(DbRecords, CreatedAtIsFilledWhenEmptyAndKeptWhenGiven) {
  auto given = result("v2", 1.0);
  given.created_at = "2026-11-29T12:00:00.000Z";
  db_.write_results(h200(), {result("v1", 1.0), given});
  for (const auto& r : db_.results(key_, "", std::nullopt)) {
    if (r.variant_name == "v2") EXPECT_EQ(r.created_at, given.created_at);
    else EXPECT_TRUE(looks_like_iso8601_ms(r.created_at)) << r.created_at;
  }
}

TEST_F(DbRecords, WinnerIsReplacedAndKeepsEveryByte) {
  auto w = testing::winner(h200(), "v1", 1.0);
  for (int i = 0; i < 256; ++i) w.cubin += static_cast<char>(i);
  db_.write_winner(w);
  const auto got = db_.winner(key_, "tf32", h200().fingerprint());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->cubin, w.cubin);
  EXPECT_EQ(got->ptx, w.ptx);
  EXPECT_EQ(got->variant_json, w.variant_json);
  EXPECT_EQ(got->compile_options, w.compile_options);
  EXPECT_EQ(got->cudnn_algo, w.cudnn_algo);
  EXPECT_EQ(got->conv_choices, w.conv_choices);
  EXPECT_EQ(got->env.fingerprint(), h200().fingerprint());
  EXPECT_DOUBLE_EQ(got->speedup_vs_unfused(), 4.4);
  EXPECT_FALSE(got->shipped);

  db_.write_winner(testing::winner(h200(), "v2", 0.9));
  EXPECT_EQ(db_.winner(key_, "tf32", h200().fingerprint())->variant_name, "v2");
  EXPECT_EQ(db_.winners(std::nullopt, "", std::nullopt).size(), 1u);
  EXPECT_FALSE(db_.winner(key_, "fp32", h200().fingerprint()));
  EXPECT_FALSE(db_.winner(key_, "tf32", h200("12.8").fingerprint()));
}

TEST_F(DbRecords, AMeasuredWinnerReplacesAShippedOneNotTheOtherWayRound) {
  auto shipped = testing::winner(h200(), "shipped", 1.2);
  shipped.shipped = true;
  db_.write_winner(shipped);
  EXPECT_TRUE(db_.winner(key_, "tf32", h200().fingerprint())->shipped);
  db_.write_winner(testing::winner(h200(), "measured", 1.1));
  auto w = db_.winner(key_, "tf32", h200().fingerprint());
  EXPECT_EQ(w->variant_name, "measured");
  EXPECT_FALSE(w->shipped);
  db_.write_winner(shipped);  // e.g. shipped records loaded again
  EXPECT_EQ(db_.winner(key_, "tf32", h200().fingerprint())->variant_name, "measured");
}

TEST_F(DbRecords, QueriesFilterByGpuSubstringProblemAndMath) {
  db_.write_results(h200(), {result("h1", 1.0), result("h2", 2.0, "epilogue", key_, "fp32")});
  db_.write_results(a100(), {result("a1", 1.0)});
  db_.write_winner(testing::winner(h200(), "h1", 1.0));
  db_.write_winner(testing::winner(a100(), "a1", 1.0));
  db_.write_winner(testing::winner(a100(), "a2", 1.0, "a73ebae46f0947b2"));

  EXPECT_EQ(db_.results(std::nullopt, "h200", std::nullopt).size(), 2u) << "case-insensitive";
  EXPECT_EQ(db_.results(std::nullopt, "NVIDIA", std::nullopt).size(), 3u);
  EXPECT_EQ(db_.results(std::nullopt, "A100-SXM4", std::string("tf32")).size(), 1u);
  EXPECT_EQ(db_.results(std::nullopt, "%", std::nullopt).size(), 0u) << "no LIKE wildcards";
  EXPECT_EQ(db_.results(std::string("0000000000000000"), "", std::nullopt).size(), 0u);

  EXPECT_EQ(db_.winners(std::nullopt, "", std::nullopt).size(), 3u);
  EXPECT_EQ(db_.winners(std::nullopt, "a100", std::nullopt).size(), 2u);
  EXPECT_EQ(db_.winners(key_, "a100", std::nullopt).size(), 1u);
  EXPECT_EQ(db_.winners(key_, "", std::string("fp32")).size(), 0u);
  EXPECT_EQ(db_.winners(std::nullopt, "H100", std::nullopt).size(), 0u);
}

TEST_F(DbRecords, WinnersComeNewestFirst) {
  auto older = testing::winner(h200(), "old", 1.0);
  older.created_at = "2026-01-01T00:00:00.000Z";
  auto newer = testing::winner(a100(), "new", 1.0);
  newer.created_at = "2026-06-01T00:00:00.000Z";
  db_.write_winner(newer);
  db_.write_winner(older);
  const auto ws = db_.winners(std::nullopt, "", std::nullopt);
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].variant_name, "new");
  EXPECT_EQ(ws[1].variant_name, "old");
}

TEST_F(DbRecords, ResultsComeOkAndFastestFirst) {
  auto failed = result("failed", 0.1);
  failed.status = "compile_failed";
  db_.write_results(h200(), {result("slow", 3.0), failed, result("fast", 1.0)});
  const auto rows = db_.results(key_, "", std::nullopt);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].variant_name, "fast");
  EXPECT_EQ(rows[1].variant_name, "slow");
  EXPECT_EQ(rows[2].variant_name, "failed");
}

TEST_F(DbRecords, TopResultsComeFromTheNewestEnvironmentOfTheSameHardware) {
  // Older software on the same chip.
  db_.write_results(h200("12.4"), {result("old-fast", 0.2), result("old-slow", 5.0)});
  // Newer software: the candidates to re-verify.
  auto wrong = result("wrong", 0.05);
  wrong.status = "wrong_result";
  db_.write_results(h200("12.8"), {result("v3", 3.0), result("v1", 1.0), result("v2", 2.0),
                                   result("unfused", 0.5, "unfused"), result("cudnn.nhwc", 0.4, "cudnn"), wrong,
                                   result("v1-fp32", 0.1, "epilogue", key_, "fp32")});
  // Other hardware, and a newer environment with nothing usable yet: both ignored.
  db_.write_results(a100(), {result("a100", 0.01)});
  auto only_failed = result("nothing", 0.01);
  only_failed.status = "faulted";
  db_.write_results(h200("13.0"), {only_failed});

  const auto top = db_.top_results(key_, "tf32", h200().hardware_fingerprint(), 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].variant_name, "v1");
  EXPECT_EQ(top[1].variant_name, "v2");
  EXPECT_EQ(top[0].env_fingerprint, h200("12.8").fingerprint());
  EXPECT_EQ(db_.top_results(key_, "tf32", h200().hardware_fingerprint(), 10).size(), 3u);
  EXPECT_EQ(db_.top_results(key_, "fp32", h200().hardware_fingerprint(), 10).size(), 1u);
  EXPECT_TRUE(db_.top_results(key_, "tf32", h200().hardware_fingerprint(), 0).empty());
  EXPECT_TRUE(db_.top_results(key_, "tf32", "gpu=none", 5).empty());
}

}  // namespace
}  // namespace fusetune::db
