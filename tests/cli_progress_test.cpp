// Progress in a log: one line per phase that counted something, with its count and seconds; on
// a terminal an ETA; nothing when quiet (issue: in CI logs `tune` was silent until it ended).
#include <gtest/gtest.h>

// GCC 12 at -O3 reports a false -Wrestrict inside std::string's assign of a short literal
// (GCC bug 105329).
#pragma GCC diagnostic ignored "-Wrestrict"

#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/progress.hpp"

namespace fusetune::cli {
namespace {

std::string progress_text(ProgressMode mode) {
  std::FILE* f = std::tmpfile();
  {
    Progress p("device", 1, mode, f);
    p.set_phase("compiling", 3);
    for (int i = 0; i < 3; ++i) p.step("v" + std::to_string(i));
    p.set_phase("verifying and timing", 2);
    p.step("v0");
  }
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  std::fclose(f);
  return s;
}

TEST(Progress, LogsGetOneLinePerPhaseTerminalsAnEtaQuietNothing) {
  const std::string lines = progress_text(ProgressMode::lines);
  EXPECT_EQ(lines.find("device"), std::string::npos) << lines;  // counted nothing: not worth a line
  EXPECT_EQ(lines.rfind("fusetune: compiling: 3/3 in ", 0), 0u) << lines;
  EXPECT_NE(lines.find("\nfusetune: verifying and timing: 1/2 in "), std::string::npos) << lines;
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 2) << lines;
  EXPECT_EQ(lines.find('\r'), std::string::npos) << lines;
  const std::string live = progress_text(ProgressMode::live);
  EXPECT_NE(live.find("\r\033[Kcompiling 1/3, about "), std::string::npos) << live;
  EXPECT_NE(live.find(" left v0"), std::string::npos) << live;
  EXPECT_EQ(progress_text(ProgressMode::quiet), "");
  EXPECT_EQ(eta_text(4.4), "4 s");
  EXPECT_EQ(eta_text(185), "3 min 05 s");
}

}  // namespace
}  // namespace fusetune::cli
