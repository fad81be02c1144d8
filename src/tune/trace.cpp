#include "tune/trace.hpp"

#include <fmt/format.h>

namespace fusetune::tune {

TuneTrace::TuneTrace(const std::string& path) {
  if (path.empty()) return;
  file_.reset(std::fopen(path.c_str(), "a"));
  if (!file_) fmt::print(stderr, "fusetune: FUSETUNE_TRACE: cannot open {} for appending; no trace\n", path);
}

void TuneTrace::operator()(std::string_view event) {
  if (!file_) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  const std::lock_guard<std::mutex> lock(mutex_);
  fmt::print(file_.get(), "{:9.3f} {}\n", t, event);
  std::fflush(file_.get());
}

}  // namespace fusetune::tune
