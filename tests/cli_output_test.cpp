// What `query` and the other commands print from a database: CSV quoted as RFC 4180 says
// (cli/csv), table cells without controls (cli/table).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/csv.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "csv_test_support.hpp"

namespace fusetune {
namespace {

TEST(Csv, QuotesFieldsAsRfc4180Says) {
  EXPECT_EQ(cli::csv_field("plain"), "plain");
  EXPECT_EQ(cli::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(cli::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(cli::csv_field("cr\rlf\n"), "\"cr\rlf\n\"");
  EXPECT_EQ(cli::csv_field(""), "");
  EXPECT_EQ(cli::csv_field("tab\tstays"), "tab\tstays");
  EXPECT_EQ(cli::csv_field("esc\x1b[31m,x"), "\"esc?,x\"");
}

TEST(Csv, AFieldWithCommaAndNewlineStaysOneFieldOfOneRecord) {
  cli::CsvWriter w({"gpu", "winner"});
  w.add({"NVIDIA H200,\nevil,row", "v\"1\""});
  w.add({"plain", "v2"});
  const auto records = testing::read_csv(w.text());
  ASSERT_EQ(records.size(), 3u) << w.text();
  EXPECT_EQ(records[1], (std::vector<std::string>{"NVIDIA H200,\nevil,row", "v\"1\""}));
  EXPECT_EQ(records[2], (std::vector<std::string>{"plain", "v2"}));
  EXPECT_THROW(w.add({"one field"}), Error);
}

TEST(Table, CellsCannotCarryControlsToTheTerminal) {
  cli::Table t({"gpu", "winner"});
  t.add({"H200\x1b]0;pwned\x07", "v1\nforged row"});
  const std::string out = t.render();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_NE(out.find("H200?"), std::string::npos) << out;
  EXPECT_NE(out.find("v1?forged row"), std::string::npos) << out;
  size_t lines = 0;
  for (const char c : out) lines += c == '\n';
  EXPECT_EQ(lines, 3u) << "header, rule, one row:\n" << out;
}

}  // namespace
}  // namespace fusetune
