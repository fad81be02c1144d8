// `fusetune report`: the page is self-contained and inert, draws one bar per result it should
// and the reference lines it promises, escapes every database string, and the command keeps
// the CLI's exit codes. GPU-free: databases are built here, without the shipped records.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <limits>
#include <regex>
#include <string>

#include "cli_run.hpp"
#include "common/error.hpp"
#include "db/database.hpp"
#include "db_test_support.hpp"
#include "codegen/candidates.hpp"
#include "report/figures.hpp"
#include "report/html_escape.hpp"
#include "report/html_report.hpp"
#include "report/report_data.hpp"
#include "report/svg_chart.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::report {
namespace {

using db::testing::a100;
using db::testing::h200;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The <svg> element with data-plot="id" (the first one), or "" when there is none.
std::string plot(const std::string& page, const std::string& id) {
  const std::size_t start = page.find("data-plot=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</svg>", start) - start);
}

std::size_t bars(const std::string& svg) { return count(svg, "class=\"bar\""); }

const spec::Problem& kb31() {
  static const spec::Problem p = spec::resolve_problem(std::nullopt, std::string("kernelbench-31"));
  return p;
}

class ReportHtml : public ::testing::Test {
 protected:
  db::ResultRecord result(const std::string& name, double ms, const std::string& candidate = "epilogue",
                          const std::string& params = "{\"block\":256}") {
    auto r = db::testing::result(name, ms, candidate, key_);
    r.canonical = spec::canonical(kb31());
    r.params_json = params;
    r.worst_ratio = 0.25;
    r.rel_l2_limit = 7e-4;
    if (candidate == "unfused" || candidate == "cudnn") r.gbps = r.pct_copy = 0;
    return r;
  }

  // Baseline and floors, five epilogue variants (two block sizes), two fused-conv ones, one
  // wrong result; the winner is the fastest epilogue.
  void write_typical(const db::Environment& env = h200()) {
    std::vector<db::ResultRecord> rs = {
        result("unfused.nchw", 4.4, "unfused", "{}"),
        result("cudnn.nchw", 1.98, "cudnn", "{\"layout\":0}"),
        result("cudnn.nhwc", 0.91, "cudnn", "{\"layout\":1}"),
        result("epilogue.a", 1.7, "epilogue", "{\"block\":128,\"vec\":4}"),
        result("epilogue.b", 1.8, "epilogue", "{\"block\":256,\"vec\":4}"),
        result("epilogue.c", 1.9, "epilogue", "{\"block\":128,\"vec\":4}"),
        result("epilogue.d", 2.0, "epilogue", "{\"block\":256,\"vec\":4}"),
        result("epilogue.e", 2.1, "epilogue", "{\"block\":512,\"vec\":4}"),
        result("fused-conv.a", 2.5, "fused-conv", "{\"bn\":64}"),
        result("fused-conv.b", 2.6, "fused-conv", "{\"bn\":128}"),
    };
    auto wrong = result("cudnn-fused.bad", 0, "cudnn-fused", "{\"eng\":7}");
    wrong.status = "wrong_result";
    wrong.reason = "max abs error 3e-2 at (0,1,2,3)";
    wrong.gbps = 0;
    rs.push_back(wrong);
    db_.write_results(env, rs);
    auto w = db::testing::winner(env, "epilogue.a", 1.7, key_);
    w.canonical = spec::canonical(kb31());
    db_.write_winner(w);
  }

  std::string page(const std::string& gpu = "") {
    return render_html(gather_report(db_, kb31(), "tf32", gpu),
                       PageOptions{.version = "9.9.9", .generated_at = "2026-12-01T00:00:00.000Z", .param_label = {}});
  }

  TempDir dir_{"ft-report"};
  std::string path_ = (dir_.path() / "tuning.db").string();
  db::Database db_ = db::Database::open(path_, db::OpenOptions{.load_shipped = false});
  std::string key_ = spec::problem_key(kb31());
};

TEST_F(ReportHtml, PageIsSelfContainedAndInert) {
  write_typical();
  const std::string p = page();
  EXPECT_TRUE(p.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(count(p, "<script"), 0u);
  EXPECT_EQ(count(p, "<link"), 0u);
  EXPECT_EQ(count(p, "url("), 0u);
  EXPECT_EQ(count(p, "@import"), 0u);
  EXPECT_EQ(count(p, " src="), 0u);
  EXPECT_EQ(count(p, "https://"), 0u);
  EXPECT_EQ(count(p, "http://"), count(p, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(p.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(p.find("made by fusetune 9.9.9 at 2026-12-01T00:00:00.000Z"), std::string::npos);
}

TEST_F(ReportHtml, OneBarPerVerifiedTimedSolutionAndTheReferenceLines) {
  write_typical();
  const std::string p = page();
  const std::string times = plot(p, "times");
  ASSERT_FALSE(times.empty());
  // Seven solutions; the baseline, the floors and the wrong result are not bars.
  EXPECT_EQ(bars(times), 7u);
  EXPECT_NE(times.find("data-bars=\"7\""), std::string::npos);
  EXPECT_EQ(count(times, "class=\"ref\""), 4u);
  for (const char* label : {">unfused 4.400<", ">conv-alone floor 0.910<", ">roofline floor ", ">winner 1.700<"})
    EXPECT_NE(times.find(label), std::string::npos) << label;
  EXPECT_EQ(times.find(">cudnn.nhwc<"), std::string::npos);
  EXPECT_NE(times.find(">epilogue.a<"), std::string::npos);
  // Fastest first.
  EXPECT_LT(times.find(">epilogue.a<"), times.find(">epilogue.b<"));
  EXPECT_LT(times.find(">epilogue.e<"), times.find(">fused-conv.a<"));
  // A legend entry per candidate drawn.
  EXPECT_EQ(count(times, "class=\"swatch\""), 2u);

  // Bandwidth: every result with gbps > 0 (the solutions), and the copy line.
  const std::string bw = plot(p, "bandwidth");
  EXPECT_EQ(bars(bw), 7u);
  EXPECT_NE(bw.find(">copy 4251 GB/s<"), std::string::npos);

  // Error: every ok result; the bound at 1; the wrong result is in the table with its reason.
  EXPECT_EQ(bars(plot(p, "error")), 10u);
  EXPECT_NE(plot(p, "error").find(">bound 1<"), std::string::npos);
  EXPECT_EQ(bars(plot(p, "rel-l2")), 10u);
  EXPECT_EQ(count(p, "class=\"failed-row\""), 1u);
  EXPECT_NE(p.find("max abs error 3e-2 at (0,1,2,3)"), std::string::npos);
}

TEST_F(ReportHtml, ParameterChartsForParametersWithTwoOrMoreValues) {
  write_typical();
  const std::string p = page();
  // block (128, 256, 512) and bn (64, 128); vec has one value, eng belongs to a failed result.
  EXPECT_EQ(count(p, "data-plot=\"param\""), 2u);
  const std::string block = plot(p, "param\" data-bars=\"3");
  ASSERT_FALSE(block.empty());
  EXPECT_NE(block.find(">block (epilogue)<"), std::string::npos);
  EXPECT_NE(block.find(">n=2<"), std::string::npos);
  EXPECT_NE(block.find(">n=1<"), std::string::npos);
  // The median of 1.7 and 1.9 for block=128.
  EXPECT_NE(block.find("block = 128: median 1.800 ms over 2 variants"), std::string::npos);
}

TEST_F(ReportHtml, TheFastestSixtyAreDrawnAndTheRestCounted) {
  std::vector<db::ResultRecord> rs;
  for (int i = 0; i < 75; ++i) rs.push_back(result("epilogue.v" + std::to_string(i), 1.0 + 0.01 * i));
  db_.write_results(h200(), rs);
  const std::string p = page();
  EXPECT_EQ(bars(plot(p, "times")), kMaxTimeBars);
  EXPECT_NE(p.find(">epilogue.v59<"), std::string::npos);
  EXPECT_EQ(p.find(">epilogue.v60<"), std::string::npos);
  EXPECT_NE(p.find("The fastest 60 of 75 verified variants are drawn; 15 slower ones are left out."), std::string::npos);
}

TEST_F(ReportHtml, DatabaseStringsAreEscaped) {
  auto evil = result("<script>alert(\"x\")</script>", 1.5, "epilogue", "{\"<b>\":1}");
  auto failed = result("fused-conv.\"quoted\"'", 0, "fused-conv");
  failed.status = "compile_failed";
  failed.reason = "error: <script src=\"//evil\"></script> & more";
  auto unknown = result("odd", 1.6, "<img onerror=x>");
  db_.write_results(h200(), {evil, failed, unknown});
  const std::string p = page();
  EXPECT_EQ(count(p, "<script"), 0u);
  EXPECT_EQ(count(p, "<img"), 0u);
  EXPECT_NE(p.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(p.find("fused-conv.&quot;quoted&quot;&#39;"), std::string::npos);
  EXPECT_NE(p.find("error: &lt;script src=&quot;//evil&quot;&gt;&lt;/script&gt; &amp; more"), std::string::npos);
  EXPECT_NE(p.find("&lt;img onerror=x&gt;"), std::string::npos);
  // An unknown candidate is drawn as a solution, in its own legend entry.
  EXPECT_EQ(bars(plot(p, "times")), 2u);
}

TEST_F(ReportHtml, NonFiniteAndNegativeFiguresAreNotDrawn) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto a = result("epilogue.x1", nan);
  auto b = result("epilogue.x2", inf);
  auto c = result("epilogue.x3", -1);
  auto d = result("epilogue.good", 1.0);
  d.gbps = inf;
  d.worst_ratio = nan;
  d.rel_l2 = -1;
  auto e = result("epilogue.huge", 1e300);
  e.gbps = -5;
  db_.write_results(h200(), {a, b, c, d, e});
  const std::string p = page();
  EXPECT_EQ(bars(plot(p, "times")), 2u);  // good and huge
  EXPECT_EQ(bars(plot(p, "bandwidth")), 3u);  // the untimed ones measured a bandwidth; inf and < 0 did not
  // No NaN or infinity reaches an attribute or a label.
  const std::regex bad(R"(\b(nan|inf)\b)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(p, bad));
  // The untimed results are listed as failures.
  EXPECT_EQ(count(p, "class=\"failed-row\""), 3u);
}

TEST_F(ReportHtml, TheNewestWinnersEnvironmentIsShownAndOthersCounted) {
  write_typical(h200("12.8"));
  db_.write_results(h200("13.0"), {result("epilogue.newer", 1.2)});
  const std::string p = page();
  // The winner is in the 12.8 environment: its seven solutions, not the newer one.
  EXPECT_EQ(bars(plot(p, "times")), 7u);
  EXPECT_EQ(p.find(">epilogue.newer<"), std::string::npos);
  EXPECT_NE(p.find("1 result of 1 other environment"), std::string::npos);
  EXPECT_NE(p.find("driver 12.8"), std::string::npos);
}

TEST_F(ReportHtml, WithoutAWinnerTheNewestResultsEnvironmentIsShown) {
  db_.write_results(a100(), {result("epilogue.a100", 1.2)});
  const auto data = gather_report(db_, kb31(), "tf32", "");
  ASSERT_TRUE(data.env.has_value());
  EXPECT_EQ(data.env->gpu_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(data.env_chosen_by, "the newest results");
  const std::string p = page();
  EXPECT_NE(p.find("no roofline floor: peak rates are known for sm_90 GPUs only, and these results come from sm_80"),
            std::string::npos);
  EXPECT_EQ(plot(p, "times").find(">roofline floor"), std::string::npos);
}

TEST_F(ReportHtml, NothingStoredIsNotFound) {
  EXPECT_THROW((void)gather_report(db_, kb31(), "tf32", ""), NotFoundError);
  write_typical();
  EXPECT_THROW((void)gather_report(db_, kb31(), "fp32", ""), NotFoundError);
  EXPECT_THROW((void)gather_report(db_, kb31(), "tf32", "A100"), NotFoundError);
}

TEST(ReportFigures, RooflineOfKernelbench31) {
  // 299.6 GFLOP at 495 TFLOP/s = 0.605 ms beats 1.577 GB at 4250 GB/s = 0.371 ms.
  const auto r = roofline_floor(kb31(), h200(), "tf32", 4250.0);
  ASSERT_TRUE(r.ms.has_value());
  EXPECT_NEAR(*r.ms, 0.6053, 1e-3);
  EXPECT_NEAR(r.bytes, (128.0 * 64 * 128 * 128 + 128.0 * 128 * 126 * 126) * 4, 1);
  const auto fp32 = roofline_floor(kb31(), h200(), "fp32", 4250.0);
  EXPECT_NEAR(*fp32.ms, 0.6053 * 495 / 67, 1e-2);
  auto half = h200();
  half.sm_count = 66;  // half the SMs, half the peak
  EXPECT_NEAR(*roofline_floor(kb31(), half, "tf32", 4250.0).ms, 2 * 0.6053, 2e-3);
  EXPECT_FALSE(roofline_floor(kb31(), a100(), "tf32", 4250.0).ms.has_value());
  EXPECT_FALSE(roofline_floor(kb31(), std::nullopt, "tf32", 4250.0).ms.has_value());
  // Without a measured copy bandwidth: the compute term alone, said so.
  const auto compute = roofline_floor(kb31(), h200(), "tf32", std::nullopt);
  EXPECT_NEAR(*compute.ms, 0.6053, 1e-3);
  EXPECT_NE(compute.note.find("compute only"), std::string::npos);
}

TEST(ReportSvg, EscapingAndScales) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("a\nb\x1b[2Jc"), "a b?c");
  EXPECT_EQ(html_excerpt(std::string(500, '<'), 10).size(), 7 * 4 + 3u);
  const auto s = svg::nice_scale(4.4);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_EQ(s.ticks.size(), 6u);
  EXPECT_DOUBLE_EQ(svg::nice_scale(0).max, 1);
  EXPECT_DOUBLE_EQ(svg::nice_scale(std::numeric_limits<double>::quiet_NaN()).max, 1);
  EXPECT_LE(svg::nice_scale(1e300).ticks.size(), 21u);
  EXPECT_TRUE(std::isfinite(svg::nice_scale(std::numeric_limits<double>::max()).max));
  EXPECT_EQ(svg::format_number(7.5, 2.5), "7.5");
  EXPECT_EQ(svg::format_number(10, 2.5), "10.0");
  EXPECT_EQ(svg::format_number(0.4, 0.2), "0.4");
  EXPECT_EQ(svg::format_number(4000, 1000), "4000");
}

TEST(ReportSvg, BarsAreBoundedAndColorsChecked) {
  svg::Chart c;
  c.id = "x";
  for (int i = 0; i < 1000; ++i) {
    svg::Bar b;
    b.label = std::string(1000, 'n');
    b.value = 1.0 * i;
    b.color = "red\"/>";
    c.bars.push_back(b);
  }
  const std::string h = svg::horizontal_bars(c);
  EXPECT_EQ(bars(h), svg::kMaxBars);
  EXPECT_EQ(count(h, "fill=\"red"), 0u);
  EXPECT_EQ(count(h, std::string(100, 'n')), 0u);  // labels cut
  EXPECT_EQ(bars(svg::columns(c)), svg::kMaxBars);
}

// --- the command line ---------------------------------------------------------------------

using fusetune::testing::run;

TEST(ReportCli, NothingStoredExits4WithOneLine) {
  TempDir dir("ft-report-cli");
  const std::string db = (dir.path() / "empty.db").string();
  { (void)db::Database::open(db, db::OpenOptions{.load_shipped = false}); }
  const auto r = run("report --preset kernelbench-31 --db " + db + " -o " + (dir.path() / "r.html").string());
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(fusetune::testing::lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("no tf32 results stored for conv2d(n=128"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.html"));
}

TEST(ReportCli, BadInputExits2) {
  EXPECT_EQ(run("report 'conv2d(n=1' --db /nonexistent-dir/x.db").code, 2);
  EXPECT_EQ(run("report --preset kernelbench-31 --math fp16 --db /nonexistent-dir/x.db").code, 2);
  EXPECT_EQ(run("report --preset nope --db /nonexistent-dir/x.db").code, 2);
  EXPECT_EQ(run("report --preset kernelbench-31 -o '' --db /nonexistent-dir/x.db").code, 2);
}

// The timed, verified solutions of a preset's tf32 records shipped in tuning_db/shipped/: one bar
// each in the times plot (up to its cap). The shipped tunes are guided (they measure a share of
// the space), so the count comes from the file, not from a constant.
size_t shipped_timed_solutions(const std::string& preset) {
  const std::string key = spec::problem_key(spec::resolve_problem(std::nullopt, preset));
  std::ifstream in(std::filesystem::path(FUSETUNE_SOURCE_DIR) / "tuning_db" / "shipped" / "h200.jsonl");
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("table", "") != "results" || j.value("problem", "") != key || j.value("math", "") != "tf32") continue;
    const auto* c = codegen::candidate_info(j.value("candidate", ""));
    n += c && c->role == codegen::Role::solution && j.value("status", "") == "ok" && j["time_median_ms"].is_number();
  }
  return n;
}

TEST(ReportCli, ShippedRecordsMakeAPageForBothPresets) {
  TempDir dir("ft-report-cli");
  const std::string env = "FUSETUNE_DB=" + (dir.path() / "fresh.db").string() + " ";
  for (const std::string preset : {"kernelbench-31", "kernelbench-32"}) {
    const auto file = dir.path() / (preset + ".html");
    const auto r = run("report --preset " + preset + " -o " + file.string(), env);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // results only on stdout; what was written goes to stderr
    EXPECT_EQ(fusetune::testing::lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("fusetune: wrote " + file.string()), std::string::npos) << r.err;
    const std::string p = db::testing::read_bytes(file);
    const size_t solutions = shipped_timed_solutions(preset);
    ASSERT_GE(solutions, 10u) << preset << ": the shipped records hold too few timed solutions for a page";
    EXPECT_EQ(bars(plot(p, "times")), std::min(solutions, kMaxTimeBars)) << preset;
    EXPECT_EQ(count(plot(p, "times"), "class=\"ref\""), 4u) << preset;
    EXPECT_GE(bars(plot(p, "bandwidth")), solutions) << preset;  // every timed solution has its GB/s
    EXPECT_GE(count(p, "data-plot=\"param\""), 5u) << preset;
  }
  // -o - writes the page to standard output and nothing else.
  const auto r = run("report --preset kernelbench-31 --math fp32 -o -", env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(r.out.find("<td>fp32</td>"), std::string::npos);
}

}  // namespace
}  // namespace fusetune::report
