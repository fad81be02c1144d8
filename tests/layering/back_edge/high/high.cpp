#include "high/high.hpp"

#include "low/low.hpp"

int high() { return low() + 1; }
