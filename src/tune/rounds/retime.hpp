#pragma once
// Re-timing rows on the first GPU, interleaved (the finalist round) or sustained (the
// confirmation round): the request, and the figures of its reply by variant name. A lost or
// faulted worker ends the run, since the figures the report rests on are these.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "protocol/protocol.hpp"
#include "tune/fleet/worker_fleet.hpp"
#include "tune/run/rows.hpp"
#include "tune/run/run_context.hpp"

namespace fusetune::tune {

[[nodiscard]] protocol::RetimeRequest retime_request(const Rows& rows, const TuneOptions& opt,
                                                     const std::vector<size_t>& idx, protocol::TimeRound round,
                                                     bool sustained, int turns = 0);
[[nodiscard]] std::chrono::milliseconds retime_timeout(const TuneOptions& opt, size_t plans);
// Its notes go to the report.
[[nodiscard]] std::map<std::string, protocol::TimeFigures> retime_figures(const RunContext& ctx, const LaneAnswer& a,
                                                                          protocol::TimeRound round);

// Re-times `idx` on lane 0; their figures are replaced by this round's and handed to on_batch.
// Sustained for a full run's confirmation round, where the first `turns` take turns (the winner
// and the runner-up: protocol::RetimeRequest::turns).
void retime(const RunContext& ctx, WorkerFleet& fleet, Rows& rows, const std::vector<size_t>& idx,
            protocol::TimeRound round, int turns = 0);

}  // namespace fusetune::tune
