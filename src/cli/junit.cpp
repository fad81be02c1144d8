#include "cli/junit.hpp"

#include <fmt/format.h>

#include <string_view>

#include "common/terminal_text.hpp"

namespace fusetune::cli {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const text::Utf8Char u = text::decode_utf8(std::string_view(text).substr(i));
      out += u.valid ? text.substr(i, u.length) : "?";
      i += u.length;
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

std::string junit_xml(const std::vector<SmokeCheck>& checks) {
  size_t failures = 0, skipped = 0;
  std::string cases;
  for (const auto& c : checks) {
    cases += fmt::format("    <testcase classname=\"fusetune.smoke\" name=\"{}\">", xml_escape(c.name));
    switch (c.outcome) {
      case SmokeCheck::Outcome::passed:
        if (!c.detail.empty()) cases += fmt::format("<system-out>{}</system-out>", xml_escape(c.detail));
        break;
      case SmokeCheck::Outcome::failed:
        ++failures;
        cases += fmt::format("<failure message=\"{}\"/>", xml_escape(c.detail));
        break;
      case SmokeCheck::Outcome::skipped:
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
