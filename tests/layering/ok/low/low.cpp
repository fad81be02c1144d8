#include "low/low.hpp"

int low() { return 1; }
