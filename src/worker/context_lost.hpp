#pragma once
// A kernel that faults (illegal address and the like) poisons the worker's CUDA context for
// good: the worker reports it and exits, and the tuner starts a fresh one.
#include <cuda.h>

#include <string>

namespace fusetune::worker {

struct ContextLost {
  std::string reason;
};

// Waits for the current context; throws ContextLost("<what>: <driver error>") when it is gone.
void sync_or_lose(const std::string& what);

}  // namespace fusetune::worker
