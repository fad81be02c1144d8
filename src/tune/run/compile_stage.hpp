#pragma once
// The compiles of one tune and where their CUBINs go. The floors and baselines compile first (a
// few kernels); the solutions compile in the background (compile_queue.hpp) while the baselines
// are measured, most promising first by the cost model's priors. Each row learns its compile
// slot here and gets its result (and its CUBIN file, where the worker reads it) filed when it is
// taken: take() by the guided search as it picks, join() for the others.
#include <memory>
#include <mutex>
#include <vector>

#include "codegen/variant.hpp"
#include "common/temp_dir.hpp"
#include "gpu/device_limits.hpp"
#include "tune/compile_queue.hpp"
#include "tune/cost_model.hpp"
#include "tune/run/rows.hpp"
#include "tune/run/run_context.hpp"

namespace fusetune::tune {

class CompileStage {
 public:
  CompileStage(const RunContext& ctx, const gpu::DeviceLimits& limits);

  // One row per variant, the floors and baselines compiled and filed; each solution's row says
  // "not compiled yet" until its result is taken.
  void compile_head(Rows& rows, const std::vector<codegen::Variant>& variants);
  // The solutions' background compile, in the order of their priors under `in`.
  void start_solutions(const CostInputs& in);

  // Files row i's result if it is still waiting for the background compile (waiting for it).
  void take(Rows& rows, size_t i);
  // Whether take(rows, i) would wait.
  [[nodiscard]] bool pending(const Row& row);
  // Files the background compile's results: all of them (`all`), else only the cudnn-fused
  // templates (nothing to wait for), which engine expansion needs. Then the injected results
  // (TuneOptions::injected) as rows of their own. Once.
  void join(Rows& rows, bool all);
  // Row `row` gets result r, its CUBIN written where the worker will read it.
  void place(Row& row, const protocol::VariantResult& r);

  // The pool takes these slots first (the search's likely next picks).
  void prefer(std::vector<size_t> slots);
  [[nodiscard]] bool running() const { return queue_ != nullptr; }
  [[nodiscard]] size_t threads() const { return queue_ ? queue_->threads() : 0; }
  // The pool starts nothing new (what the search never picked need not compile).
  void stop();
  // Seconds the tune waited for background compiles (part of the compile phase's figure).
  [[nodiscard]] double waited_s() const { return waited_s_; }

 private:
  const RunContext& ctx_;
  const gpu::DeviceLimits limits_;
  CompileAllOptions options_;
  TempDir tmp_{"fusetune-tune"};
  std::vector<codegen::Variant> tail_;  // the solutions, until start_solutions() queues them
  std::unique_ptr<CompileQueue> queue_;
  size_t total_ = 0;  // variants generated (the progress lines' count)
  bool joined_ = false;
  double waited_s_ = 0;
  std::mutex progress_mutex_;  // compile threads report progress one at a time
};

}  // namespace fusetune::tune
