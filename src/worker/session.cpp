#include "worker/session.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "codegen/variant_check.hpp"
#include "common/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cudnn_check.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/event.hpp"
#include "reference/model_samples.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"
#include "worker/context_lost.hpp"
#include "worker/model_inputs.hpp"
#include "worker/verify_memory.hpp"

namespace fusetune::worker {

namespace {

using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ExitCode::failure, fmt::format("worker cannot read {}", path));
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// FUSETUNE_TEST_REF_SLICE_IMAGES=S (test-only): verify sliced by S images even where whole
// answers fit, so the sliced path runs on small problems (tests/gpu_sliced_verify_test.cpp).
int64_t forced_slice_images() {
  const char* v = std::getenv("FUSETUNE_TEST_REF_SLICE_IMAGES");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 1)
    throw InputError(fmt::format("FUSETUNE_TEST_REF_SLICE_IMAGES={}: expected a number of images >= 1", v));
  return n;
}

}  // namespace

Session::Session(const protocol::SetupRequest& setup)
    : problem_(spec::parse(setup.problem)),
      math_(setup.math),
      device_(gpu::query_device(setup.device)),
      // the problem, or (version 2, past the whole reference's limits) its block of images'
      ref_compiles_(std::in_place, model_reference_problem(problem_), device_.limits.arch_flag(), math_),
      ctx_(setup.device) {
  const auto t0 = Clock::now();
  // A version-2 problem's float64 reference (GPU main-operator terms, CPU stages) has limits:
  // refused past them (`tune` says so before it starts a worker; this is for callers that do not).
  if (!problem_.is_conv2d_chain())
    if (auto why = why_no_model_reference(problem_)) throw InputError(*why);
  ctx_.make_current();
  cudnn_.set_stream(stream_.get());
  const CUstream s = stream_.get();

  // Refuse shapes that cannot fit before allocating anything, and slice verification by images
  // where whole answers, one per draw, do not fit (verify_memory.hpp).
  const auto& c = problem_.conv;
  const int draws = std::max(2, setup.draws);
  const VerifyMemory memory =
      plan_verify_memory(problem_, draws, double(gpu::device_memory().free_bytes), forced_slice_images());

  const std::string arch = device_.limits.arch_flag();
  ref_ = std::make_unique<reference::GpuReference>(model_reference_problem(problem_), math_, std::move(*ref_compiles_));
  ref_compiles_.reset();
  pool_ = std::make_unique<BufferPool>(*ref_);
  const auto t_draws = Clock::now();
  draws_ = std::make_unique<InputDraws>(problem_, *ref_, cudnn_, setup.seed, draws, setup.inputs,
                                        memory.slice_images == 0, s);
  check_ = std::make_unique<ReferenceCheck>(problem_, math_, arch, *draws_, *ref_, memory.slice_images, s);
  if (check_->sliced()) {
    // The report says why verification took longer than kept answers would.
    const auto& sl = check_->slices();
    setup_note_ = fmt::format("verification sliced by images: {}, so each comparison recomputes the float64 "
                              "reference in {} slice(s) of {} image(s){}",
                              memory.forced ? "FUSETUNE_TEST_REF_SLICE_IMAGES is set"
                                            : fmt::format("the answers of {} draws do not fit device memory", draws),
                              sl.size(), sl.front().images,
                              sl.back().images != sl.front().images ? fmt::format(", the last of {}", sl.back().images)
                                                                    : std::string());
  }
  if (const int64_t images = model_sample_images(problem_); images > 0)
    setup_note_ = fmt::format("verification on a block of {} of the {} images (or rows) per draw (the first, the "
                                "last, then across the batch): the whole problem is past the float64 reference's "
                                "limits; every element of the output is checked for being written",
                                images, reference::sample_batch(problem_));
  info_.draws_s = std::chrono::duration<double>(Clock::now() - t_draws).count();
  // Working sets below twice the L2 would be served from cache on repeat: scrub it first.
  const double working_set =
      problem_.is_conv2d_chain()
          ? 4.0 * double(c.input_elems() + c.conv_out_elems() + problem_.out_elems())
          : InputDraws::input_bytes(problem_) +
                4.0 * double(problem_.main_out_elems() + spec::elems(spec::out_shape(problem_)));
  const bool scrub = working_set < 2.0 * double(device_.limits.l2_bytes);
  graphs_ = std::make_unique<GraphCache>(cudnn_, problem_, math_, *pool_, s, ctx_.get());
  convs_ = std::make_unique<ConvAlgoCache>(cudnn_, problem_, math_, *draws_, *pool_, *check_, *graphs_, s,
                                           scrub ? 2 * size_t(device_.limits.l2_bytes) : 0);
  convs_->seed(setup.conv_choices);
  convs_->set_graph_head(size_t(std::max(0, setup.conv_graph_head)));
  main_ops_ = std::make_unique<MainOpSteps>(cudnn_, problem_, math_, *pool_, s, arch);
  runner_ = std::make_unique<PlanRunner>(*draws_, *pool_, *convs_, *graphs_, *main_ops_, s);
  verifier_ = std::make_unique<Verifier>(math_, *draws_, *pool_, *runner_, *check_);
  timer_ = std::make_unique<Timer>(*runner_, *ref_, size_t(device_.limits.l2_bytes), scrub);

  info_.device = {{"name", device_.name}, {"arch", arch}, {"sm_count", device_.limits.sm_count},
                  {"l2_bytes", device_.limits.l2_bytes}, {"total_mem", device_.total_mem},
                  {"driver_version", device_.driver_version}};
  info_.copy_gbps = measure_copy_bandwidth();
  sync_or_lose("setup");
  info_.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
}

Session::~Session() = default;

protocol::RunReply Session::run(const protocol::RunRequest& req) {
  protocol::RunReply reply;
  if (std::string bad = codegen::check_variant(req.variant, problem_); !bad.empty()) {
    reply.status = protocol::Status::launch_failed;
    reply.reason = "refused an unsound plan: " + bad;
    return reply;
  }
  convs_->adopt(req.conv_choices);
  // What the search runs next: built on other threads while this one verifies and times. Advice
  // only: nothing it throws (a thread that cannot start) may fail the run asked for.
  try {
    for (const codegen::Variant& v : req.prebuild) {
      const auto key = codegen::engine_of(v);
      if (!key || !codegen::check_variant(v, problem_).empty()) continue;
      for (const auto& st : v.plan)
        if (st.kind() == codegen::StepKind::cudnn_graph) graphs_->prebuild(graphs_->desc(st.graph()), *key);
    }
  } catch (const std::exception&) {
    // each plan is then built where it first runs
  }
  try {
    Loaded l = load_variant(req.variant, req.cubin_path.empty() ? std::string() : read_file(req.cubin_path));
    const VerifyOutcome v = verifier_->verify(l);
    reply.status = v.status;
    reply.reason = v.reason;
    reply.error = v.error;
    if (v.status == protocol::Status::ok && req.time) {
      reply.time = timer_->time(l, req.timing);
      reply.timed = true;
    }
    reply.convs = runner_->conv_labels(l.variant);
    if (v.status == protocol::Status::ok) loaded_[l.variant.name] = std::move(l);
  } catch (const gpu::CudaError& e) {
    if (e.context_lost()) throw ContextLost{e.what()};
    reply.status = protocol::Status::launch_failed;
    reply.reason = e.what();
  } catch (const worker::GraphRefused& e) {
    // cuDNN refused this engine configuration (or failed to run it): its answer is the reason.
    sync_or_lose("cuDNN graph");
    reply.status = protocol::Status::not_supported;
    reply.reason = e.what();
  } catch (const gpu::CudnnNotSupported& e) {
    // A legacy cuDNN call's NOT_SUPPORTED (tensors past 2^31 elements): a limit, not a fault.
    sync_or_lose("cuDNN");
    reply.status = protocol::Status::not_supported;
    reply.reason = e.what();
  }
  reply.conv_choices = convs_->choices();
  reply.notes = convs_->notes();
  if (!setup_note_.empty()) reply.notes.push_back(std::move(setup_note_));  // once per worker
  setup_note_.clear();
  for (std::string& n : graphs_->take_notes()) reply.notes.push_back(std::move(n));
  return reply;
}

const Loaded& Session::ensure_loaded(const codegen::Variant& v, const std::string& cubin_path) {
  if (auto it = loaded_.find(v.name); it != loaded_.end()) return it->second;
  protocol::RunRequest req;
  req.variant = v;
  req.cubin_path = cubin_path;
  req.time = false;
  const protocol::RunReply r = run(req);
  if (r.status != protocol::Status::ok)
    throw Error(ExitCode::failure, fmt::format("re-timing {}: it no longer verifies in a fresh worker: {}: {}", v.name,
                                               protocol::status_name(r.status), r.reason));
  return loaded_.at(v.name);
}

protocol::RetimeReply Session::retime(const protocol::RetimeRequest& req) {
  graphs_->settle();  // the reported figures are timed with no plan building beside them
  std::vector<const Loaded*> plans;
  for (const auto& e : req.entries) plans.push_back(&ensure_loaded(e.variant, e.cubin_path));
  protocol::RetimeReply reply;
  reply.results = req.sustained ? timer_->sustained(plans, req.round, size_t(std::max(0, req.turns)), &reply.notes)
                                : timer_->interleaved(plans, req.rounds, req.round);
  return reply;
}

protocol::EnginesReply Session::engines(const protocol::EnginesRequest& req) {
  protocol::EnginesReply reply;
  if (std::string bad = codegen::check_variant(req.variant, problem_); !bad.empty())
    throw Error(ExitCode::failure, "engines: refused an unsound plan: " + bad);
  const codegen::Step* graph = nullptr;
  for (const auto& st : req.variant.plan)
    if (st.kind() == codegen::StepKind::cudnn_graph) graph = &st;
  if (graph == nullptr) throw Error(ExitCode::failure, "engines: the variant has no cuDNN graph step");
  const auto t0 = Clock::now();
  try {
    const auto listed = graphs_->engines(graphs_->desc(graph->graph()), size_t(std::max(0, req.most)), req.build);
    for (const worker::GraphEngine& e : listed) {
      // A variant names its configuration by key (its params); one without a key is the
      // conv choice's alone (protocol::ConvChoice::engine_name), never a stored variant.
      if (e.by_name_only) {
        // Two such configurations can share a key (their unnamed knobs differ): one variant name.
        if (std::any_of(reply.engines.begin(), reply.engines.end(), [&](const auto& r) { return r.key == e.key; }))
          continue;
        reply.engines.push_back({e.key, e.name, false,
                                 fmt::format("a knob of this configuration has no name in cudnn-frontend {}: a "
                                             "variant of it could not be rebuilt from the database",
                                             FUSETUNE_CUDNN_FRONTEND_VERSION)});
      } else {
        reply.engines.push_back({e.key, e.name, e.built, e.reason});
      }
    }
  } catch (const worker::GraphRefused& e) {
    reply.refused = true;
    reply.reason = e.what();
  }
  reply.build_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return reply;
}

double Session::measure_copy_bandwidth() {
  // Device-to-device copy of 1 GiB (less on small cards): bytes read + written over time.
  const size_t bytes = std::min<size_t>(size_t(1) << 30, size_t(device_.total_mem / 16));
  gpu::DeviceBuffer a(bytes), b(bytes);
  const auto& cu = gpu::driver();
  const CUstream s = stream_.get();
  FT_CU_CALL(cu.cuMemsetD32Async(a.ptr(), 0x3F800000u, bytes / 4, s));
  gpu::Event e0, e1;
  std::vector<double> t;
  for (int i = 0; i < 13; ++i) {
    e0.record(s);
    FT_CU_CALL(cu.cuMemcpyDtoDAsync(b.ptr(), a.ptr(), bytes, s));
    e1.record(s);
    e1.synchronize();
    if (i >= 3) t.push_back(gpu::Event::elapsed_ms(e0, e1));
  }
  return 2.0 * double(bytes) / (protocol::summarize(t).median * 1e-3) / 1e9;
}

}  // namespace fusetune::worker
