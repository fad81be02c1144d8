#include "tune/search/searcher.hpp"

namespace fusetune::tune {

std::unique_ptr<Searcher> make_searcher(const TuneOptions& opt) {
  switch (opt.strategy) {
    case Strategy::exhaustive: return make_exhaustive_searcher();
    case Strategy::random: return make_random_searcher(opt.budget > 0 ? size_t(opt.budget) : 0, opt.seed);
    case Strategy::model: return make_guided_searcher(opt.seed);
  }
  return make_exhaustive_searcher();
}

}  // namespace fusetune::tune
