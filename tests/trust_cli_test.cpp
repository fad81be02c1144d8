// Dumps and databases from elsewhere, through the command line: a record carrying code is
// refused with one line and exit 2 and the user's database stays as it was; --trust lets the
// user keep code fusetune cannot trace to itself, never a record that is malformed. GPU-free.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "templates/embedded_templates.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune {
namespace {

namespace fs = std::filesystem;
using testing::lines;
using testing::run;

class TrustCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("trust_cli." + std::to_string(getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The shipped records, as every database starts: the material a forger starts from.
    const auto r = run("db dump --db " + path("source.db") + " -o " + path("shipped.jsonl"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream f(path("shipped.jsonl"));
    for (std::string line; std::getline(f, line);) shipped_.push_back(line);
    // A forger claims this fusetune's kernel templates (the shipped records may be stamped with
    // an earlier version's whose code for them is unchanged, which is traced all the same).
    for (const auto& line : shipped_) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("table", "") == "environments") shipped_hash_ = j.at("templates_hash").get<std::string>();
    }
    ASSERT_FALSE(shipped_hash_.empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A dump whose kernelbench-31 tf32 winner is `edit`ed and presented as newer than shipped, so
  // that it would replace the shipped one.
  // With claim_templates, every record also claims this fusetune's kernel templates (a separate
  // environment then, beside the shipped one), so its changed code is forged, not untraceable.
  std::string forged_dump(const std::string& name, const std::function<void(nlohmann::json&)>& edit,
                          bool claim_templates = false) const {
    std::ofstream out(path(name));
    bool edited = false;
    for (std::string line : shipped_) {
      // (The shipped records may carry this fusetune's hash already: the search moves on past
      // each replacement.)
      const std::string ours = templates::templates_hash();
      for (size_t at = line.find(shipped_hash_); claim_templates && at != std::string::npos;
           at = line.find(shipped_hash_, at + ours.size()))
        line.replace(at, shipped_hash_.size(), ours);
      auto j = nlohmann::json::parse(line);
      if (!edited && j.value("table", "") == "winners" && j.value("math", "") == "tf32" &&
          j.value("problem", "") == key31_) {
        auto variant = nlohmann::json::parse(j.at("variant_json").get<std::string>());
        edit(variant);
        j["variant_json"] = variant.dump();
        j["shipped"] = 0;
        j["created_at"] = "2026-12-01T00:00:00.000Z";
        edited = true;
      }
      out << j.dump() << "\n";
    }
    EXPECT_TRUE(edited) << "no kernelbench-31 tf32 winner among the shipped records";
    return path(name);
  }

  std::string dump_of(const std::string& db) const {
    const auto r = run("db dump --db " + db);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  }

  fs::path dir_;
  std::vector<std::string> shipped_;
  std::string shipped_hash_;
  const std::string key31_ = spec::problem_key(spec::parse(*spec::preset_spec("kernelbench-31")));
};

// A source with host code of someone else's appended: it still compiles and keeps its kernel.
void add_host_code(nlohmann::json& v) {
  auto source = v.at("source").get<std::string>();
  source.append("\n#include <cstdlib>\nstatic int pwn = std::system(\"touch PWNED\");\n");
  v["source"] = source;
}

TEST_F(TrustCli, KernelNameCarryingCodeIsRefusedEvenTrusted) {
  const std::string evil = "x\nimport os;os.system('touch " + path("PWNED") + "')\n#";
  const std::string dump = forged_dump("evil.jsonl", [&](nlohmann::json& v) {
    for (auto& step : v.at("plan"))
      if (step.contains("kernel")) step["kernel"] = evil;
  });
  const std::string db = path("user.db");
  const std::string before = dump_of(db);
  for (const char* trust : {"", " --trust"}) {
    const auto r = run("db import " + dump + " --db " + db + trust);
    EXPECT_EQ(r.code, 2) << trust << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  }
  EXPECT_EQ(dump_of(db), before);
  // Nothing of it reaches an export either.
  const auto e = run("export --preset kernelbench-31 --format torch --db " + db + " -o " + path("k.py"));
  ASSERT_EQ(e.code, 0) << e.err;
  std::ifstream f(path("k.py"));
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  EXPECT_EQ(text.find("PWNED"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("PWNED")));
}

TEST_F(TrustCli, ForeignSourceNeedsTrustToImportAndToExport) {
  const std::string dump = forged_dump("host.jsonl", add_host_code);
  const std::string db = path("user.db");
  const std::string before = dump_of(db);

  auto r = run("db import " + dump + " --db " + db);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not what this fusetune generates"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--trust"), std::string::npos) << r.err;
  EXPECT_EQ(dump_of(db), before);

  r = run("db import " + dump + " --db " + db + " --trust");
  ASSERT_EQ(r.code, 0) << r.err;

  // In the database now, but an export still asks.
  r = run("export --preset kernelbench-31 --format cu --db " + db + " -o " + path("k.cu"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--trust exports it anyway"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("k.cu")));

  r = run("export --preset kernelbench-31 --format cu --db " + db + " -o " + path("k.cu") + " --trust");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream f(path("k.cu"));
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("touch PWNED"), std::string::npos);  // the user's explicit choice
}

TEST_F(TrustCli, MergeChecksTheOtherDatabaseFirst) {
  const std::string other = path("other.db");
  auto r = run("db import " + forged_dump("host.jsonl", add_host_code) + " --db " + other + " --trust");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string other_before = dump_of(other);

  const std::string db = path("user.db");
  const std::string before = dump_of(db);
  r = run("db merge " + other + " --db " + db);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  EXPECT_EQ(dump_of(db), before);
  EXPECT_EQ(dump_of(other), other_before);  // a file fusetune reads is never changed

  r = run("db merge " + other + " --db " + db + " --trust");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(dump_of(db), before);
}

TEST_F(TrustCli, SmokeFailsAWinnerWhoseCodeChanged) {
  // A trusted import is still not run or compiled by smoke as if it were fusetune's own.
  const std::string db = path("user.db");
  auto r = run("db import " + forged_dump("host.jsonl", add_host_code, true) + " --db " + db + " --trust");
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("smoke --db " + db + " --checks exports --json " + path("smoke.json"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::ifstream f(path("smoke.json"));
  const auto j = nlohmann::json::parse(f);
  int refused = 0;
  for (const auto& c : j.at("checks")) {
    if (c.at("outcome") != "failed") continue;
    EXPECT_NE(c.at("name").get<std::string>().find(key31_), std::string::npos) << c.dump();
    EXPECT_NE(c.at("detail").get<std::string>().find("refused"), std::string::npos) << c.dump();
    ++refused;
  }
  EXPECT_EQ(refused, 1) << j.dump(2);
}

TEST_F(TrustCli, VerifyNamesAWinnerWhoseCodeChanged) {
  const std::string db = path("user.db");
  auto r = run("db verify --db " + db);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = run("db import " + forged_dump("host.jsonl", add_host_code, true) + " --db " + db + " --trust");
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("db verify --db " + db);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("problem: winner " + key31_ + " tf32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not what this fusetune generates"), std::string::npos) << r.out;
}

TEST_F(TrustCli, FreeTextStaysInComments) {
  // A record's free text (here the cuDNN algorithm label) is not code: it is exported, but only
  // inside comments, and cannot end a comment line with a continuation.
  const std::string db = path("user.db");
  {
    std::ofstream out(path("label.jsonl"));
    for (const auto& line : shipped_) {
      auto j = nlohmann::json::parse(line);
      if (j.value("table", "") == "winners") {
        j["cudnn_algo"] = "*/ int injected = 1; /* \"\"\" ''' \\";
        j["shipped"] = 0;
        j["created_at"] = "2026-12-01T00:00:00.000Z";
      }
      out << j.dump() << "\n";
    }
  }
  auto r = run("db import " + path("label.jsonl") + " --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& [format, comment] : {std::pair{"cu", "//"}, {"torch", "#"}}) {
    const std::string out = path(std::string("k.") + format);
    r = run("export --preset kernelbench-31 --format " + std::string(format) + " --db " + db + " -o " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream f(out);
    int seen = 0;
    for (std::string line; std::getline(f, line);) {
      if (line.find("injected") == std::string::npos) continue;
      ++seen;
      EXPECT_EQ(line.rfind(comment, 0), 0u) << format << ": " << line;
      EXPECT_NE(line.back(), '\\') << format << ": " << line;
    }
    EXPECT_GT(seen, 0) << format;
  }
}

}  // namespace
}  // namespace fusetune
