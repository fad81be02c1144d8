#include "tune/run/engine_expansion.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/candidates.hpp"
#include "codegen/cudnn_engine.hpp"

namespace fusetune::tune {

namespace {

// Template t's rows (without ids yet): its configurations, or itself with why it has none.
std::vector<protocol::VariantResult> expand(const RunContext& ctx, WorkerFleet& fleet, protocol::VariantResult t,
                                            const TuneDecision& decision, bool build) {
  if (ctx.opt.math == MathMode::fp32) {
    // Seen on the H200 (cuDNN 9.19): with the TF32 tensor cores ruled out, cuDNN offered one
    // engine for the fused conv + epilogue graph, taking 360 ms for kernelbench-31. Reported
    // as what it is, not timed as a slow choice.
    t.status = protocol::Status::not_supported;
    t.reason = "strict fp32: cuDNN's runtime fusion of conv + epilogue runs on TF32 tensor cores only";
    return {t};
  }
  ctx.progress("listing cuDNN engine configurations", 0, 1, t.variant.name);
  ctx.trace(fmt::format("listing cuDNN engine configurations of {}", t.variant.name));
  fleet.ensure_session(0);
  protocol::EnginesRequest req{t.variant, std::max(0, ctx.opt.max_variants), build};
  nlohmann::json reply;
  try {
    reply = fleet.request_first(to_json(req), seconds(std::max(600.0, ctx.opt.variant_timeout_s)));
  } catch (const WorkerLost& e) {
    t.status = e.timed_out ? protocol::Status::timeout : protocol::Status::faulted;
    t.reason = "listing cuDNN engine configurations: " + e.reason;
    fleet.restart(0);
    return {t};
  }
  switch (protocol::reply_kind(reply)) {
    case protocol::ReplyKind::error:
      t.status = protocol::Status::launch_failed;
      t.reason = "listing cuDNN engine configurations: " + protocol::error_reply_from_json(reply).error;
      return {t};
    case protocol::ReplyKind::fault:
      t.status = protocol::Status::faulted;
      t.reason = "listing cuDNN engine configurations: " + protocol::fault_reply_from_json(reply).reason;
      fleet.restart(0);
      return {t};
    case protocol::ReplyKind::answer: break;
  }
  const protocol::EnginesReply er = protocol::engines_reply_from_json(reply);
  if (er.refused) {
    t.status = protocol::Status::not_supported;
    t.reason = er.reason;
    return {t};
  }
  ctx.add_note(fmt::format("cuDNN engine configurations for {}: {} listed{} in {:.2f} s", t.variant.name,
                           er.engines.size(), req.build ? " and built" : " (each built when run)", er.build_s));
  std::vector<protocol::VariantResult> out;
  for (const protocol::EngineEntry& e : er.engines) {
    protocol::VariantResult r = t;
    r.variant = codegen::with_engine(t.variant, e.key);
    if (!decision.only.empty() && decision.only.count(r.variant.name) == 0) continue;
    if (!ctx.opt.shard.holds_name(r.variant.name)) continue;
    if (!e.built) {
      r.status = protocol::Status::not_supported;
      r.reason = fmt::format("cuDNN {}: {}", e.name, e.reason);
    }
    ctx.report.conv_names[r.variant.name] = {"cuDNN graph " + e.name};
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

void expand_engines(const RunContext& ctx, WorkerFleet& fleet, Rows& rows, const TuneDecision& decision, bool build) {
  for (size_t i = 0; i < rows.size();) {
    const auto& r = rows.result(i);
    if (!codegen::engines_at_run_time(r.variant) || codegen::engine_of(r.variant) ||
        r.status != protocol::Status::ok) {
      ++i;
      continue;
    }
    std::vector<protocol::VariantResult> made = expand(ctx, fleet, r, decision, build);
    std::vector<Row> made_rows;
    for (auto& m : made) {
      Row row = rows.make(std::move(m));
      row.cubin_path = rows[i].cubin_path;
      made_rows.push_back(std::move(row));
    }
    i += rows.replace(i, std::move(made_rows));
  }
}

}  // namespace fusetune::tune
