#include "cli/table.hpp"

#include <algorithm>
#include <cctype>

#include "common/terminal_text.hpp"

namespace fusetune::cli {

namespace {
bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == 'x' || c == '%' ||
           c == 'e' || c == '+';
  });
}
}  // namespace

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {
  for (auto& cell : header_) cell = text::printable(cell);
}

void Table::add(std::vector<std::string> row) {
  for (auto& cell : row) cell = text::printable(cell);
  rows_.push_back(std::move(row));
}

std::string Table::render() const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());

  std::string out;
  auto emit = [&](const std::vector<std::string>& row, bool header) {
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(width[i] - cell.size(), ' ');
      const bool right = !header && looks_numeric(cell);
      out += right ? pad + cell : cell + pad;
      if (i + 1 < width.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  emit(header_, true);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + '\n';
  for (const auto& row : rows_) emit(row, false);
  return out;
}

}  // namespace fusetune::cli
