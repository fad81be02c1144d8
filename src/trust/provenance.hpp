#pragma once
// Whether a stored winner's generated code is fusetune's own: its source and plan are exactly
// what this fusetune generates for the record's problem and parameters, and its CUBIN and PTX
// exactly what NVRTC makes of that source. A database or a dump from elsewhere can only bring
// code this binary would have written itself; anything else needs the user's explicit --trust.
#include <optional>
#include <string>

#include "codegen/variant.hpp"
#include "db/records.hpp"

namespace fusetune::trust {

struct Provenance {
  enum class Verdict {
    traced,       // byte for byte what this fusetune generates and compiles
    untraceable,  // made by other kernel templates or another NVRTC: cannot be checked here
    forged,       // claims this fusetune's templates, but its source, plan or binary differ
  } verdict = Verdict::traced;
  std::string why;  // one line, empty when traced
  [[nodiscard]] bool traced() const { return verdict == Verdict::traced; }
};

// Compiles the source once when the record carries binaries (a second or so). Expects
// check_winner() to pass.
[[nodiscard]] Provenance check_provenance(const db::WinnerRecord& w);

// The variant `name` as this fusetune generates it for the problem (canonical spec) and math mode
// on a GPU of `env`'s architecture; nullopt when it generates none of that name. For a result the
// database lists by name only (a winner carries its variant; results do not). Not for cudnn-fused
// variants, whose engine configuration the name does not pin.
[[nodiscard]] std::optional<codegen::Variant> regenerate_variant(const db::Environment& env,
                                                                 const std::string& canonical,
                                                                 const std::string& math, const std::string& name);

}  // namespace fusetune::trust
