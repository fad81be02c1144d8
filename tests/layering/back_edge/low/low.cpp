#include "low/low.hpp"

#include "high/high.hpp"  // the back edge the check must refuse

int low() { return high() - 1; }
