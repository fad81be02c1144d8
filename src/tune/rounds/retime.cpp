#include "tune/rounds/retime.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"

namespace fusetune::tune {

protocol::RetimeRequest retime_request(const Rows& rows, const TuneOptions& opt, const std::vector<size_t>& idx,
                                       protocol::TimeRound round, bool sustained, int turns) {
  protocol::RetimeRequest req;
  req.rounds = std::max(1, opt.retime_rounds);
  req.round = round;
  req.sustained = sustained;
  req.turns = sustained ? turns : 0;
  for (size_t i : idx) req.entries.push_back({rows.result(i).variant, rows[i].cubin_path});
  return req;
}

std::chrono::milliseconds retime_timeout(const TuneOptions& opt, size_t plans) {
  return seconds(opt.variant_timeout_s * double(plans) + 60);
}

std::map<std::string, protocol::TimeFigures> retime_figures(const RunContext& ctx, const LaneAnswer& a,
                                                            protocol::TimeRound round) {
  if (a.lost)
    throw Error(ExitCode::failure,
                fmt::format("GPU worker lost while re-timing ({}): {}", time_round_name(round), a.lost->reason));
  throw_if_error(a.reply, "re-timing");
  if (protocol::reply_kind(a.reply) == protocol::ReplyKind::fault)  // the worker said so and exited
    throw Error(ExitCode::failure, fmt::format("GPU worker faulted while re-timing ({}): {}", time_round_name(round),
                                               protocol::fault_reply_from_json(a.reply).reason));
  protocol::RetimeReply rr = protocol::retime_reply_from_json(a.reply);
  ctx.report.notes.insert(ctx.report.notes.end(), rr.notes.begin(), rr.notes.end());
  return std::move(rr.results);
}

void retime(const RunContext& ctx, WorkerFleet& fleet, Rows& rows, const std::vector<size_t>& idx,
            protocol::TimeRound round, int turns) {
  // The confirmation round's figures are the ones reported and stored: sustained, as a model
  // runs the plan (timing_stats.hpp). Quick runs (correctness, smoke's paired comparison with
  // unfused) keep interleaved rounds, which need two plans.
  const bool sustained = round == protocol::TimeRound::confirmation && !ctx.opt.quick;
  if (idx.empty() || (idx.size() < 2 && !sustained)) return;
  fleet.ensure_session(0);
  ctx.trace(fmt::format("re-timing {} plans ({}, {})", idx.size(), time_round_name(round),
                        sustained ? "sustained" : "interleaved"));
  LaneAnswer a;
  try {
    a.reply = fleet.request_first(to_json(retime_request(rows, ctx.opt, idx, round, sustained, turns)),
                                  retime_timeout(ctx.opt, idx.size()));
  } catch (const WorkerLost& e) {
    a.lost = e;
  }
  ctx.trace("re-timing answered");
  const auto figures = retime_figures(ctx, a, round);
  for (size_t i : idx) {
    rows.result(i).time = figures.at(rows.result(i).variant.name);
    rows.result(i).gpu = fleet.device(0);
  }
  rows.report_batch(ctx.report, ctx.opt, idx);
}

}  // namespace fusetune::tune
