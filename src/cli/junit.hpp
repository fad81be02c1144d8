#pragma once
// JUnit XML for `smoke --junit FILE`: the format CI systems (GitLab, Jenkins, GitHub's test
// reporters) read, one <testcase> per smoke check. Names and details can quote database strings,
// so every text is escaped and control characters are dropped (XML 1.0 cannot carry them).
#include <string>
#include <vector>

#include "cli/smoke.hpp"

namespace fusetune::cli {

// `text` as XML character data or attribute value: & < > " ' escaped, control characters other
// than tab and newline removed, invalid UTF-8 bytes replaced by '?'.
[[nodiscard]] std::string xml_escape(const std::string& text);

// <testsuites><testsuite name="fusetune smoke" tests= failures= skipped=>...</testsuite></testsuites>
[[nodiscard]] std::string junit_xml(const std::vector<SmokeCheck>& checks);

}  // namespace fusetune::cli
