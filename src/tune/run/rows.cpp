#include "tune/run/rows.hpp"

namespace fusetune::tune {

Row& Rows::add(protocol::VariantResult result) {
  rows_.push_back(make(std::move(result)));
  return rows_.back();
}

Row Rows::make(protocol::VariantResult result) {
  Row r;
  r.id = next_id_++;
  r.result = std::move(result);
  return r;
}

size_t Rows::replace(size_t i, std::vector<Row> made) {
  const size_t n = made.size();
  rows_.erase(rows_.begin() + std::ptrdiff_t(i));
  rows_.insert(rows_.begin() + std::ptrdiff_t(i), std::make_move_iterator(made.begin()),
               std::make_move_iterator(made.end()));
  return n;
}

void Rows::drop_if(const std::vector<bool>& drop) {
  size_t w = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (i < drop.size() && drop[i]) continue;
    if (w != i) rows_[w] = std::move(rows_[i]);
    ++w;
  }
  rows_.resize(w);
}

std::vector<size_t> Rows::ready(codegen::Role role) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const auto& r = rows_[i].result;
    if (r.verified && r.timed && r.variant.role() == role) out.push_back(i);
  }
  return out;
}

std::optional<size_t> Rows::fastest(const std::vector<size_t>& idx) const {
  std::optional<size_t> best;
  for (size_t i : idx)
    if (!best || rows_[i].result.time.median_ms < rows_[*best].result.time.median_ms) best = i;
  return best;
}

void Rows::report_batch(TuneReport& rep, const TuneOptions& opt, const std::vector<size_t>& batch) {
  if (!opt.on_batch) return;
  rep.results.clear();
  rep.results.reserve(rows_.size());
  for (Row& r : rows_) rep.results.push_back(std::move(r.result));
  // Moved back even when the callback throws: the tune's error then leaves with sane rows.
  struct Back {
    std::vector<Row>& rows;
    TuneReport& rep;
    ~Back() {
      for (size_t i = 0; i < rows.size() && i < rep.results.size(); ++i) rows[i].result = std::move(rep.results[i]);
      rep.results.clear();
    }
  } back{rows_, rep};
  opt.on_batch(rep, batch);
}

std::vector<protocol::VariantResult> Rows::take_results() {
  std::vector<protocol::VariantResult> out;
  out.reserve(rows_.size());
  for (Row& r : rows_) out.push_back(std::move(r.result));
  rows_.clear();
  return out;
}

}  // namespace fusetune::tune
