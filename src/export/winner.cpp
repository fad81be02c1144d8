#include "export/winner.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/variant_check.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "export/plan_buffers.hpp"
#include "spec/canonical.hpp"

namespace fusetune::exporter {

codegen::Variant winner_variant(const spec::Problem& problem, const db::WinnerRecord& winner, bool model_plans) {
  codegen::Variant v;
  try {
    v = codegen::variant_from_json(nlohmann::json::parse(winner.variant_json));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("the stored winner {} has no readable variant ({})", one_line(winner.variant_name),
                                 e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("the stored winner {}: {}", one_line(winner.variant_name), e.what()));
  }
  if (std::string bad = codegen::check_variant(v, problem); !bad.empty())
    throw InputError(fmt::format("the stored winner {} has an unsound plan: {}", one_line(winner.variant_name), bad));
  if (v.model_plan() && !model_plans) refuse_model_plan(one_line(winner.variant_name));
  return v;
}

void check_winner_problem(const spec::Problem& problem, const db::WinnerRecord& winner) {
  const std::string want = spec::canonical(problem);
  // Records always carry both; the key alone decides only for a record without its text.
  const bool same =
      winner.canonical.empty() ? winner.problem_key == spec::problem_key(problem) : winner.canonical == want;
  if (!same) {
    throw InputError(
        fmt::format("the winner {} was tuned for '{}', not '{}'", winner.variant_name, winner.canonical, want));
  }
}

std::string record_arch(const codegen::Variant& v, const db::WinnerRecord& w) {
  if (w.env.cc_major < 1 || w.env.cc_major > 20 || w.env.cc_minor < 0 || w.env.cc_minor > 9) {
    throw InputError(fmt::format("the winner {} records no valid GPU architecture (compute capability {}.{})",
                                 one_line(v.name), w.env.cc_major, w.env.cc_minor));
  }
  return w.env.arch();
}

std::string one_line(const std::string& text) {
  std::string out = text;
  for (char& ch : out) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  }
  return out;
}

}  // namespace fusetune::exporter
