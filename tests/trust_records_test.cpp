// Records from a database or a dump are untrusted: what passes is exactly what this fusetune
// writes itself; a changed field, a name carrying code, a changed source or binary is refused
// with one line naming it. GPU-free (NVRTC compiles).
#include <gtest/gtest.h>

// GCC 12 at -O3 reports a false -Wrestrict inside std::string's assign of a short literal
// (GCC bug 105329).
#pragma GCC diagnostic ignored "-Wrestrict"

#include <functional>
#include <nlohmann/json.hpp>

#include "codegen/cudnn_engine.hpp"
#include "templates/embedded_templates.hpp"
#include "db/database.hpp"
#include "export_test_winners.hpp"
#include "trust/database_check.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"

namespace fusetune::trust {
namespace {

using exporter::testing::pick;
using exporter::testing::preset;
using exporter::testing::variants_of;
using exporter::testing::winner_for;
using Verdict = Provenance::Verdict;

// A winner as this fusetune's tuner would store it: its own templates, compiled by NVRTC.
db::WinnerRecord own_winner(const std::string& prefix = "epilogue.nhwc", const std::string& math = "tf32") {
  const auto problem = preset("kernelbench-31");
  auto w = winner_for(problem, pick(variants_of(problem), prefix), true, math);
  w.env.templates_hash = templates::templates_hash();
  return w;
}

// The record with its variant JSON edited by `edit`.
db::WinnerRecord with_variant(db::WinnerRecord w, const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(w.variant_json);
  edit(j);
  w.variant_json = j.dump();
  return w;
}

TEST(TrustRecords, OwnWinnerPassesEveryCheck) {
  for (const auto& [prefix, math] : {std::pair{"epilogue.nhwc", "tf32"}, {"epilogue.nchw", "fp32"}, {"unfused", "tf32"}}) {
    const auto w = own_winner(prefix, math);
    EXPECT_EQ(check_winner(w), "") << w.variant_name;
    const auto p = check_provenance(w);
    EXPECT_TRUE(p.traced()) << w.variant_name << ": " << p.why;
  }
}

// A cudnn-fused winner is a generated template pinned to an engine configuration the GPU
// listed: traced when the template is this fusetune's; another configuration name on the same
// template is traced too (cuDNN builds it or refuses it), a changed template is forged.
TEST(TrustRecords, CudnnFusedWinnersAreTracedThroughTheirTemplate) {
  const auto problem = preset("kernelbench-32");
  const codegen::Variant t = pick(variants_of(problem), "cudnn-fused.x-nhwc");
  auto w = winner_for(problem, codegen::with_engine(t, {4, {{12, 2}}}), true, "tf32");
  w.env.templates_hash = templates::templates_hash();
  EXPECT_EQ(w.variant_name, "cudnn-fused.x-nhwc.eng4.k12_2");
  EXPECT_EQ(check_winner(w), "");
  auto p = check_provenance(w);
  EXPECT_TRUE(p.traced()) << p.why;
  const auto forged = with_variant(w, [](nlohmann::json& j) { j["plan"][2]["epilogue"] = false; });
  p = check_provenance(forged);
  EXPECT_EQ(p.verdict, Verdict::forged) << p.why;
}

TEST(TrustRecords, ShippedWinnersAreTraced) {
  // What every user's database starts with: exportable and runnable without --trust.
  const auto db = db::Database::open(":memory:");
  const auto winners = db.winners(std::nullopt, "", std::nullopt);
  ASSERT_FALSE(winners.empty());
  for (const auto& w : winners) {
    EXPECT_EQ(check_winner(w), "") << w.variant_name;
    const auto p = check_provenance(w);
    EXPECT_TRUE(p.traced()) << w.variant_name << ": " << p.why;
  }
  EXPECT_EQ(check_records(db, true), "");
}

TEST(TrustRecords, KernelNameCarryingCodeIsRefusedEvenTrusted) {
  // A kernel name is pasted into exported C++ and Python: it must be an identifier, whatever
  // --trust says (check_winner runs before and regardless of provenance).
  const std::string evil = "x\nimport os;os.system('touch /tmp/PWNED')\n#";
  auto w = with_variant(own_winner(), [&](nlohmann::json& j) {
    for (auto& step : j.at("plan"))
      if (step.contains("kernel")) step["kernel"] = evil;
  });
  const std::string why = check_winner(w);
  EXPECT_NE(why, "");
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;

  auto named = own_winner();
  named.variant_name = evil;
  EXPECT_NE(check_winner(named), "");
}

TEST(TrustRecords, HostCodeInSourceIsForged) {
  // A source that still compiles and keeps its kernel, plus code of someone else's: the
  // record's own fields are sound, but it is not what this fusetune generates.
  auto w = with_variant(own_winner(), [](nlohmann::json& j) {
    auto source = j.at("source").get<std::string>();
    source.append("\n#include <cstdlib>\nstatic int pwn = std::system(\"touch /tmp/PWNED\");\n");
    j["source"] = source;
  });
  EXPECT_EQ(check_winner(w), "");
  const auto p = check_provenance(w);
  EXPECT_EQ(p.verdict, Verdict::forged) << p.why;
  EXPECT_NE(p.why.find("source or plan"), std::string::npos) << p.why;
}

TEST(TrustRecords, ChangedBinaryIsForged) {
  auto w = own_winner();
  w.cubin[w.cubin.size() / 2] ^= 0x01;
  auto p = check_provenance(w);
  EXPECT_EQ(p.verdict, Verdict::forged) << p.why;
  EXPECT_NE(p.why.find("CUBIN"), std::string::npos) << p.why;

  w = own_winner();
  w.ptx.append("\n// extra");
  EXPECT_EQ(check_provenance(w).verdict, Verdict::forged);

  w = own_winner();
  w.compile_options.append(" --extra-device-vectorization");
  p = check_provenance(w);
  EXPECT_EQ(p.verdict, Verdict::forged) << p.why;
  EXPECT_NE(p.why.find("compile options"), std::string::npos) << p.why;
}

TEST(TrustRecords, OtherTemplatesOrNvrtcAreUntraceable) {
  // Other templates whose code for this variant is what this fusetune generates: still its own
  // (a change to another design's template leaves this one's source as it was).
  auto w = own_winner();
  w.env.templates_hash = "0123456789abcdef";
  auto p = check_provenance(w);
  EXPECT_TRUE(p.traced()) << p.why;
  // ... and whose code differs: an older template's honest output cannot be told from a forgery.
  w = with_variant(own_winner(), [](nlohmann::json& j) { j["source"] = j.at("source").get<std::string>() + "\n// v0\n"; });
  w.env.templates_hash = "0123456789abcdef";
  p = check_provenance(w);
  EXPECT_EQ(p.verdict, Verdict::untraceable) << p.why;
  EXPECT_NE(p.why.find("other kernel templates"), std::string::npos) << p.why;
  EXPECT_NE(p.why.find("source or plan"), std::string::npos) << p.why;
  // A binary that is not NVRTC's output of the unchanged source is forged whatever the hash says.
  w = own_winner();
  w.env.templates_hash = "0123456789abcdef";
  w.cubin[w.cubin.size() / 2] ^= 0x01;
  EXPECT_EQ(check_provenance(w).verdict, Verdict::forged);

  w = own_winner();
  w.env.nvrtc = "12.4";
  p = check_provenance(w);
  EXPECT_EQ(p.verdict, Verdict::untraceable);
  EXPECT_NE(p.why.find("NVRTC 12.4"), std::string::npos) << p.why;
}

TEST(TrustRecords, FieldsOutsideWhatFusetuneWritesAreNamed) {
  struct Case {
    const char* what;
    std::function<void(db::WinnerRecord&)> edit;
  };
  const std::vector<Case> cases = {
      {"GPU name", [](auto& w) { w.env.gpu_name = "H200\x1b[2J"; }},
      {"compute capability", [](auto& w) { w.env.cc_major = 99; }},
      {"NVRTC", [](auto& w) { w.env.nvrtc = "13.0; rm -rf ~"; }},
      {"problem spec", [](auto& w) { w.canonical = "conv2d(n=1"; }},
      {"problem key", [](auto& w) { w.problem_key = "0000000000000000"; }},
      {"math", [](auto& w) { w.math = "fp64"; }},
      {"time", [](auto& w) { w.time_median_ms = -1; }},
      {"cuDNN algorithm", [](auto& w) { w.cudnn_algo = "a\nb"; }},
      {"cuDNN algorithm choices", [](auto& w) { w.conv_choices = "{not json"; }},
      {"not JSON", [](auto& w) { w.variant_json = "{"; }},
      {"nests deeper", [](auto& w) { w.variant_json = std::string(100000, '[') + std::string(100000, ']'); }},
      {"not the one the record names", [](auto& w) { w.variant_name = "epilogue.other"; }},
      // Issue 42: free text in the date went into export headers, JSON and CSV.
      {"date is not an ISO 8601 UTC time", [](auto& w) { w.created_at = "2026-12-04 shipped by NVIDIA"; }},
      {"date is not an ISO 8601 UTC time", [](auto& w) { w.created_at = "2026-12-04T15:53:17.437Z (NVIDIA)"; }},
  };
  for (const auto& c : cases) {
    auto w = own_winner();
    c.edit(w);
    const std::string why = check_winner(w);
    EXPECT_NE(why.find(c.what), std::string::npos) << c.what << ": '" << why << "'";
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

TEST(TrustRecords, DatesAreWhatFusetuneWrites) {
  for (const char* ok : {"2026-12-04T15:53:17.437Z", "2026-12-04T15:53:17Z", ""}) {
    auto w = own_winner();
    w.created_at = ok;
    EXPECT_EQ(check_winner(w), "") << ok;
  }
}

TEST(TrustRecords, DatabaseCheckNamesTheRecord) {
  auto db = db::Database::open(":memory:", db::OpenOptions{.load_shipped = false});
  auto w = with_variant(own_winner(), [](nlohmann::json& j) {
    auto source = j.at("source").get<std::string>();
    source.push_back('\n');
    j["source"] = source;
  });
  db.write_winner(w);
  const std::string why = check_records(db, true);
  EXPECT_NE(why.find("winner 1 of 1"), std::string::npos) << why;
  EXPECT_NE(why.find("--trust keeps it anyway"), std::string::npos) << why;
  EXPECT_EQ(check_records(db, false), "");  // trusted: the code is the user's call
}

}  // namespace
}  // namespace fusetune::trust
