#include "cli/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include "common/terminal_text.hpp"

namespace fusetune::cli {

std::string eta_text(double seconds) {
  if (seconds < 0) seconds = 0;
  const long s = long(seconds + 0.5);
  if (s < 60) return fmt::format("{} s", s);
  return fmt::format("{} min {:02} s", s / 60, s % 60);
}

Progress::Progress(std::string phase, size_t total, ProgressMode mode, std::FILE* out)
    : phase_(std::move(phase)), total_(total), started_(Clock::now()), mode_(mode), out_(out) {
  if (mode_ == ProgressMode::automatic) mode_ = isatty(fileno(out_)) != 0 ? ProgressMode::live : ProgressMode::lines;
}

Progress::~Progress() {
  std::lock_guard lock(mu_);
  finish_phase();
  if (mode_ == ProgressMode::live && drawn_) fmt::print(out_, "\r\033[K");
  std::fflush(out_);
}

void Progress::finish_phase() {
  // Only phases that counted something: a one-step phase (reading the device) says nothing a
  // log reader needs, and an error right after it must stay the one line on stderr.
  if (mode_ != ProgressMode::lines || done_ == 0) return;
  const double s = std::chrono::duration<double>(Clock::now() - started_).count();
  fmt::print(out_, "fusetune: {}: {}/{} in {:.1f} s\n", phase_, done_, total_, s);
  std::fflush(out_);
}

void Progress::set_phase(std::string phase, size_t total) {
  std::lock_guard lock(mu_);
  finish_phase();
  phase_ = std::move(phase);
  total_ = total;
  done_ = 0;
  started_ = Clock::now();
  draw({});
}

void Progress::step(const std::string& detail) {
  std::lock_guard lock(mu_);
  ++done_;
  draw(detail);
}

void Progress::draw(const std::string& detail) {
  if (mode_ != ProgressMode::live) return;
  std::string eta;
  if (done_ > 0 && total_ > done_) {
    const double s = std::chrono::duration<double>(Clock::now() - started_).count();
    eta = fmt::format(", about {} left", eta_text(s / double(done_) * double(total_ - done_)));
  }
  // \033[K clears the rest of the line so a shorter line doesn't leave residue; the item's name
  // is cut so the line stays one terminal row.
  const std::string item = detail.size() > 60 ? text::excerpt(detail, 57) : text::printable(detail);
  fmt::print(out_, "\r\033[K{} {}/{}{} {}", phase_, done_, total_, eta, item);
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace fusetune::cli
