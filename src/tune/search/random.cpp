// `--strategy random --budget N`: N solution variants drawn with a fixed seed (so a re-run draws
// the same ones), plus every baseline and floor; measured like the exhaustive strategy's.
#include <algorithm>
#include <random>

#include "tune/search/searcher.hpp"

namespace fusetune::tune {

namespace {

class RandomSearcher final : public Searcher {
 public:
  RandomSearcher(size_t budget, uint64_t seed) : budget_(budget), seed_(seed) {}

  std::vector<codegen::Variant> choose(std::vector<codegen::Variant> all) const override {
    if (budget_ == 0) return all;  // no budget: all of them
    std::vector<codegen::Variant> out, pool;
    for (auto& v : all) (v.role() == codegen::Role::solution ? pool : out).push_back(std::move(v));
    std::mt19937_64 rng(20261129 ^ seed_);
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(std::min(budget_, pool.size()));
    for (auto& v : pool) out.push_back(std::move(v));
    return out;
  }

  void measure(Measurer& m) override { m.measure_all(codegen::Role::solution); }

 private:
  size_t budget_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Searcher> make_random_searcher(size_t budget, uint64_t seed) {
  return std::make_unique<RandomSearcher>(budget, seed);
}

}  // namespace fusetune::tune
