#pragma once
// Everything learned about one variant: compile, verify, time. The same record goes to the
// results table, the JSON output and the database.
#include <cstdint>
#include <string>

#include "codegen/variant.hpp"
#include "tune/status.hpp"

namespace fusetune::tune {

struct CompileFigures {
  int registers = -1;
  int spill_stores = 0;
  int spill_loads = 0;
  int stack_bytes = 0;
  int smem_bytes = 0;
  double compile_ms = 0.0;
  std::string options;  // space-joined NVRTC options
  std::string cubin;    // bytes
  std::string ptx;
};

struct ErrorFigures {
  double max_abs = 0.0;
  double max_rel = 0.0;
  double rel_l2 = 0.0;
  double tolerance = 0.0;  // what it was held to (rel_l2 bound in tf32, abs+rel in fp32)
};

struct TimeFigures {
  double min_ms = 0.0;
  double median_ms = 0.0;
  double max_ms = 0.0;
  int count = 0;
  double kernel_median_ms = 0.0;  // the generated kernels alone (epilogue pass), when measured
  double spread = 0.0;            // (q3 - q1) / median
};

struct VariantResult {
  codegen::Variant variant;
  Status status = Status::ok;
  std::string reason;       // one line, when status != ok
  std::string log_excerpt;  // compiler log (trimmed) when relevant
  CompileFigures compile;
  ErrorFigures error;
  TimeFigures time;
  bool verified = false;
  bool timed = false;
};

}  // namespace fusetune::tune
