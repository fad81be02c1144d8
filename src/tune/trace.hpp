#pragma once
// A timeline of one tune for whoever asks where its time went (FUSETUNE_TRACE=FILE,
// docs/commands.md: "Where a tune's time went"): one line per event, seconds since the tune started, appended to FILE. The
// phases' totals (JSON `phases_s`) say how long each phase took; the trace says what the tuner
// waited for inside them (the worker's setup, a compile, a lane's answer, a re-timing round).
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace fusetune::tune {

class TuneTrace {
 public:
  TuneTrace() = default;
  // An empty path: no trace (every call is a no-op). A file that cannot be opened: no trace
  // either, with one line on stderr (a diagnostic must not fail a tune).
  explicit TuneTrace(const std::string& path);

  [[nodiscard]] bool on() const { return file_ != nullptr; }
  // A steady_clock reading (seconds since its epoch, as another process on this machine reports
  // it) on this trace's timeline.
  [[nodiscard]] double at(double steady_s) const {
    return steady_s - std::chrono::duration<double>(t0_.time_since_epoch()).count();
  }
  void operator()(std::string_view event);

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
};

}  // namespace fusetune::tune
