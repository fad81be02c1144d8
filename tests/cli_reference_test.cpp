// docs/cli-reference.md is `fusetune __cli-reference`'s output, byte for byte: a new command,
// option, choice or default changes the page, or this test fails and names the command that
// rewrites it. GPU-free.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.hpp"

namespace {

using fusetune::testing::run;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first line where two texts differ, 1-based, to point at in the failure.
size_t first_difference(const std::string& a, const std::string& b) {
  size_t line = 1;
  for (size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i) line += a[i] == '\n';
  return line;
}

TEST(CliReference, PageIsTheBinarysOutput) {
  const auto r = run("__cli-reference");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = read_file(std::string(FUSETUNE_SOURCE_DIR) + "/docs/cli-reference.md");
  ASSERT_FALSE(page.empty()) << "docs/cli-reference.md is missing";
  EXPECT_TRUE(r.out == page) << "docs/cli-reference.md is out of date (first difference at line "
                             << first_difference(r.out, page)
                             << "): regenerate it with `build/fusetune __cli-reference > docs/cli-reference.md`";
}

TEST(CliReference, ListsNestedCommandsAndHidesHiddenOptions) {
  const auto r = run("__cli-reference");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("## fusetune db merge\n"), std::string::npos);
  EXPECT_NE(r.out.find("| `--math` | `TEXT:{tf32,fp32}` | `tf32` |"), std::string::npos);
  // query's --format is kept for old scripts but not offered: not in --help, not here.
  const size_t query = r.out.find("## fusetune query\n");
  ASSERT_NE(query, std::string::npos);
  EXPECT_EQ(r.out.substr(query, r.out.find("## ", query + 3) - query).find("--format"), std::string::npos);
  // No machine in the page: --jobs' default (all cores) is in its description only.
  EXPECT_NE(r.out.find("| `-j, --jobs` | `UINT:1..1024` |  | parallel"), std::string::npos);
}

// Not a user command, and no argument to it is one either.
TEST(CliReference, NotInHelp) {
  const auto r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.find("__cli-reference"), std::string::npos);
}

// FUSETUNE_PARSE_ONLY=1 (tests/doc_examples_test.py): a good command line parses and nothing runs;
// a bad one is still exit 2 with its one line.
TEST(ParseOnly, GoodLineRunsNothing) {
  const auto r = run("tune --preset kernelbench-31 --db /nonexistent/dir/t.db", "FUSETUNE_PARSE_ONLY=1 ");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(ParseOnly, BadFlagIsStillExit2) {
  const auto r = run("tune --presett kernelbench-31", "FUSETUNE_PARSE_ONLY=1 ");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(fusetune::testing::lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--presett"), std::string::npos) << r.err;
}

TEST(ParseOnly, OutOfRangeValueIsStillExit2) {
  const auto r = run("tune --preset kernelbench-31 --budget 0", "FUSETUNE_PARSE_ONLY=1 ");
  EXPECT_EQ(r.code, 2) << r.err;
}

}  // namespace
