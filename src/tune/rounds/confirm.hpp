#pragma once
// The confirmation round: the winner, the runner-up, `unfused` and the fastest floor timed
// sustained (the figures reported and stored), the winner and the runner-up taking turns, the
// others each alone or kept from the early confirmation (rounds/early_confirmation.hpp). Its
// order of the complete pipelines stands, and the tie rule decides between the first two.
#include "tune/run/measurer.hpp"

namespace fusetune::tune {

void confirmation_round(Measurer& m);

}  // namespace fusetune::tune
