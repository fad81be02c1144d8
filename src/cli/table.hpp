#pragma once
// Plain-text tables for stdout: columns sized to their widest cell, numbers right-aligned.
// Cells often hold database strings (GPU names, variant names, reasons): every cell goes
// through text::printable, so a control character or an escape sequence in one shows as '?'
// and never reaches the terminal, and a newline cannot break a row.
#include <string>
#include <vector>

namespace fusetune::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void add(std::vector<std::string> row);
  [[nodiscard]] std::string render() const;
  [[nodiscard]] bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace fusetune::cli
