#pragma once
// Plain-text tables for stdout: columns sized to their widest cell, numbers right-aligned.
#include <string>
#include <vector>

namespace fusetune::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  [[nodiscard]] std::string render() const;
  [[nodiscard]] bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace fusetune::cli
