#include "tune/run/compile_stage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <numeric>

#include "codegen/candidates.hpp"

namespace fusetune::tune {

using codegen::Role;

CompileStage::CompileStage(const RunContext& ctx, const gpu::DeviceLimits& limits) : ctx_(ctx), limits_(limits) {
  options_.arch = limits_.arch_flag();
  options_.strict_fp32 = ctx_.opt.math == MathMode::fp32;
  options_.jobs = ctx_.opt.jobs;
  options_.cache_dir = ctx_.opt.compile_cache_dir;
}

void CompileStage::compile_head(Rows& rows, const std::vector<codegen::Variant>& variants) {
  std::vector<codegen::Variant> head;
  std::vector<size_t> head_idx;
  total_ = variants.size();
  size_t slot = 0;
  for (size_t i = 0; i < variants.size(); ++i) {
    // Until the background compile lands, a solution's row says so (nothing reads it before).
    protocol::VariantResult r;
    r.variant = variants[i];
    r.status = protocol::Status::compile_failed;
    r.reason = "not compiled yet";
    Row& row = rows.add(std::move(r));
    if (variants[i].role() == Role::solution) {
      tail_.push_back(variants[i]);
      row.compile_slot = slot++;
    } else {
      head.push_back(variants[i]);
      head_idx.push_back(i);
    }
  }
  CompileAllOptions copts = options_;
  auto counted = std::make_shared<std::atomic<size_t>>(0);
  copts.on_done = [this, counted, total = variants.size()](const protocol::VariantResult& r) {
    const size_t done = ++*counted;
    const std::lock_guard<std::mutex> lock(progress_mutex_);
    ctx_.progress("compiling", done, total, r.variant.name);
  };
  const std::vector<protocol::VariantResult> head_results = compile_all(head, limits_, copts);
  for (size_t j = 0; j < head.size(); ++j) place(rows[head_idx[j]], head_results[j]);
}

void CompileStage::start_solutions(const CostInputs& in) {
  // The solutions' progress stays quiet: the baselines' own lines run meanwhile. The trace
  // gets each solution's compile with its duration, so a trace shows whether the pool was
  // compiling what the search waited for (its start is the line's time less the duration).
  // The line is written just before the result is filed, so a "waiting for the compile of"
  // the same variant may follow it, answered at once by "compile in".
  CompileAllOptions copts = options_;
  if (ctx_.trace.on())
    copts.on_done = [this](const protocol::VariantResult& r) {
      if (r.variant.source.empty()) return;  // a cuDNN graph template: nothing was compiled
      ctx_.trace(fmt::format("compiled {} ({:.0f} ms{}{})", r.variant.name, r.compile.compile_ms,
                             r.compile.from_cache ? ", cached" : "",
                             r.status == protocol::Status::ok ? std::string()
                                                              : ", " + std::string(protocol::status_name(r.status))));
    };
  // Most promising first: the cost model's prior before compiling (registers unknown); only the
  // order depends on it.
  std::vector<double> prior(tail_.size());
  for (size_t j = 0; j < tail_.size(); ++j) prior[j] = prior_ms(ctx_.problem, tail_[j], -1, in);
  std::vector<size_t> order(tail_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prior[a] < prior[b]; });
  queue_ = std::make_unique<CompileQueue>(std::move(tail_), std::move(order), limits_, copts);
  tail_.clear();
}

void CompileStage::take(Rows& rows, size_t i) {
  Row& row = rows[i];
  if (!row.compile_slot || !queue_) return;
  const size_t slot = *row.compile_slot;
  row.compile_slot.reset();
  const auto t0 = Clock::now();
  const bool waits = ctx_.trace.on() && !queue_->done(slot);
  if (waits) ctx_.trace(fmt::format("waiting for the compile of {}", row.result.variant.name));
  const protocol::VariantResult& r = queue_->get(slot);
  waited_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
  if (waits) ctx_.trace("compile in");
  place(row, r);
}

bool CompileStage::pending(const Row& row) { return row.compile_slot && queue_ && !queue_->done(*row.compile_slot); }

void CompileStage::join(Rows& rows, bool all) {
  if (joined_) return;
  joined_ = true;
  for (size_t i = 0; i < rows.size(); ++i)
    if (all || codegen::engines_at_run_time(rows.result(i).variant)) take(rows, i);
  if (all) ctx_.progress("compiling", total_, total_, "");
  for (const auto& r : ctx_.opt.injected) place(rows.add(r), r);
}

void CompileStage::place(Row& row, const protocol::VariantResult& r) {
  row.result = r;
  if (r.compile.cubin.empty()) return;
  row.cubin_path = (tmp_.path() / fmt::format("{}.cubin", row.id)).string();
  std::ofstream f(row.cubin_path, std::ios::binary);
  f.write(r.compile.cubin.data(), std::streamsize(r.compile.cubin.size()));
}

void CompileStage::prefer(std::vector<size_t> slots) {
  if (queue_) queue_->prefer(std::move(slots));
}

void CompileStage::stop() {
  if (queue_) queue_->stop();
}

}  // namespace fusetune::tune
