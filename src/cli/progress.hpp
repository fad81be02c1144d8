#pragma once
// A one-line progress indicator on stderr, shown only when stderr is a terminal so that
// logs and pipes stay clean. Thread-safe: workers call step() concurrently.
#include <cstddef>
#include <mutex>
#include <string>

namespace fusetune::cli {

class Progress {
 public:
  Progress(std::string phase, size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void step(const std::string& detail = {});
  void set_phase(std::string phase, size_t total);

 private:
  void draw(const std::string& detail);
  std::mutex mu_;
  std::string phase_;
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
};

}  // namespace fusetune::cli
