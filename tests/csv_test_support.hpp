#pragma once
// A minimal RFC 4180 reader for the tests: what `query --format csv` wrote must read back field
// for field (a quoted field may hold commas, quotes, CR and LF).
#include <string>
#include <vector>

namespace fusetune::testing {

inline std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',' || c == '\n') {
      records.back().push_back(field);
      field.clear();
      was_quoted = false;
      if (c == '\n') records.emplace_back();
    } else {
      field += c;
    }
  }
  if (records.back().empty()) records.pop_back();
  return records;
}

}  // namespace fusetune::testing
