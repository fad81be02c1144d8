#pragma once
// Verification, a phase of every candidate (baselines and floors included): the plan runs on
// every input draw with each buffer it writes poisoned (NaN sentinel) and fenced by guard bands,
// and its output is judged against the float64 reference under the math mode's rule
// (reference/tolerance.hpp). A plan whose last step updates the output in place runs that step
// out of place into a separate poisoned buffer, so an element it never writes shows as NaN
// rather than as the conv's value; then once more in place, as it will be timed and shipped.
#include <string>

#include "common/math_mode.hpp"
#include "worker/buffer_pool.hpp"
#include "worker/input_draws.hpp"
#include "worker/plan_runner.hpp"
#include "worker/reference_check.hpp"
#include "protocol/status.hpp"
#include "protocol/variant_result.hpp"

namespace fusetune::worker {

struct VerifyOutcome {
  protocol::Status status = protocol::Status::ok;  // ok or wrong_result
  std::string reason;          // the first failure: draw, criterion, figures; which draws failed
  protocol::ErrorFigures error;          // the worst over draws (every draw, failed or not)
};

class Verifier {
 public:
  Verifier(MathMode math, InputDraws& draws, BufferPool& pool, PlanRunner& runner, ReferenceCheck& check)
      : math_(math), draws_(draws), pool_(pool), runner_(runner), check_(check) {}

  // Throws ContextLost when the plan kills the context, gpu::CudaError when a launch is refused.
  [[nodiscard]] VerifyOutcome verify(const Loaded& l);

 private:
  struct RunVerdict {
    std::string failure;        // "" when the run passed
    bool wrote_outside = false;  // a guard band was hit: the plan is not run again
  };
  // One run on draw d; the output judged.
  RunVerdict check_run(const Loaded& l, int d, bool out_of_place, protocol::ErrorFigures& worst);

  MathMode math_;
  InputDraws& draws_;
  BufferPool& pool_;
  PlanRunner& runner_;
  ReferenceCheck& check_;
};

}  // namespace fusetune::worker
