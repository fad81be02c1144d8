#pragma once
// The schedule of a sustained timing (Timer::sustained): one plan alone, or the winner and the
// runner-up taking turns on the GPU, A B B A A B ..., until all of them have settled at once
// (their last three windows' medians agree, timing_stats.hpp windows_settled) or the round's
// cap. GPU-free, so the schedule is unit-tested.
//
// Why turns. Under sustained load the H200's clocks dip every second or so: for 200-300 ms its
// kernels run 4-7% slower, both plans of a round alike (call 100's window medians,
// docs/runs/2026-12-04/call100-sustain-turns.tar.xz:phases.txt). The settle rule waits for three calm
// windows. Timed one after the other (until 2026-12-04), the winner got them right after its
// heat; the runner-up started as the next dip came and waited it out: it took 0.5-2.0 s to
// settle against the winner's 0.6 s (calls 98, 100), on every cold tune's path. A round of turns
// lasts one window (each turn window_ms / the plans taking turns), so the plans' last three
// windows span the 300 ms a plan alone spans: the same calm stretch for both, found once.
// Only the pair the tie rule compares takes turns: a plan's clocks follow its neighbour's power
// draw (call 101: cuDNN's conv taking turns with the unfused pipeline read 0.918-1.011 ms,
// 0.978-0.986 alone), so the floor and a baseline that is neither winner nor runner-up are each
// timed alone.
//
// A plan alone is timed as it was before turns (heat, then windows of window_ms until three
// agree, `tests/timing_stats_test.cpp`), but for two details: the sample queued past a window's
// end is thrown away (its GPU time, one sample a window, is not counted), and at the cap the
// last window is the one the cap cut short.
#include <cstddef>
#include <optional>
#include <vector>

#include "protocol/timing_stats.hpp"

namespace fusetune::worker {

class SustainRound {
 public:
  // One policy per plan, in the round's order: the first plan's heat_ms is spent before its
  // first window; the others take their first turns after it, with no heat of their own.
  explicit SustainRound(std::vector<protocol::SustainPolicy> policies);

  // The plan whose turn it is; nullopt once every plan is done.
  [[nodiscard]] std::optional<size_t> current() const;
  // Whether a sample of busy_ms, added now, would end the current turn. The timer queues the
  // next sample while the GPU runs this one only when it would not: a sample queued past a
  // turn's end is thrown away (it would straddle two windows).
  [[nodiscard]] bool would_close(double busy_ms) const;
  // Files a sample of the current plan: its timed time (the figure is made of these), and its
  // span on the GPU, the L2 scrubs between its repetitions included, which the heat, the windows
  // and the caps count. For a plan of microseconds the scrubs are most of that span (2 x 60 MB
  // at about 3 TB/s is 40 us per repetition): counting only the timed repetitions kept the GPU
  // busy 5x longer than the policy meant, 3-4 s a plan (call 51's confirmation rounds, 12-19 s
  // on small problems). True when it ended the turn (current() has moved on) or the first
  // plan's heat (its first window follows: the timer starts it afresh, as a turn).
  bool add(double sample_ms, double busy_ms);

  // Plan p's samples so far, in order (its heat included), and, once it is done, the index of
  // its figure's first sample among them: its last settle_windows windows (or, at a cap with
  // fewer, every sample after its heat).
  [[nodiscard]] const std::vector<double>& samples(size_t p) const { return plans_.at(p).sample_ms; }
  [[nodiscard]] std::optional<size_t> first(size_t p) const { return plans_.at(p).first; }
  // The medians of plan p's windows (its heat excluded), in order: for the round's notes.
  [[nodiscard]] std::vector<double> window_medians(size_t p) const;
  // Busy GPU time filed for plan p.
  [[nodiscard]] double busy_ms(size_t p) const { return plans_.at(p).busy_total; }
  [[nodiscard]] size_t size() const { return plans_.size(); }

 private:
  struct Plan {
    protocol::SustainPolicy policy;
    std::vector<double> sample_ms;
    std::vector<size_t> window_start;  // each window's first sample (the heat is none)
    double busy_total = 0;
    bool heated = false;
    std::optional<size_t> first;
  };
  void next_turn();
  // At the end of each round: whether the plans are done (then each one's `first` is set).
  bool release();
  [[nodiscard]] static bool over_cap(const Plan& pl, size_t samples, double round_busy);
  [[nodiscard]] bool capped(size_t p) const;
  [[nodiscard]] static protocol::TimingSummary window(const Plan& pl, size_t w);  // window w's samples
  // Its last settle_windows windows' first sample once they have settled.
  [[nodiscard]] std::optional<size_t> settled(size_t p) const;
  [[nodiscard]] size_t cap_first(size_t p) const;

  std::vector<Plan> plans_;
  std::vector<size_t> order_;  // this round's remaining turns, next first
  size_t round_ = 0;
  double round_busy_ = 0;       // busy GPU time of all the plans together
  std::optional<size_t> turn_;  // the plan in its turn
  double turn_busy_ = 0;
  int turn_samples_ = 0;
};

}  // namespace fusetune::worker
