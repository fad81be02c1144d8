#include "cli/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace fusetune::cli {

Progress::Progress(std::string phase, size_t total)
    : phase_(std::move(phase)), total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (enabled_ && done_ > 0) fmt::print(stderr, "\r\033[K");
}

void Progress::set_phase(std::string phase, size_t total) {
  std::lock_guard lock(mu_);
  phase_ = std::move(phase);
  total_ = total;
  done_ = 0;
  draw({});
}

void Progress::step(const std::string& detail) {
  std::lock_guard lock(mu_);
  ++done_;
  draw(detail);
}

void Progress::draw(const std::string& detail) {
  if (!enabled_) return;
  // \033[K clears the rest of the line so a shorter line doesn't leave residue.
  fmt::print(stderr, "\r\033[K{} {}/{} {}", phase_, done_, total_, detail);
  std::fflush(stderr);
}

}  // namespace fusetune::cli
