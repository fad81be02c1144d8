// export_ptx / export_cubin: the stored compile output, so exporting needs neither a GPU nor a
// compile. Records without it (a database from before CUBINs were kept, a trimmed dump) get the
// variant's source compiled again with NVRTC, for the architecture it was tuned on and with the
// math mode's options, which reproduces the tuned binary for the same NVRTC version.
#include <fmt/format.h>

#include "codegen/compile_target.hpp"
#include "common/error.hpp"
#include "export/export.hpp"
#include "export/winner.hpp"
#include "gpu/compiler.hpp"

namespace fusetune::exporter {
namespace {

gpu::CompileResult recompile(const codegen::Variant& v, const db::WinnerRecord& winner) {
  if (v.source.empty()) {
    throw NotFoundError(
        fmt::format("the winner {} runs cuDNN only: it has no generated kernels to export as "
                    "PTX or CUBIN (use --format cu or torch)",
                    v.name));
  }
  if (winner.env.cc_major <= 0) {
    throw InputError(fmt::format("the winner {} records no GPU architecture to compile for", v.name));
  }
  // As the tuner compiled it: its target (sm_90a for arch-specific variants), --fmad=false
  // under strict fp32.
  gpu::CompileOptions options = codegen::compile_options(v, winner.env.arch(), winner.math == "fp32");
  options.ptxas_verbose = false;  // resource figures are not needed here
  const gpu::CompileResult r = gpu::compile_cuda(v.source, v.name + ".cu", options);
  if (!r.ok()) {
    throw Error(ExitCode::failure,
                fmt::format("recompiling the winner {} for {} failed: {}", v.name, options.arch, one_line(r.log)));
  }
  return r;
}

}  // namespace

std::string export_ptx(const spec::Problem& problem, const db::WinnerRecord& winner) {
  check_winner_problem(problem, winner);
  const codegen::Variant v = winner_variant(problem, winner);  // refuses an unsound record
  return winner.ptx.empty() ? recompile(v, winner).ptx : winner.ptx;
}

std::string export_cubin(const spec::Problem& problem, const db::WinnerRecord& winner) {
  check_winner_problem(problem, winner);
  return variant_cubin(winner_variant(problem, winner), winner);
}

std::string variant_cubin(const codegen::Variant& v, const db::WinnerRecord& winner) {
  return winner.cubin.empty() ? recompile(v, winner).cubin : winner.cubin;
}

}  // namespace fusetune::exporter
