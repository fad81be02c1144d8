#pragma once
// The report page's "Error against the bound" section: each verified result's worst element
// against its tolerance, rel-L2 against its limit, and the table of results that failed.
#include <string>

#include "report/figures.hpp"

namespace fusetune::report {

[[nodiscard]] std::string error_section(const Figures& f);

}  // namespace fusetune::report
