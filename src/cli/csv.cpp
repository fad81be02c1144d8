#include "cli/csv.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/terminal_text.hpp"

namespace fusetune::cli {

namespace {

// text::printable between the tabs and line breaks, which stay (quoting takes care of them).
std::string without_controls(std::string_view value) {
  std::string out;
  size_t pos = 0;
  while (pos <= value.size()) {
    const size_t brk = value.find_first_of("\t\r\n", pos);
    const size_t end = brk == std::string_view::npos ? value.size() : brk;
    out += text::printable(value.substr(pos, end - pos));
    if (brk == std::string_view::npos) break;
    out += value[brk];
    pos = brk + 1;
  }
  return out;
}

}  // namespace

std::string csv_field(std::string_view value) {
  std::string field = without_controls(value);
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (const char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

CsvWriter::CsvWriter(const std::vector<std::string>& header) : columns_(header.size()) { record(header); }

void CsvWriter::add(const std::vector<std::string>& fields) {
  if (fields.size() != columns_)
    throw Error(ExitCode::failure, fmt::format("CSV record of {} fields under a header of {}", fields.size(), columns_));
  record(fields);
}

void CsvWriter::record(const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out_ += ',';
    out_ += csv_field(fields[i]);
  }
  out_ += '\n';
}

}  // namespace fusetune::cli
