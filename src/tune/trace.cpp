#include "tune/trace.hpp"

#include <fmt/format.h>

namespace fusetune::tune {

TuneTrace::TuneTrace(const std::string& path) {
  if (path.empty()) return;
  // "e": close-on-exec, so the workers this process forks do not inherit the descriptor.
  file_.reset(std::fopen(path.c_str(), "ae"));
  if (!file_) fmt::print(stderr, "fusetune: FUSETUNE_TRACE: cannot open {} for appending; no trace\n", path);
}

void TuneTrace::operator()(std::string_view event) {
  if (!file_) return;
  // The clock is read under the lock, so lines from several threads stay in time order.
  const std::lock_guard<std::mutex> lock(mutex_);
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  fmt::print(file_.get(), "{:9.3f} {}\n", t, event);
  std::fflush(file_.get());
}

}  // namespace fusetune::tune
