#pragma once
// Cell formats shared by the commands' tables.
#include <string>

#include "codegen/variant.hpp"

namespace fusetune::cli {

// "block=256 vec=4 ept=2", or "-" for a variant without parameters.
std::string params_text(const codegen::Variant& v);

}  // namespace fusetune::cli
