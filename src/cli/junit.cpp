#include "cli/junit.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace fusetune::cli {

namespace {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0.
size_t utf8_length(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(text, i);
      out += n ? text.substr(i, n) : "?";
      i += n ? n : 1;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t':
      case '\n': out += char(c); break;
      default:
        if (c >= 0x20 && c != 0x7F) out += char(c);
    }
    ++i;
  }
  return out;
}

std::string junit_xml(const std::vector<tune::SmokeCheck>& checks) {
  size_t failures = 0, skipped = 0;
  std::string cases;
  for (const auto& c : checks) {
    cases += fmt::format("    <testcase classname=\"fusetune.smoke\" name=\"{}\">", xml_escape(c.name));
    switch (c.outcome) {
      case tune::SmokeCheck::Outcome::passed:
        if (!c.detail.empty()) cases += fmt::format("<system-out>{}</system-out>", xml_escape(c.detail));
        break;
      case tune::SmokeCheck::Outcome::failed:
        ++failures;
        cases += fmt::format("<failure message=\"{}\"/>", xml_escape(c.detail));
        break;
      case tune::SmokeCheck::Outcome::skipped:
        ++skipped;
        cases += fmt::format("<skipped message=\"{}\"/>", xml_escape(c.detail));
        break;
    }
    cases += "</testcase>\n";
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"fusetune smoke\" tests=\"{}\" "
      "failures=\"{}\" errors=\"0\" skipped=\"{}\">\n{}  </testsuite>\n</testsuites>\n",
      checks.size(), failures, skipped, cases);
}

}  // namespace fusetune::cli
