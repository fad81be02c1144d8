#pragma once
// Timing in the worker. One sample: scrub the L2 (when the working set would fit in it), run
// the one-time transforms, enqueue a short GPU-side spin, then the timed steps between CUDA
// events (one after every step). The spin lasts longer than the host takes to enqueue the
// region, so host launch latency (cuDNN's included) never reaches the events, for every
// candidate alike. Plans shorter than ~50 us run back to back `batch` times per sample, so the
// events' resolution and jitter stay under 2% of what they measure (the L2 is scrubbed once per
// sample then: later repetitions find it warm, for every candidate alike).
#include <map>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/event.hpp"
#include "reference/gpu_reference.hpp"
#include "worker/plan_runner.hpp"
#include "protocol/timing_stats.hpp"
#include "protocol/variant_result.hpp"

namespace fusetune::worker {

class Timer {
 public:
  // flush_l2: scrub the L2 before each sample (working set below twice its size).
  Timer(PlanRunner& runner, reference::GpuReference& ref, size_t l2_bytes, bool flush_l2);

  // Samples until the policy says stop (timing_stats.hpp); first-pass figures.
  [[nodiscard]] protocol::TimeFigures time(const Loaded& l, const protocol::TimingPolicy& policy);
  // A B C A B C ...: `rounds` samples of each, interleaved so drift (clocks, temperature)
  // hits every one alike, after the plans ran back to back long enough for the GPU to reach its
  // sustained clocks; figures per variant name, with the per-round samples kept.
  [[nodiscard]] std::map<std::string, protocol::TimeFigures> interleaved(const std::vector<const Loaded*>& plans, int rounds,
                                                              protocol::TimeRound round);
  // Each plan back to back until its time settles at the clocks the power limit leaves it
  // (timing_stats.hpp, protocol::SustainPolicy); the figure is the settled samples. The first `turns`
  // plans (winner and runner-up) take turns a window each (sustain_round.hpp); the others, and
  // all of them when `turns` < 2, are timed each alone after them. The confirmation round: the
  // figures reported and stored are what a model running the plan sees. `notes`, when given,
  // gets a line per plan (samples, busy GPU time, its windows' medians) and the wall time.
  [[nodiscard]] std::map<std::string, protocol::TimeFigures> sustained(const std::vector<const Loaded*>& plans, protocol::TimeRound round,
                                                             size_t turns, std::vector<std::string>* notes = nullptr);

 private:
  struct Prepared {
    int batch = 1;
    double spin_us = 20;
    double ahead_spin_us = 20;  // a sample queued while the one before runs (sustained())
    double host_us = 0;    // the host's time to enqueue one repetition of the timed steps
    double sample_ms = 0;  // one sample's GPU time, all its repetitions (prepare()'s probe)
  };
  struct Sample {
    double total_ms = 0;
    double kernel_ms = 0;
    double busy_ms = 0;  // the whole sample on the GPU: every repetition and the L2 scrubs between
    std::vector<double> step_ms;
  };
  Prepared prepare(const Loaded& l, int warmup);
  // sustained() for `plans` in one schedule (sustain_round.hpp): taking turns when more than
  // one. `first`: its first plan heats the GPU (nothing ran before it in this request).
  void sustain(const std::vector<const Loaded*>& plans, bool first, protocol::TimeRound round,
               std::map<std::string, protocol::TimeFigures>& out, std::vector<std::string>* notes);
  // The plans' timed steps back to back for about kHeatMs of GPU time (timer.cpp says why).
  void heat(const std::vector<const Loaded*>& plans, const std::vector<Prepared>& prepared);
  Sample sample(const Loaded& l, const Prepared& p);
  // sample() in two halves, so that one sample can be queued while the GPU runs the one before
  // (sustained()): slot 0 or 1 picks the events.
  void enqueue(const Loaded& l, const Prepared& p, int slot, double spin_us);
  Sample collect(const Loaded& l, const Prepared& p, int slot);
  static protocol::TimeFigures summarize_samples(const std::vector<Sample>& samples, int batch, protocol::TimeRound round);
  // A round's figures (interleaved or sustained): summarize_samples with every sample kept.
  static protocol::TimeFigures round_figures(const std::vector<Sample>& samples, int batch, protocol::TimeRound round);

  PlanRunner& runner_;
  reference::GpuReference& ref_;
  bool flush_l2_;
  gpu::DeviceBuffer l2_scrub_;
  std::vector<gpu::Event> events_[2];
  gpu::Event span_start_[2];  // before a sample's first scrub: busy_ms starts here
};

}  // namespace fusetune::worker
