#pragma once
// The worker's GPU state for one problem, and the three things the tuner asks of it: verify a
// variant and time it, and re-time several interleaved. It wires together the parts, each with
// one job: InputDraws (inputs and float64 answers), ReferenceCheck (comparisons, whole or sliced
// by images), ConvAlgoCache (cuDNN's verified algorithm per layout), PlanRunner (buffers and
// launches), Verifier, Timer.
// Lives only in the worker process (tune/worker_main.cpp): a fault kills it, not the tuner.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/math_mode.hpp"
#include "gpu/context.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device.hpp"
#include "gpu/stream.hpp"
#include "reference/gpu_reference.hpp"
#include "spec/problem.hpp"
#include "worker/buffer_pool.hpp"
#include "worker/conv_cache.hpp"
#include "worker/graph_cache.hpp"
#include "worker/input_draws.hpp"
#include "worker/main_op_steps.hpp"
#include "worker/plan_runner.hpp"
#include "worker/reference_check.hpp"
#include "protocol/protocol.hpp"
#include "worker/timer.hpp"
#include "worker/verifier.hpp"

namespace fusetune::worker {

class Session {
 public:
  explicit Session(const protocol::SetupRequest& setup);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  [[nodiscard]] const protocol::SetupReply& info() const { return info_; }
  [[nodiscard]] protocol::RunReply run(const protocol::RunRequest& request);
  [[nodiscard]] protocol::RetimeReply retime(const protocol::RetimeRequest& request);
  [[nodiscard]] protocol::EnginesReply engines(const protocol::EnginesRequest& request);

 private:
  // Loads and verifies `v` unless this worker already has it (a worker started after a fault
  // is asked to re-time variants another one verified). Throws Error when it fails now.
  const Loaded& ensure_loaded(const codegen::Variant& v, const std::string& cubin_path);
  double measure_copy_bandwidth();

  spec::Problem problem_;
  MathMode math_;
  gpu::DeviceInfo device_;
  // Started before the context: NVRTC needs none, so the reference's compiles overlap the
  // context's and cuDNN handle's creation (RefCompiles).
  std::optional<reference::RefCompiles> ref_compiles_;
  gpu::Context ctx_;  // before everything that lives in it: destroyed after them
  gpu::Stream stream_;
  gpu::CudnnHandle cudnn_;
  std::unique_ptr<reference::GpuReference> ref_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<InputDraws> draws_;
  std::unique_ptr<ReferenceCheck> check_;
  std::unique_ptr<GraphCache> graphs_;  // before convs_, which uses it
  std::unique_ptr<ConvAlgoCache> convs_;
  std::unique_ptr<MainOpSteps> main_ops_;  // v2 plans' GEMM and N-d conv steps; empty for chains
  std::unique_ptr<PlanRunner> runner_;
  std::unique_ptr<Verifier> verifier_;
  std::unique_ptr<Timer> timer_;
  std::map<std::string, Loaded> loaded_;
  std::string setup_note_;  // for the first reply: how verification is sliced, if it is
  protocol::SetupReply info_;
};

}  // namespace fusetune::worker
