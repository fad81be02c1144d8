#pragma once
// The worker protocol as types: what the tuner asks of the worker process and what it answers.
// One JSON line per message over pipes (tune/worker_client.hpp); both sides convert through the
// functions here, so a field is named in one place.
//   device  -> the GPU's name, limits and driver
//   setup   -> inputs drawn, float64 references computed, copy bandwidth measured
//   run     -> one variant verified (every draw) and, if it passes, timed
//   retime  -> several variants timed interleaved, A B C A B C ..., one sample each per round
//   engines -> the cuDNN engine configurations for a cudnn-fused template's graph, built
//   quit
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/cudnn_engine.hpp"
#include "codegen/variant.hpp"
#include "common/math_mode.hpp"
#include "protocol/status.hpp"
#include "protocol/timing_stats.hpp"
#include "protocol/variant_result.hpp"

namespace fusetune::protocol {

// cuDNN's algorithm for the conv in one layout, as found (and verified) by a worker; handed
// to the next worker after a restart so it does not search again.
// Either a legacy algorithm (algo, math_type) or, when `engine` is set, an engine configuration
// of cuDNN's graph API for the conv alone.
struct ConvChoice {
  int algo = 0;
  int math_type = 0;
  float time_ms = 0;
  std::string label;  // "IMPLICIT_PRECOMP_GEMM (tf32)", "graph eng0_k2=1 (tf32)"
  std::optional<codegen::EngineKey> engine;  // a graph-API configuration built from its key
  std::string engine_name;  // else one found by cuDNN's name (its knobs have no frontend name)
  [[nodiscard]] bool graph() const { return engine.has_value() || !engine_name.empty(); }
};
using ConvChoices = std::map<int, ConvChoice>;  // by layout: 0 NCHW, 1 NHWC

// How the worker draws the inputs. uniform: x ~ U(0, 1) like torch.rand, filters like
// nn.Conv2d's (reference/problem_data.hpp), what every tune uses. wide: x over 2^-20 .. 2^20 and
// filters whose sums cancel in part (make_wide_range_data), for accuracy tests that tell TF32
// products from fp32 ones (3xTF32 must pass the fp32 rule there; a TF32 product cannot).
enum class InputRange { uniform, wide };

struct SetupRequest {
  std::string problem;  // canonical spec
  MathMode math = MathMode::tf32;
  int device = 0;
  uint64_t seed = 20261129;
  // Three by default: draw 2 (positive filters, coherent sums) is the one on which a conv that
  // truncates to TF32 fails the L2 limit by 9-18x; on draws 0 and 1 it can fail by as little as
  // 1.04x (docs/verification.md, "Why truncation cannot fail by 3x on centred draws").
  int draws = 3;
  InputRange inputs = InputRange::uniform;
  ConvChoices conv_choices;
  // > 0: of the graph API's configurations for the conv alone, only the first this many in
  // cuDNN's heuristics order are built and timed (conv_cache.hpp); 0: all of them.
  int conv_graph_head = 0;
};

struct SetupReply {
  nlohmann::json device;  // name, arch, sm_count, l2_bytes, total_mem, driver_version
  double copy_gbps = 0;
  double setup_s = 0;
  double draws_s = 0;    // of setup_s: the input draws and their float64 references
  double handles_s = 0;  // of setup_s: the context, stream and cuDNN handle
  // When the worker began it, on the machine's monotonic clock (steady_clock, seconds): the
  // tuner's trace places the worker's setup on its own timeline (trace.hpp).
  double begun_s = 0;
};

struct RunRequest {
  codegen::Variant variant;
  std::string cubin_path;  // "" when the variant has no source
  bool time = true;
  TimingPolicy timing;
  // cuDNN's conv choices made by another worker (the tuner's first GPU, with several): this
  // worker takes those for layouts it has not chosen yet, so every GPU runs the same conv
  // configuration and none searches again.
  ConvChoices conv_choices;
  // cuDNN graph configurations (cudnn-fused variants) the tuner expects to ask for next: the
  // worker builds their plans on a thread of its own while it runs this one (tune/plan_prebuild.hpp).
  std::vector<codegen::Variant> prebuild;
};

struct RunReply {
  Status status = Status::ok;
  std::string reason;
  ErrorFigures error;
  bool timed = false;
  TimeFigures time;
  std::vector<std::string> convs;  // the cuDNN algorithm of each conv step, as labels
  ConvChoices conv_choices;        // everything the worker has chosen so far
  std::vector<std::string> notes;  // e.g. cuDNN algorithms rejected by verification
};

struct RetimeEntry {
  codegen::Variant variant;
  std::string cubin_path;
};

struct RetimeRequest {
  std::vector<RetimeEntry> entries;
  int rounds = 15;
  TimeRound round = TimeRound::finalists;
  // Each plan back to back until settled (Timer::sustained), instead of `rounds` interleaved
  // samples: the confirmation round of a full tune.
  bool sustained = false;
  // Sustained: the first `turns` entries take turns a window each (sustain_round.hpp), the
  // winner and the runner-up whose comparison is a verdict; the others are each timed alone
  // after them. 0 or 1: every entry alone.
  int turns = 0;
};

struct RetimeReply {
  std::map<std::string, TimeFigures> results;  // by variant name
  std::vector<std::string> notes;  // sustained: where each plan's time went (samples, busy, wall)
};

// A template variant (cudnn-fused without an engine configuration) whose graph step's
// configurations the worker lists and builds (tune/graph_cache.hpp).
struct EnginesRequest {
  codegen::Variant variant;
  int most = 0;  // > 0: only the first `most` configurations (tests keep GPU runs short)
  bool build = true;  // false: listed unbuilt, each built when first run (the guided search)
};

struct EngineEntry {
  codegen::EngineKey key;
  std::string name;    // cuDNN's tag
  bool built = false;  // false: cuDNN refused to build it; `reason` says why
  std::string reason;
};

struct EnginesReply {
  bool refused = false;  // cuDNN refused the graph itself (`reason`): the template is not_supported
  std::string reason;
  std::vector<EngineEntry> engines;
  double build_s = 0;
};

nlohmann::json to_json(const EnginesRequest& r);
nlohmann::json to_json(const EnginesReply& r);
EnginesRequest engines_request_from_json(const nlohmann::json& j);
EnginesReply engines_reply_from_json(const nlohmann::json& j);

nlohmann::json to_json(const SetupRequest& r);
nlohmann::json to_json(const SetupReply& r);
nlohmann::json to_json(const RunRequest& r);
nlohmann::json to_json(const RunReply& r);
nlohmann::json to_json(const RetimeRequest& r);
nlohmann::json to_json(const RetimeReply& r);
nlohmann::json to_json(const TimeFigures& t);
nlohmann::json to_json(const ConvChoices& c);

SetupRequest setup_request_from_json(const nlohmann::json& j);
SetupReply setup_reply_from_json(const nlohmann::json& j);
RunRequest run_request_from_json(const nlohmann::json& j);
RunReply run_reply_from_json(const nlohmann::json& j);
RetimeRequest retime_request_from_json(const nlohmann::json& j);
RetimeReply retime_reply_from_json(const nlohmann::json& j);
TimeFigures time_from_json(const nlohmann::json& j);
ConvChoices conv_choices_from_json(const nlohmann::json& j);

}  // namespace fusetune::protocol
