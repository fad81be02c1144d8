#pragma once
// What every export format needs first: the winner's variant, read back from its JSON, after
// checking that the record belongs to the problem being exported.
#include <string>

#include "codegen/variant.hpp"
#include "db/records.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

// codegen::variant_from_json(winner.variant_json), checked sound for `problem`
// (codegen::check_variant); InputError when it is not a variant or its plan is unsound, and
// (refuse_model_plan) for a version-2 plan unless `model_plans` (only the version-2 PyTorch
// export, export_model_torch, runs those).
[[nodiscard]] codegen::Variant winner_variant(const spec::Problem& problem, const db::WinnerRecord& winner,
                                              bool model_plans = false);

// The CUBIN of `v` (the winner's own variant, checked): the record's, or (a record without one)
// its source compiled again with NVRTC as the tuner compiled it (export_binary.cpp).
[[nodiscard]] std::string variant_cubin(const codegen::Variant& v, const db::WinnerRecord& winner);

// InputError unless the winner was tuned for `problem` (same canonical form): its kernels are
// specialized to that shape, so exporting it under another problem would be silently wrong.
void check_winner_problem(const spec::Problem& problem, const db::WinnerRecord& winner);

// The GPU architecture the record was tuned on ("sm_90"), which its CUBIN and an arch-specific
// variant's nvcc target are tied to; InputError when the record's compute capability is not one.
[[nodiscard]] std::string record_arch(const codegen::Variant& v, const db::WinnerRecord& winner);

// `text` on one line: newlines and other control characters become spaces, so strings from
// the database (GPU name, options) cannot break out of a comment line.
[[nodiscard]] std::string one_line(const std::string& text);

}  // namespace fusetune::exporter
