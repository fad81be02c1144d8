#pragma once
// A minimal parallel loop for the CPU reference and the input generator: items are handed
// out one at a time from an atomic counter, so uneven items (border planes) balance.
// Not part of the public API of reference/.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fusetune::reference::detail {

// Runs fn(i) for i in [0, count) on up to hardware_concurrency threads; `work_per_item` (any
// unit, e.g. multiply-adds) keeps tiny jobs on the calling thread, where starting threads
// would cost more than the work. The first exception fn throws is rethrown here.
template <class Fn>
void parallel_for(int64_t count, double work_per_item, Fn&& fn) {
  constexpr double kWorkPerThread = 1 << 18;
  const auto hw = int64_t(std::max(1u, std::thread::hardware_concurrency()));
  const auto by_work = int64_t(double(count) * work_per_item / kWorkPerThread);
  const int64_t threads = std::clamp<int64_t>(std::min(hw, by_work), 1, std::max<int64_t>(count, 1));
  if (threads <= 1) {
    for (int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  // An exception escaping a thread would call std::terminate: keep the first one, stop
  // handing out items, and rethrow it on the calling thread once all threads have joined.
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (int64_t i = next++; i < count; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        next = count;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(size_t(threads - 1));
    for (int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
  }  // jthreads join here
  if (error) std::rethrow_exception(error);
}

}  // namespace fusetune::reference::detail
