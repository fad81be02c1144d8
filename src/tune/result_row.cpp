#include "tune/result_row.hpp"

#include "codegen/variant_json.hpp"

namespace fusetune::tune {

ResultRow result_row(const TuneReport& rep, size_t i) {
  const protocol::VariantResult& r = rep.results.at(i);
  ResultRow row{.result = r,
                .candidate = codegen::candidate_name(r.variant.candidate),
                .role = codegen::role_name(r.variant.role()),
                .status = protocol::status_name(r.status),
                .params = codegen::params_object(r.variant),
                .registers = std::nullopt,
                .spills = std::nullopt,
                .kernel = std::nullopt,
                .vs_unfused = std::nullopt,
                .vs_cudnn = std::nullopt,
                .checked = r.verified || r.status == protocol::Status::wrong_result};
  if (r.compile.registers >= 0) {
    row.registers = r.compile.registers;
    row.spills = r.compile.spill_stores + r.compile.spill_loads;
  }
  if (r.timed) {
    if (r.time.kernel_median_ms > 0 && r.variant.kernel_bytes > 0) {
      const double gbps = r.variant.kernel_bytes / (r.time.kernel_median_ms * 1e-3) / 1e9;
      row.kernel = KernelRate{.median_ms = r.time.kernel_median_ms,
                              .bytes = double(r.variant.kernel_bytes),
                              .gbps = gbps,
                              .pct_copy = rep.copy_gbps > 0 ? 100.0 * gbps / rep.copy_gbps : 0.0};
    }
    if (rep.unfused) row.vs_unfused = speedup(rep, *rep.unfused, i);
    if (rep.cudnn) row.vs_cudnn = speedup(rep, *rep.cudnn, i);
  }
  return row;
}

}  // namespace fusetune::tune
