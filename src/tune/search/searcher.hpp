#pragma once
// A search strategy (`tune --strategy`, search/strategy.hpp): which solutions a tune measures and
// when. One file per strategy: exhaustive.cpp, random.cpp, guided.cpp. The phase driver
// (tuner.cpp) asks its hooks at the points where strategies differ and never names one.
#include <memory>
#include <vector>

#include "codegen/variant.hpp"
#include "tune/run/measurer.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {

class Searcher {
 public:
  virtual ~Searcher() = default;
  // Of the generated variants, those this tune runs (every baseline and floor among them).
  [[nodiscard]] virtual std::vector<codegen::Variant> choose(std::vector<codegen::Variant> variants) const {
    return variants;
  }
  // The graph configurations of cuDNN's conv alone that the workers' setup times (0: all).
  [[nodiscard]] virtual int conv_graph_head() const { return 0; }
  // Whether it measures each solution as soon as it is compiled (and builds each cuDNN engine
  // configuration as it runs it), rather than once the whole space is compiled and built.
  [[nodiscard]] virtual bool measures_while_compiling() const { return false; }
  // What the cost model knows changed (the solutions queued, the copy rate or the conv
  // measured): the compile pool's order may follow.
  virtual void priors_changed(Measurer& m) { (void)m; }
  // Verifies and times the solutions it chooses; the rows it never ran leave.
  virtual void measure(Measurer& m) = 0;
};

[[nodiscard]] std::unique_ptr<Searcher> make_exhaustive_searcher();
[[nodiscard]] std::unique_ptr<Searcher> make_random_searcher(size_t budget, uint64_t seed);
[[nodiscard]] std::unique_ptr<Searcher> make_guided_searcher(uint64_t seed);
// TuneOptions::strategy's searcher.
[[nodiscard]] std::unique_ptr<Searcher> make_searcher(const TuneOptions& opt);

}  // namespace fusetune::tune
