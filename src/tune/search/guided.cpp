// `--strategy model`: the guided search (guided_search.hpp) picks which compiled solution to
// measure next (each design's most promising by the cost model first, then by a model fitted to
// what it measured) and stops when nothing left is predicted to beat the best by its margin, or
// at the time budget. The variants it never ran leave the rows: they were neither verified nor
// timed. It measures as the solutions compile, and leads the compile pool with its lookahead.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <string>

#include "codegen/candidates.hpp"
#include "codegen/cudnn_engine.hpp"
#include "tune/guided_search.hpp"
#include "tune/search/searcher.hpp"

namespace fusetune::tune {

namespace {

// Graph configurations of cuDNN's conv alone the workers' setup times (conv_cache.hpp says why).
constexpr int kConvGraphHead = 8;
// The cuDNN graph configurations (cudnn-fused) among the search's next kAheadLook picks
// (GuidedSearch::picks), at most kAhead, are those whose plans are worth building while the GPU
// is busy (their runtime-compiled kernels take 0.5 s each on the H200, call 76). Its picks, not
// its ranking's head: near the search's end that head holds only items it will not pick, and a
// plan asked for there was built while the finalist round waited for it
// (PlanPrebuilder::settle): 0.2-0.9 s of every cold kernelbench-32 tune in calls 85-87.
constexpr size_t kAheadLook = 6;
constexpr size_t kAhead = 2;

class GuidedSearcher final : public Searcher {
 public:
  explicit GuidedSearcher(uint64_t seed) { options_.seed = seed; }

  int conv_graph_head() const override { return kConvGraphHead; }
  bool measures_while_compiling() const override { return true; }
  void priors_changed(Measurer& m) override;
  void measure(Measurer& m) override;

 private:
  std::vector<SearchItem> search_items(Measurer& m, std::vector<size_t>& idx) const;
  void prefer_next(Measurer& m, const GuidedSearch& search, const std::vector<size_t>& idx) const;
  std::vector<size_t> graphs_ahead(const Rows& rows, const std::vector<size_t>& picks, const std::vector<size_t>& idx,
                                   size_t now) const;

  GuidedOptions options_;
  bool started_ = false;  // measure() began: its lookahead leads the pool
};

// The solutions the search chooses among (positions of rows, into `idx`), with their priors
// from what the cost model knows now: those compiling and those compiled without a failure.
std::vector<SearchItem> GuidedSearcher::search_items(Measurer& m, std::vector<size_t>& idx) const {
  const CostInputs in = m.cost_inputs();
  const Rows& rows = m.rows();
  std::vector<SearchItem> items;
  idx.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows.result(i);
    if (r.variant.role() != codegen::Role::solution) continue;
    if (!rows[i].compile_slot && r.status != protocol::Status::ok) continue;
    idx.push_back(i);
    // Registers unknown for every variant (most are not compiled yet): the search's order
    // must not depend on which compiles happened to finish first (--seed reproduces it).
    items.push_back({r.variant.name, r.variant.design, r.variant.params, prior_ms(m.ctx().problem, r.variant, -1, in)});
  }
  return items;
}

// Before the search starts, the pool compiles the lookahead of a search made from the priors
// as known now; called again as the setup and the baselines bring the copy rate and the conv's
// time, so that by the first pick the pool has mostly been compiling what the search will pick
// (the priors from the nominal rate and no conv probed another fused-conv variant than the
// search did, and the pool spent #31's first 3 s on what the search never measured: call 95).
// Mostly: the search then holds cuDNN's engine configurations where this one holds their
// templates (listed later, by engine expansion). Once the search runs, its own lookahead leads
// the pool: a worker set up again (after a fault) must not put the priors' back.
void GuidedSearcher::priors_changed(Measurer& m) {
  if (!m.compile().running() || started_) return;
  std::vector<size_t> idx;
  std::vector<SearchItem> items = search_items(m, idx);
  if (items.empty()) return;
  prefer_next(m, GuidedSearch(std::move(items), options_), idx);
}

// The pool compiles first what the search will most likely ask for next: its lookahead, the
// picks it would make if every answer came back as it expects (twice the pool's width: the picks
// move as the search learns). In the simulation of tests/guided_search_test.cpp the ranking's
// head cut the compile waits over the recorded landscapes by a fifth, the lookahead by a third
// more (208.9 -> 163.8 -> 106.4 s over the 114 landscapes recorded before call 95; 253.5 ->
// 186.8 -> 121.6 while a conv step the baselines had not timed counted 0 in the priors).
void GuidedSearcher::prefer_next(Measurer& m, const GuidedSearch& search, const std::vector<size_t>& idx) const {
  CompileStage& compile = m.compile();
  if (!compile.running()) return;
  const size_t width = 2 * std::max<size_t>(1, compile.threads());
  std::vector<size_t> first;
  for (size_t j : search.lookahead(width)) {  // its picks, then the rest of its ranking
    if (first.size() >= width) break;
    if (const auto& slot = m.rows()[idx[j]].compile_slot) first.push_back(*slot);
  }
  compile.prefer(std::move(first));
}

std::vector<size_t> GuidedSearcher::graphs_ahead(const Rows& rows, const std::vector<size_t>& picks,
                                                 const std::vector<size_t>& idx, size_t now) const {
  std::vector<size_t> out;
  for (size_t j : picks) {  // at most kAheadLook: GuidedSearch::picks(kAheadLook)
    if (out.size() == kAhead) break;
    const size_t i = idx[j];
    const auto& r = rows.result(i);
    if (i != now && r.status == protocol::Status::ok && codegen::engines_at_run_time(r.variant) &&
        codegen::engine_of(r.variant))
      out.push_back(i);
  }
  return out;
}

void GuidedSearcher::measure(Measurer& m) {
  const RunContext& ctx = m.ctx();
  Rows& rows = m.rows();
  WorkerFleet& fleet = m.fleet();
  started_ = true;
  std::vector<size_t> idx;
  GuidedSearch search(search_items(m, idx), options_);
  if (!idx.empty()) {
    fleet.ensure_session(0);
    fleet.ready(fleet.size());
  }
  // A cold tune (solutions still compiling): the first GPU confirms the baselines now, before
  // the first pick, while the pool compiles. Started at the search's first wait for a compile
  // instead, it waited for the cuDNN plans the picks before had asked to be built ahead (a
  // re-timing round starts once none is building: PlanPrebuilder::settle), 0.5 s of call 83's
  // cold #31 tune, and the search waited for it after its compile was in. Started after the
  // compiled probes instead (their answers re-pointing the pool for the whole confirmation),
  // it bought nothing measurable (call 97: cold #31 7.4-8.9 s against 7.2-8.7).
  if (m.early().due() && std::any_of(idx.begin(), idx.end(), [&](size_t i) { return m.compile().pending(rows[i]); }))
    m.early().start();
  const size_t width = fleet.size();
  const auto t0 = Clock::now();
  std::string stop = "no unmeasured variant is predicted to beat the best by its margin";
  bool stopped = false;
  // With several GPUs, one pick per GPU is out at a time. Answers are recorded in the order
  // their picks were made (a pick that failed to compile at once, when made), and the search
  // picks again only after each record: its picks depend on the answers, never on which GPU
  // answered first (--seed reproduces a search).
  std::deque<std::pair<size_t, size_t>> out;  // (item, row) started and not recorded, oldest first
  for (;;) {
    while (!stopped && out.size() < width) {
      if (ctx.opt.time_budget_s > 0 &&
          std::chrono::duration<double>(Clock::now() - t0).count() > ctx.opt.time_budget_s) {
        stop = fmt::format("the time budget of {} s", ctx.opt.time_budget_s);
        stopped = true;
        break;
      }
      const std::optional<size_t> j = search.next();
      if (!j) break;  // nothing worth measuring until the answers still out are in
      prefer_next(m, search, idx);  // what it learnt so far moves the pool's head
      const size_t i = idx[*j];
      ctx.progress("verifying and timing (guided)", search.measured() + search.pending() + 1, idx.size(),
                   rows.result(i).variant.name);
      m.compile().take(rows, i);
      if (rows.result(i).status != protocol::Status::ok) {  // a compile failure or over the device's limits
        search.record(*j, std::nullopt);
        continue;
      }
      m.flush(false);
      search.start(*j);
      m.dispatch(i, m.idle_lane(width), graphs_ahead(rows, search.picks(kAheadLook), idx, i));
      out.emplace_back(*j, i);
    }
    if (out.empty()) break;
    const auto [j, i] = out.front();
    out.pop_front();
    m.wait_for(i);
    const auto& r = rows.result(i);
    search.record(j, r.verified && r.timed ? std::optional<double>(m.estimate(i)) : std::nullopt);
  }
  m.drain();  // the early confirmation, if it is still running
  m.flush(true);
  m.compile().stop();  // what the search never picked need not compile
  ctx.report.notes.push_back(fmt::format("guided search measured {} of {} solution variants; it stopped at {}",
                                         search.measured(), idx.size(), stop));
  std::vector<bool> drop(rows.size(), false);
  for (size_t j = 0; j < idx.size(); ++j) drop[idx[j]] = !search.was_measured(j);
  rows.drop_if(drop);
}

}  // namespace

std::unique_ptr<Searcher> make_guided_searcher(uint64_t seed) { return std::make_unique<GuidedSearcher>(seed); }

}  // namespace fusetune::tune
