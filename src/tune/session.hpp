#pragma once
// The worker's GPU state for one problem: the input draws and their float64 references,
// the scratch buffers plans write, cuDNN convolutions, loaded variants; and the three things
// the tuner asks of it: verify a variant, time it, re-time finalists interleaved.
// Lives only in the worker process (tune/worker_main.cpp): a fault kills it, not the tuner.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "gpu/context.hpp"
#include "gpu/cudnn_algo.hpp"
#include "gpu/cudnn_conv.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device.hpp"
#include "gpu/event.hpp"
#include "gpu/module.hpp"
#include "gpu/stream.hpp"
#include "reference/gpu_reference.hpp"
#include "spec/problem.hpp"
#include "tune/buffers.hpp"
#include "tune/timing_stats.hpp"

namespace fusetune::tune {

// Thrown when the CUDA context is lost (a kernel faulted): the worker reports and exits.
struct ContextLost {
  std::string reason;
};

class Session {
 public:
  explicit Session(const nlohmann::json& setup);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  [[nodiscard]] nlohmann::json info() const { return info_; }
  nlohmann::json run(const nlohmann::json& request);
  nlohmann::json retime(const nlohmann::json& request);

 private:
  struct Loaded {
    codegen::Variant variant;
    std::optional<gpu::Module> module;
    std::vector<CUfunction> functions;  // per plan step (nullptr for cuDNN steps)
  };
  struct Sample {
    double total_ms = 0;
    double kernel_ms = 0;
  };

  void make_draw(int d);
  gpu::CudnnConv& conv_for(spec::Layout layout);
  CUdeviceptr resolve(const Loaded& l, const std::string& name);
  bool plan_writes(const codegen::Variant& v, const std::string& name) const;
  static std::vector<std::string> written_buffers(const codegen::Variant& v);
  // Runs the plan once; events (if given) get recorded around each step.
  void execute(Loaded& l, bool record_events);
  void sync_or_lose(const std::string& what);
  nlohmann::json verify(Loaded& l, const nlohmann::json& policy);
  Sample time_once(Loaded& l);
  nlohmann::json time(Loaded& l, const TimingPolicy& policy);
  void flush_l2_if_needed();
  double measure_copy_bandwidth();

  spec::Problem problem_;
  spec::Problem conv_only_;  // same conv, no epilogue: checks the cudnn candidate
  gpu::MathMode math_;
  uint64_t seed_ = 1;
  int draws_ = 2;
  int draw_ = 0;  // which draw the plan's inputs resolve to
  gpu::DeviceInfo device_;
  gpu::Context ctx_;
  gpu::Stream stream_;
  gpu::CudnnHandle cudnn_;
  std::unique_ptr<reference::GpuReference> ref_;
  std::unique_ptr<reference::GpuReference> conv_ref_;
  BufferSet bufs_;
  std::map<int, std::unique_ptr<gpu::CudnnConv>> convs_;  // by layout
  std::map<int, nlohmann::json> conv_choices_;             // from the tuner (restarts) or found here
  gpu::DeviceBuffer workspace_;
  gpu::DeviceBuffer l2_scrub_;
  std::map<std::string, Loaded> loaded_;
  std::vector<gpu::Event> events_;
  nlohmann::json info_;
};

}  // namespace fusetune::tune
