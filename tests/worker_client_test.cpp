// The tuner's end of the worker process (src/tune/worker_client.hpp): quitting does not wait for
// a worker that has acknowledged to finish exiting (a stored answer would otherwise wait for the
// CUDA driver's teardown), and a worker that does not acknowledge is killed rather than waited
// on. GPU-free: the workers are small shell scripts that speak the protocol's one line.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "common/temp_dir.hpp"
#include "tune/worker_client.hpp"

namespace fusetune::tune {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A worker that answers one request, then lingers `linger` seconds before writing `marker`.
WorkerClient lingering_worker(const fs::path& marker, const char* linger) {
  return WorkerClient({"/bin/sh", "-c",
                       std::string("read line; echo '{\"ok\":true}'; sleep ") + linger + "; touch '" + marker.string() +
                           "'"});
}

TEST(WorkerClient, QuitReturnsOnceAcknowledgedWithoutWaitingForTheExit) {
  TempDir dir("worker-client-test");
  const fs::path marker = dir.path() / "exited";
  {
    WorkerClient w = lingering_worker(marker, "1");
    w.quit(milliseconds(5000));
    EXPECT_FALSE(w.alive());
    // Still lingering: quit() did not wait for it (the marker comes a second after the reply).
    EXPECT_FALSE(fs::exists(marker));
  }
  // Released, not killed: it finishes its exit on its own.
  for (int i = 0; i < 100 && !fs::exists(marker); ++i) std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(fs::exists(marker));
}

TEST(WorkerClient, AWorkerThatDoesNotAcknowledgeIsKilled) {
  TempDir dir("worker-client-test");
  const fs::path marker = dir.path() / "exited";
  {
    WorkerClient w({"/bin/sh", "-c", "sleep 2; touch '" + marker.string() + "'"});
    w.quit(milliseconds(200));
    EXPECT_FALSE(w.alive());
  }
  std::this_thread::sleep_for(milliseconds(2500));
  EXPECT_FALSE(fs::exists(marker));  // killed, so it never got to write it
}

}  // namespace
}  // namespace fusetune::tune
