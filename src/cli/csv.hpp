#pragma once
// CSV for `query --format csv`, quoted as RFC 4180 says: a field holding a comma, a double
// quote, CR or LF is put in double quotes with its quotes doubled, so a database string
// with ",\n" stays one field of one record. Records end with LF (RFC 4180 writes CRLF; readers
// take either, and every other output of fusetune ends lines with LF). Control characters other
// than tab, CR and LF (escape sequences included) become '?', as in the tables: the file is as
// safe to print on a terminal as the table is.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fusetune::cli {

// One field, quoted when it must be.
[[nodiscard]] std::string csv_field(std::string_view value);

class CsvWriter {
 public:
  explicit CsvWriter(const std::vector<std::string>& header);
  // One record; it must have as many fields as the header (a bug otherwise: fusetune::Error).
  void add(const std::vector<std::string>& fields);
  [[nodiscard]] const std::string& text() const noexcept { return out_; }

 private:
  void record(const std::vector<std::string>& fields);
  std::size_t columns_;
  std::string out_;
};

}  // namespace fusetune::cli
