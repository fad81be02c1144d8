// Moving records between machines: dump, import, merge, verify.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "db/connection.hpp"
#include "db/database.hpp"
#include "db/dump.hpp"
#include "db/schema.hpp"
#include "db_test_support.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::db {
namespace {

using testing::a100;
using testing::h200;
using testing::result;
namespace fs = std::filesystem;

const std::string kKey = "ca98e8d32aaaaf30";

std::string all_bytes() {
  std::string s;
  for (int i = 0; i < 256; ++i) s += static_cast<char>(i);
  return s;
}

// Every kind of value the dump must carry: NaN (NULL), infinities, invalid UTF-8, control
// characters, a CUBIN with every byte value, shipped and measured winners.
void fill(Database& db) {
  auto odd = result("odd", 1.0);
  odd.max_abs = std::numeric_limits<double>::quiet_NaN();
  odd.max_rel = std::numeric_limits<double>::infinity();
  odd.rel_l2 = -std::numeric_limits<double>::infinity();
  odd.log_excerpt = std::string("bad utf-8: \xff\xfe, nul: \0, tab\t\"q\"\n", 31);
  odd.reason = "caf\xc3\xa9 \xe2\x9c\x93";
  odd.time_min_ms = 0.1 + 0.2;  // a value with a long shortest representation
  db.write_results(h200(), {result("v1", 1.5), odd, result("unfused", 4.4, "unfused")});
  db.write_results(a100(), {result("v1", 2.5, "epilogue", "a73ebae46f0947b2", "fp32")});
  auto w = testing::winner(h200(), "v1", 1.5);
  w.cubin = all_bytes();
  db.write_winner(w);
  auto s = testing::winner(a100(), "v1", 2.5, "a73ebae46f0947b2", "fp32");
  s.shipped = true;
  s.cubin.clear();
  db.write_winner(s);
}

class DbDump : public ::testing::Test {
 protected:
  // Without tuning_db/shipped's records unless asked, so the test's own records are all there is.
  Database fresh(const std::string& name, bool load_shipped = false) {
    return Database::open((dir_.path() / name).string(), OpenOptions{.load_shipped = load_shipped});
  }
  TempDir dir_{"ft-db"};
};

TEST_F(DbDump, ImportOfADumpDumpsTheSameBytes) {
  auto a = fresh("a.db", true);  // shipped records too, where there are any
  fill(a);
  const std::string text = a.dump();
  auto b = fresh("b.db", true);
  b.import_dump(text);
  // Issue 42: only fusetune's own files make a winner "shipped": the records of
  // tuning_db/shipped keep the mark, fill()'s made-up shipped winner (on the A100) loses it.
  std::string expected;
  for (size_t at = 0; at < text.size();) {
    const size_t eol = text.find('\n', at);
    std::string line = text.substr(at, eol - at + 1);
    at = eol + 1;
    if (line.find("\"table\":\"winners\"") != std::string::npos && line.find("A100") != std::string::npos)
      line.replace(line.find("\"shipped\":1"), 11, "\"shipped\":0");
    expected += line;
  }
  ASSERT_NE(expected, text);
  EXPECT_EQ(b.dump(), expected);
  EXPECT_EQ(expected.find("\"shipped\":1") != std::string::npos, text.find("H200\",\"cc_major") != std::string::npos);
  const auto w = b.winner(kKey, "tf32", h200().fingerprint());
  ASSERT_TRUE(w);
  EXPECT_EQ(w->cubin, all_bytes());
  EXPECT_TRUE(b.verify().ok);
  // Importing the same dump again changes nothing.
  b.import_dump(text);
  EXPECT_EQ(b.dump(), expected);
}

TEST_F(DbDump, DumpIsJsonLinesWithAVersionedHeader) {
  auto a = fresh("a.db");
  fill(a);
  const std::string text = a.dump();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "{\"fusetune_dump\":1,\"schema_version\":" + std::to_string(kSchemaVersion) + "}");
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("{\"table\":\"environments\",\"fingerprint\":\"gpu=NVIDIA H200;"), std::string::npos);
  EXPECT_NE(text.find("\"env\":\"gpu=NVIDIA A100"), std::string::npos);
  EXPECT_NE(text.find("\"problem\":\"" + kKey + "\""), std::string::npos);
  EXPECT_NE(text.find("\"cubin\":{\"base64\":\"AAECAwQF"), std::string::npos);
  EXPECT_NE(text.find("\"log_excerpt\":{\"text_base64\":"), std::string::npos);
  EXPECT_NE(text.find("\"max_abs\":null,\"max_rel\":{\"real\":\"inf\"},\"rel_l2\":{\"real\":\"-inf\"}"),
            std::string::npos);
  EXPECT_NE(text.find("\"reason\":\"caf\xc3\xa9 \xe2\x9c\x93\""), std::string::npos);
  EXPECT_EQ(text.find("\"id\":"), std::string::npos) << "row ids are local to one file";
}

TEST_F(DbDump, ImportKeepsTheNewerRecord) {
  auto ours = fresh("ours.db");
  auto mine = result("v1", 1.0);
  mine.created_at = "2026-05-01T00:00:00.000Z";
  auto kept = result("v2", 1.0);
  kept.created_at = "2026-05-01T00:00:00.000Z";
  ours.write_results(h200(), {mine, kept});

  auto theirs = fresh("theirs.db");
  auto newer = result("v1", 0.5);
  newer.created_at = "2026-06-01T00:00:00.000Z";
  auto older = result("v2", 0.5);
  older.created_at = "2026-04-01T00:00:00.000Z";
  theirs.write_results(h200(), {newer, older, result("v3", 0.7)});
  ours.import_dump(theirs.dump());

  std::map<std::string, double> got;
  for (const auto& r : ours.results(kKey, "", std::nullopt)) got[r.variant_name] = r.time_median_ms;
  EXPECT_EQ(got, (std::map<std::string, double>{{"v1", 0.5}, {"v2", 1.0}, {"v3", 0.7}}));
}

TEST_F(DbDump, MalformedDumpsAreRefusedNamingTheLineAndChangeNothing) {
  auto a = fresh("a.db");
  fill(a);
  const std::string before = a.dump();
  const std::string header = "{\"fusetune_dump\":1,\"schema_version\":1}\n";
  const std::string env_line = before.substr(before.find("{\"table\":\"environments\""),
                                             before.find('\n', before.find("{\"table\":\"environments\"")) -
                                                 before.find("{\"table\":\"environments\"") + 1);
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty"},
      {"{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"c\"}\n", "line 1: not a fusetune dump"},
      {"{\"fusetune_dump\":1,\"schema_version\":99}\n", "schema version 99"},
      {header + "not json\n", "line 2: not JSON"},
      // A number past a double's range is nlohmann's out_of_range, not its parse_error (fuzz_dump).
      {header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":1.5e4845}\n",
       "line 2: not JSON (number overflow parsing '1.5e4845')"},
      {header + "{\"table\":\"users\"}\n", "line 2: unknown table 'users'"},
      {header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"c\",\"colour\":1}\n", "no field 'colour'"},
      {header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"c\",\"id\":5}\n", "no field 'id'"},
      {header + "{\"table\":\"problems\",\"key\":\"k\"}\n", "line 2: "},  // canonical is NOT NULL
      {header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":[1]}\n", "wrong kind"},
      // Issue 42: numbers are JSON numbers (a string "NaN" went in as text and read back as 0 ms),
      // text is a string.
      {header + "{\"table\":\"results\",\"time_median_ms\":\"NaN\",\"env\":\"gpu=nowhere\"}\n",
       "line 2: 'time_median_ms' has a value of the wrong kind: a string (REAL column: a JSON number)"},
      {header + "{\"table\":\"results\",\"time_count\":1.5,\"env\":\"gpu=nowhere\"}\n",
       "line 2: 'time_count' has a value of the wrong kind: a number (INTEGER column"},
      {header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":5}\n",
       "line 2: 'canonical' has a value of the wrong kind: a number (TEXT column: a string)"},
      {header + env_line + "{\"table\":\"results\",\"env\":\"gpu=nowhere\",\"problem\":\"k\"}\n",
       "line 3: environments 'gpu=nowhere' is neither in the database"},
      {header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"c\"}\n"
                "{\"table\":\"problems\",\"key\":\"k2\",\"canonical\":{\"base64\":\"!!\"}}\n",
       "line 3: 'canonical' is not valid base64"},
  };
  for (const auto& [text, fault] : cases) {
    try {
      a.import_dump(text);
      ADD_FAILURE() << "imported: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fault), std::string::npos) << e.what() << "\nwanted: " << fault;
    }
    EXPECT_EQ(a.dump(), before) << "a refused import left records behind: " << text;
  }
}

// A line nested too deep or too long is refused before the JSON parser walks it: one short
// message, no crash (100,000 levels used to overflow the stack, 30,000 to print a 60 KB
// message), nothing imported. Brackets inside strings are text and do not count.
TEST_F(DbDump, DeepOrHugeLinesAreRefusedBeforeParsingInOneShortLine) {
  auto a = fresh("a.db");
  fill(a);
  const std::string before = a.dump();
  const std::string header = "{\"fusetune_dump\":1,\"schema_version\":2}\n";
  const auto nested = [](size_t levels, char open, char close) {
    std::string v;
    for (size_t i = 0; i < levels; ++i) v += open == '[' ? "[" : "{\"a\":";
    v += "1";
    v += std::string(levels, close);
    return v;
  };
  const std::pair<std::string, std::string> cases[] = {
      {nested(100000, '[', ']'), "dump line 2: nested deeper than 16 levels"},
      {nested(30000, '[', ']'), "dump line 2: nested deeper than 16 levels"},
      {nested(30000, '{', '}'), "dump line 2: nested deeper than 16 levels"},
      {nested(16, '[', ']'), "dump line 2: nested deeper than 16 levels"},  // 16 inside the row's own object
      {nested(15, '[', ']'), "dump line 2: 'key' has a value of the wrong kind: an array"},
  };
  for (const auto& [value, fault] : cases) {
    const std::string text = header + "{\"table\":\"problems\",\"key\":" + value + ",\"canonical\":\"c\"}\n";
    try {
      a.import_dump(text);
      ADD_FAILURE() << "imported " << value.size() << " bytes of nesting";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what, fault);
      EXPECT_LT(what.size(), 200u);
    }
    EXPECT_EQ(a.dump(), before);
  }
  try {
    a.import_dump(header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"" +
                  std::string(kMaxDumpLineBytes, 'x') + "\"}\n");
    ADD_FAILURE() << "imported a line of more than 64 MiB";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("dump line 2: longer than 64 MiB (", 0), 0u) << e.what();
  }
  EXPECT_EQ(a.dump(), before);

  // Brackets in strings are text: 1,000 of them import.
  const std::string brackets(1000, '[');
  a.import_dump(header + "{\"table\":\"problems\",\"key\":\"k\\\"[{\",\"canonical\":\"" + brackets + "\"}\n");
  EXPECT_NE(a.dump().find(brackets), std::string::npos);
}

// Whatever a malformed line holds, its message quotes at most a few dozen characters of it, and
// nothing that would act on a terminal.
TEST_F(DbDump, MessagesQuoteLittleOfTheLineAndNoControls) {
  auto a = fresh("a.db");
  const std::string header = "{\"fusetune_dump\":1,\"schema_version\":2}\n";
  const std::string huge(100000, 'x');
  const std::string cases[] = {
      header + "{\"table\":\"problems\",\"key\":\"" + huge,                            // unterminated string
      header + "{\"table\":\"problems\",\"key\":" + huge + "}",                         // a bad literal
      header + "{\"table\":\"" + huge + "\"}",                                           // unknown table
      header + "{\"table\":\"problems\",\"" + huge + "\":1}",                            // unknown field
      header + "{\"table\":\"problems\",\"key\":[\"" + huge + "\"],\"canonical\":\"c\"}",  // wrong kind
      header + "{\"table\":\"results\",\"env\":\"" + huge + "\",\"problem\":\"k\"}",       // missing parent
      header + "{\"table\":\"\\u001b]0;pwned\\u0007\\n\"}",                                // controls
      header + "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":{\"\\u001b[2J" + huge + "\":\"x\"}}",
  };
  for (const auto& text : cases) {
    try {
      a.import_dump(text);
      ADD_FAILURE() << "imported";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_LT(what.size(), 300u) << what;
      EXPECT_EQ(what.rfind("dump line 2: ", 0), 0u) << what;
      for (const char c : what) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << what;
    }
  }
}

// A write the database itself refuses (here: a read-only connection; in life a read-only file,
// a full disk, another process's lock) is not the dump line's fault: the message names the
// database and SQLite's reason, not "dump line N", and carries no source location.
TEST_F(DbDump, AWriteTheDatabaseRefusesIsNotBlamedOnTheLine) {
  const fs::path p = dir_.path() / "ro.db";
  { (void)fresh("ro.db"); }
  const Connection ro = Connection::open(p.string(), SQLITE_OPEN_READONLY);
  try {
    import_dump(ro, "{\"fusetune_dump\":1,\"schema_version\":2}\n"
                    "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"c\"}\n");
    ADD_FAILURE() << "wrote through a read-only connection";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot write the tuning database ", 0), 0u) << what;
    EXPECT_NE(what.find("ro.db: attempt to write a readonly database"), std::string::npos) << what;
    EXPECT_EQ(what.find("dump line"), std::string::npos) << what;
    EXPECT_EQ(what.find(".cpp:"), std::string::npos) << what;
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
  // A constraint the line breaks is still the line's fault, in SQLite's words without the call.
  auto a = fresh("a.db");
  try {
    a.import_dump("{\"fusetune_dump\":1,\"schema_version\":2}\n{\"table\":\"problems\",\"key\":\"k\"}\n");
    ADD_FAILURE() << "imported a problem without its canonical form";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "dump line 2: NOT NULL constraint failed: problems.canonical");
  }
}

TEST_F(DbDump, MergeAddsTheirRecordsKeepsOursAndLeavesTheirFileAlone) {
  auto ours = fresh("ours.db");
  auto mine = result("v1", 1.0);
  mine.created_at = "2026-05-01T00:00:00.000Z";
  ours.write_results(h200(), {mine, result("only-ours", 2.0)});
  auto shipped = testing::winner(a100(), "shipped", 3.0);
  shipped.shipped = true;
  ours.write_winner(shipped);
  ours.write_winner(testing::winner(h200(), "our-winner", 1.0));

  const fs::path their_path = dir_.path() / "theirs.db";
  {
    auto theirs = Database::open(their_path.string(), OpenOptions{.load_shipped = false});
    auto newer = result("v1", 0.5);
    newer.created_at = "2026-06-01T00:00:00.000Z";
    theirs.write_results(h200(), {newer, result("only-theirs", 0.7)});
    theirs.write_winner(testing::winner(a100(), "measured", 2.0));  // beats our shipped one
    // A shipped mark fusetune's own files do not back is cleared on merge (issue 42): this one
    // counts as measured, and older than ours, so ours stays.
    auto old_shipped = testing::winner(h200(), "their-shipped", 0.1);
    old_shipped.shipped = true;
    old_shipped.created_at = "2026-01-01T00:00:00.000Z";
    theirs.write_winner(old_shipped);
    auto claimed = testing::winner(h200(), "claims-shipped", 0.2, kKey, "fp32");
    claimed.shipped = true;
    theirs.write_winner(claimed);
  }
  const std::string their_bytes = testing::read_bytes(their_path);
  ours.merge_from(their_path.string());
  EXPECT_EQ(testing::read_bytes(their_path), their_bytes);

  std::map<std::string, double> got;
  for (const auto& r : ours.results(kKey, "", std::nullopt)) got[r.variant_name] = r.time_median_ms;
  EXPECT_EQ(got, (std::map<std::string, double>{{"v1", 0.5}, {"only-ours", 2.0}, {"only-theirs", 0.7}}));
  EXPECT_EQ(ours.winner(kKey, "tf32", a100().fingerprint())->variant_name, "measured");
  EXPECT_EQ(ours.winner(kKey, "tf32", h200().fingerprint())->variant_name, "our-winner");
  const auto claimed_here = ours.winner(kKey, "fp32", h200().fingerprint());
  ASSERT_TRUE(claimed_here);
  EXPECT_FALSE(claimed_here->shipped) << "a dump's word alone does not make a record shipped with fusetune";
  EXPECT_TRUE(ours.verify().ok);

  const std::string once = ours.dump();
  ours.merge_from(their_path.string());
  EXPECT_EQ(ours.dump(), once) << "merging twice adds nothing";
}

TEST_F(DbDump, MergeGivesTheSameDatabaseInAnyOrder) {
  // Two shards of a sweep wrote the same records at the same millisecond with other figures (and
  // saw the environment at different times): which file is merged first must not matter. Equal
  // times fall to a fixed key: a verified result before a failed one, then the faster; the
  // faster winner, then the name; an environment keeps the time it was first seen.
  const std::string at = "2026-06-01T00:00:00.000Z";
  const auto shard = [&](const std::string& name, double ms, bool failed, const std::string& winner_name) {
    auto db = fresh(name);
    auto r = result("v1", ms);
    r.created_at = at;
    if (failed) r.status = "wrong_result";
    auto other = result("v2", ms * 2);
    other.created_at = at;
    db.write_results(h200(), {r, other});
    auto w = testing::winner(h200(), winner_name, ms);
    w.created_at = at;
    db.write_winner(w);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the environments' times differ
  };
  shard("a.db", 1.0, false, "zeta");
  shard("b.db", 0.9, true, "alpha");
  shard("c.db", 1.1, false, "alpha");
  const std::vector<std::string> files = {(dir_.path() / "a.db").string(), (dir_.path() / "b.db").string(),
                                          (dir_.path() / "c.db").string()};
  auto forward = fresh("forward.db");
  forward.merge_from(files);
  auto backward = fresh("backward.db");
  for (auto it = files.rbegin(); it != files.rend(); ++it) backward.merge_from(*it);
  EXPECT_EQ(forward.dump(), backward.dump());

  std::map<std::string, std::pair<std::string, double>> got;
  for (const auto& r : forward.results(kKey, "", std::nullopt)) got[r.variant_name] = {r.status, r.time_median_ms};
  EXPECT_EQ(got["v1"], std::make_pair(std::string("ok"), 1.0))
      << "a verified record before a failed one (though faster), then the faster";
  EXPECT_EQ(forward.winner(kKey, "tf32", h200().fingerprint())->variant_name, "alpha") << "the faster winner";
  // Merging them all again adds nothing, whatever the order.
  const std::string once = forward.dump();
  forward.merge_from(std::vector<std::string>(files.rbegin(), files.rend()));
  EXPECT_EQ(forward.dump(), once);
}

TEST_F(DbDump, MergeRefusesWhatIsNotASoundFusetuneDatabase) {
  auto ours = fresh("ours.db");
  fill(ours);
  const std::string before = ours.dump();

  EXPECT_THROW(ours.merge_from((dir_.path() / "missing.db").string()), InputError);

  const fs::path foreign = dir_.path() / "foreign.db";
  { Connection::open(foreign.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).exec("CREATE TABLE t (a)"); }
  EXPECT_THROW(ours.merge_from(foreign.string()), InputError);

  const fs::path broken = dir_.path() / "broken.db";
  { (void)Database::open(broken.string()); }
  {
    const auto c = Connection::open(broken.string(), SQLITE_OPEN_READWRITE);
    c.exec("INSERT INTO problems (key, canonical) VALUES ('k', 'c');"
           "INSERT INTO results (env_id, problem_id, math, candidate, variant_name, params_json, status, created_at) "
           "VALUES (999, 1, 'tf32', 'epilogue', 'v', '{}', 'ok', '2026-01-01T00:00:00.000Z')");
  }
  try {
    ours.merge_from(broken.string());
    ADD_FAILURE() << "merged a broken database";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fails verification: results row "), std::string::npos) << what;
    EXPECT_NE(what.find("refers to a missing environments row"), std::string::npos) << what;
  }
  EXPECT_EQ(ours.dump(), before);
}

// Issue 42: a value of another kind than its column's (text in a REAL column reads back as 0 ms)
// fails verification; a dump can no longer bring one in (MalformedDumps...), a hand edit can.
TEST_F(DbDump, VerifyFindsValuesOfTheWrongKind) {
  const fs::path p = dir_.path() / "t.db";
  {
    auto db = Database::open(p.string(), OpenOptions{.load_shipped = false});
    fill(db);
  }
  {
    const auto c = Connection::open(p.string(), SQLITE_OPEN_READWRITE);
    c.exec("UPDATE results SET time_median_ms = 'NaN'");
  }
  auto db = Database::open(p.string(), OpenOptions{.load_shipped = false});
  const VerifyReport report = db.verify();
  EXPECT_FALSE(report.ok);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_NE(::testing::PrintToString(report.problems).find("of results.time_median_ms are not of its type REAL"),
            std::string::npos)
      << ::testing::PrintToString(report.problems);
}

TEST_F(DbDump, VerifyFindsWhatIsBroken) {
  const fs::path p = dir_.path() / "t.db";
  {
    auto db = Database::open(p.string());
    fill(db);
    EXPECT_TRUE(db.verify().ok);
  }
  {
    // Foreign keys are off on a plain connection, as in any tool that is not fusetune.
    const auto c = Connection::open(p.string(), SQLITE_OPEN_READWRITE);
    c.exec("INSERT INTO results (env_id, problem_id, math, candidate, variant_name, params_json, status, created_at) "
           "VALUES (999, 1, 'tf32', 'epilogue', 'dangling', '{}', 'ok', '2026-01-01T00:00:00.000Z');"
           "UPDATE environments SET driver = 'tampered' WHERE gpu_name = 'NVIDIA H200';"
           "ALTER TABLE winners DROP COLUMN ptx;"
           "CREATE TABLE notes (a TEXT);");
  }
  auto db = Database::open(p.string());
  const VerifyReport report = db.verify();
  EXPECT_FALSE(report.ok);
  const auto has = [&](const std::string& text) {
    for (const auto& line : report.problems)
      if (line.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("results row")) << ::testing::PrintToString(report.problems);
  EXPECT_TRUE(has("refers to a missing environments row"));
  EXPECT_TRUE(has("does not match its own fields"));
  EXPECT_TRUE(has("column winners.ptx is missing"));
  EXPECT_TRUE(has("table notes is not in the schema"));
}

// A check that cannot run on a damaged file is reported in SQLite's words: the report reaches
// users (`db verify`, a refused `db merge`), and a call and source location mean nothing to them.
TEST_F(DbDump, VerifyReportsChecksThatCannotRunWithoutSourceLocations) {
  const fs::path p = dir_.path() / "t.db";
  { (void)fresh("t.db"); }
  { Connection::open(p.string(), SQLITE_OPEN_READWRITE).exec("ALTER TABLE environments DROP COLUMN driver"); }
  auto db = Database::open(p.string());
  const VerifyReport report = db.verify();
  EXPECT_FALSE(report.ok);
  bool could_not_run = false;
  for (const auto& line : report.problems) {
    EXPECT_EQ(line.find(".cpp:"), std::string::npos) << line;
    could_not_run |= line == "a check could not run: no such column: driver";
  }
  EXPECT_TRUE(could_not_run) << ::testing::PrintToString(report.problems);
}

}  // namespace
}  // namespace fusetune::db
