// `--strategy exhaustive`: every generated solution, measured once the whole space is compiled.
#include "tune/search/searcher.hpp"

namespace fusetune::tune {

namespace {

class ExhaustiveSearcher final : public Searcher {
 public:
  void measure(Measurer& m) override { m.measure_all(codegen::Role::solution); }
};

}  // namespace

std::unique_ptr<Searcher> make_exhaustive_searcher() { return std::make_unique<ExhaustiveSearcher>(); }

}  // namespace fusetune::tune
