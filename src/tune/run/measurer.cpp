#include "tune/run/measurer.hpp"

#include <fmt/format.h>

#include "tune/run/margins.hpp"

namespace fusetune::tune {

using codegen::Role;

void Measurer::measure_all(Role role) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_.result(i).variant.role() == role) todo.push_back(i);
  const size_t width = role == Role::solution ? fleet_.size() : 1;
  // The workers' setup (inputs, references, its own progress line) comes first, so the count
  // below runs uninterrupted.
  if (!todo.empty()) {
    fleet_.ensure_session(0);
    fleet_.ready(width);
  }
  size_t done = 0;
  for (size_t i : todo) {
    ctx_.progress(role == Role::solution ? "verifying and timing"
                  : role == Role::floor  ? "verifying and timing floors"
                                         : "verifying and timing baselines",
                  ++done, todo.size(), rows_.result(i).variant.name);
    flush(false);
    if (!dispatch(i, idle_lane(width))) batch_.push_back(i);  // nothing to run: filed as it is
  }
  drain();
}

bool Measurer::dispatch(size_t i, size_t l, const std::vector<size_t>& ahead) {
  if (rows_.result(i).status != protocol::Status::ok) return false;
  fleet_.ensure_session(l);
  answered_.erase(i);
  ctx_.trace(fmt::format("lane {} runs {}", l, rows_.result(i).variant.name));
  protocol::RunRequest req = run_request(i);
  for (size_t a : ahead) {
    const auto& v = rows_.result(a).variant;
    if (fleet_.ask_ahead(l, v.name)) {
      req.prebuild.push_back(v);
      ctx_.trace(fmt::format("lane {} builds the cuDNN plan of {} ahead", l, v.name));
    }
  }
  fleet_.start(l, i, to_json(req), seconds(ctx_.opt.variant_timeout_s));
  return true;
}

protocol::RunRequest Measurer::run_request(size_t i) const {
  const auto& r = rows_.result(i);
  protocol::RunRequest req;
  req.variant = r.variant;
  req.cubin_path = rows_[i].cubin_path;
  if (ctx_.opt.quick) {
    req.timing.min_reps = 3;
    req.timing.max_reps = 5;
    req.timing.max_seconds = 0.2;
  } else if (r.variant.role() != Role::solution) {
    // A baseline's or floor's first pass only ranks (which floor, the conv's share of each
    // design's estimate): their reported figures come from the finalist and confirmation
    // rounds. Up to 200 samples of a 3.6 ms unfused pipeline was 0.7 s of a cold tune.
    req.timing.max_reps = 40;
    req.timing.max_seconds = 0.25;
  } else if (const auto best = rows_.fastest(rows_.ready(Role::solution))) {
    // A solution this far behind the best measured so far cannot be a finalist beside it
    // (rounds/finalists.cpp: a design out of reach sends its best alone, re-timed there anyway).
    req.timing.behind_ms = (1 + kOutOfReach) * rows_.result(*best).time.median_ms;
  }
  // The run's conv choices (the first GPU's, or another's for a layout the first has not run):
  // every GPU runs the same conv, and none searches for one already chosen.
  req.conv_choices = fleet_.conv_choices();
  return req;
}

void Measurer::apply_run(size_t l, size_t i, LaneAnswer a) {
  auto& r = rows_.result(i);
  batch_.push_back(i);
  answered_.insert(i);
  ctx_.trace(fmt::format("lane {} answered for {}{}", l, r.variant.name, a.lost ? " (lost)" : ""));
  if (a.lost) {
    r.status = a.lost->timed_out ? protocol::Status::timeout : protocol::Status::faulted;
    r.reason = a.lost->reason;
    fleet_.restart(l);
    return;
  }
  switch (protocol::reply_kind(a.reply)) {
    case protocol::ReplyKind::error:
      r.status = protocol::Status::launch_failed;
      r.reason = protocol::error_reply_from_json(a.reply).error;
      return;
    case protocol::ReplyKind::fault:  // the worker caught a lost context, said so and exited
      r.status = protocol::Status::faulted;
      r.reason = protocol::fault_reply_from_json(a.reply).reason;
      fleet_.restart(l);
      return;
    case protocol::ReplyKind::answer: break;
  }
  const protocol::RunReply rr = protocol::run_reply_from_json(a.reply);
  r.status = rr.status;
  r.reason = rr.reason;
  r.error = rr.error;
  r.verified = rr.status == protocol::Status::ok;
  r.timed = rr.timed;
  if (rr.timed) {
    r.time = rr.time;
    r.gpu = fleet_.device(l);
  }
  if (!rr.convs.empty()) ctx_.report.conv_names[r.variant.name] = rr.convs;
  // The first GPU's choices are the run's (its worker may replace a stored choice that no
  // longer verifies); another GPU adds only a layout none had chosen when it ran.
  protocol::ConvChoices& choices = fleet_.conv_choices();
  if (l == 0) {
    for (const auto& [layout, choice] : rr.conv_choices) choices[layout] = choice;
  } else {
    choices.insert(rr.conv_choices.begin(), rr.conv_choices.end());
  }
  for (const auto& n : rr.notes) ctx_.add_note(n);
}

size_t Measurer::idle_lane(size_t width) {
  for (size_t l = 0; l < width; ++l)
    if (!fleet_.busy(l)) return l;
  const size_t l = fleet_.wait_any();
  collect(l);
  return l;
}

void Measurer::collect(size_t l) {
  auto [tag, answer] = fleet_.take(l);
  if (tag == EarlyConfirmation::kTag) {
    early_.finish(std::move(answer));
  } else {
    apply_run(l, tag, std::move(answer));
  }
}

void Measurer::wait_for(size_t i) {
  while (answered_.count(i) == 0) collect(fleet_.wait_any());
}

void Measurer::drain() {
  for (size_t l = 0; l < fleet_.size(); ++l)
    if (fleet_.busy(l)) collect(l);
}

void Measurer::confirm_early_now() {
  early_.start();
  if (fleet_.busy(0)) collect(0);
}

void Measurer::flush(bool force) {
  if (ctx_.opt.on_batch && !batch_.empty() && (force || batch_.size() >= 16)) {
    rows_.report_batch(ctx_.report, ctx_.opt, batch_);
    batch_.clear();
  }
}

// The floors' first passes stand in for every design's conv step while the solutions' first
// passes are compared (estimate()), and those are short bursts too, so the two compare like for
// like. Designs are compared with each other in the finalist round, interleaved, on their own
// figures.
void Measurer::learn_conv() {
  for (size_t i : rows_.ready(Role::floor)) {
    const auto& r = rows_.result(i);
    for (size_t s = 0; s < r.variant.plan.size(); ++s)
      if (r.variant.plan[s].kind() == codegen::StepKind::cudnn_conv && r.variant.plan[s].timed &&
          s < r.time.step_median_ms.size())
        conv_ms_[int(r.variant.plan[s].conv().layout)] = r.time.step_median_ms[s];
  }
}

double Measurer::estimate(size_t i) const {
  const auto& r = rows_.result(i);
  double t = 0;
  for (size_t s = 0; s < r.variant.plan.size() && s < r.time.step_median_ms.size(); ++s) {
    const auto& st = r.variant.plan[s];
    if (!st.timed) continue;
    double step = r.time.step_median_ms[s];
    if (st.kind() == codegen::StepKind::cudnn_conv)
      if (auto it = conv_ms_.find(int(st.conv().layout)); it != conv_ms_.end()) step = it->second;
    t += step;
  }
  return t;
}

CostInputs Measurer::cost_inputs() const {
  CostInputs in;
  in.dev = limits_;
  in.copy_gbps = ctx_.report.copy_gbps;
  in.tensor_tflops = ctx_.opt.math == MathMode::fp32 ? 51 : 495;
  in.conv_ms = conv_ms_;
  return in;
}

}  // namespace fusetune::tune
