#pragma once
// Progress on stderr, in the form the reader can use: on a terminal one live line (phase, k/n,
// an ETA from the phase's rate so far, the item); in a log (CI, a pipe) one line per finished
// phase with its count and seconds, so a long `tune` is not silent until it ends; nothing with -q.
// Thread-safe: workers call step() concurrently.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace fusetune::cli {

enum class ProgressMode { automatic, live, lines, quiet };  // automatic: live on a terminal, else lines

class Progress {
 public:
  Progress(std::string phase, size_t total, ProgressMode mode = ProgressMode::automatic, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void step(const std::string& detail = {});
  void set_phase(std::string phase, size_t total);

 private:
  using Clock = std::chrono::steady_clock;
  void draw(const std::string& detail);
  void finish_phase();  // lines mode: "<phase>: k/n in S s"
  std::mutex mu_;
  std::string phase_;
  size_t total_;
  size_t done_ = 0;
  Clock::time_point started_;
  ProgressMode mode_;
  std::FILE* out_;
  bool drawn_ = false;
};

// "12 s", "3 min 05 s": an ETA as people read it.
[[nodiscard]] std::string eta_text(double seconds);

}  // namespace fusetune::cli
