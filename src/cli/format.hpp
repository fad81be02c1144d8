#pragma once
// Cell formats shared by the commands' tables.
#include <string>

#include "codegen/variant.hpp"

namespace fusetune::cli {

// "block=256 vec=4 ept=2", or "-" for a variant without parameters.
std::string params_text(const codegen::Variant& v);

// "1.646" (milliseconds) and "2.22x" (a speedup); "-" for a figure that was not measured (<= 0).
std::string ms_cell(double v);
std::string speedup_cell(double v);

}  // namespace fusetune::cli
