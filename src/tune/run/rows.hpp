#pragma once
// The tune's rows: one per variant, its result and its CUBIN file in one record, with an identity
// that stays when rows move (engine expansion replaces a template by its configurations, the
// guided search drops what it never ran). Positions (size_t) name rows between such moves: the
// rounds and the report use them; what must outlive a move keys on RowId.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "protocol/variant_result.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {

using RowId = uint64_t;

struct Row {
  RowId id = 0;
  protocol::VariantResult result;
  std::string cubin_path;             // where the worker reads its CUBIN ("" when it has none)
  std::optional<size_t> compile_slot;  // its place in the background compile until its result is filed
};

class Rows {
 public:
  // A new row (a fresh id) at the end.
  Row& add(protocol::VariantResult result);
  // A row with a fresh id, to be placed by replace().
  [[nodiscard]] Row make(protocol::VariantResult result);

  [[nodiscard]] size_t size() const { return rows_.size(); }
  [[nodiscard]] Row& operator[](size_t i) { return rows_[i]; }
  [[nodiscard]] const Row& operator[](size_t i) const { return rows_[i]; }
  [[nodiscard]] protocol::VariantResult& result(size_t i) { return rows_[i].result; }
  [[nodiscard]] const protocol::VariantResult& result(size_t i) const { return rows_[i].result; }

  // Row i replaced by `made` (its rows in order); returns how many.
  size_t replace(size_t i, std::vector<Row> made);
  // Drops the rows `drop` says, keeping the others' order.
  void drop_if(const std::vector<bool>& drop);

  // The verified and timed rows with this role.
  [[nodiscard]] std::vector<size_t> ready(codegen::Role role) const;
  // The fastest of `idx` by its median (the first of equals).
  [[nodiscard]] std::optional<size_t> fastest(const std::vector<size_t>& idx) const;

  // Calls TuneOptions::on_batch with `rep`, whose results are these rows' for the call (moved
  // there and back: the CUBINs are not copied), and `batch`, positions of rows.
  void report_batch(TuneReport& rep, const TuneOptions& opt, const std::vector<size_t>& batch);
  // The rows' results, for the report at the end of the tune (the rows are left empty).
  [[nodiscard]] std::vector<protocol::VariantResult> take_results();

 private:
  std::vector<Row> rows_;
  RowId next_id_ = 0;
};

}  // namespace fusetune::tune
