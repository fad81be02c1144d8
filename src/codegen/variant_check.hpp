#pragma once
// Whether a variant's plan is sound for a problem: the check every plan passes before the
// worker runs it or an export writes it, whether codegen made it a moment ago or it came from
// a database or a dump (untrusted). It bounds every name, size and count, so a crafted record
// cannot make the worker allocate absurd memory or an export write arbitrary identifiers.
#include <string>

#include "codegen/variant.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

// "" when sound; else one line naming the first fault.
[[nodiscard]] std::string check_variant(const Variant& v, const spec::Problem& problem);

// [A-Za-z_][A-Za-z0-9_]*, at most max_len characters: names that may appear as code.
[[nodiscard]] bool is_identifier(const std::string& s, size_t max_len = 64);
// Variant and design names: [A-Za-z0-9_.-]+, at most 200 characters.
[[nodiscard]] bool is_variant_name(const std::string& s);

}  // namespace fusetune::codegen
