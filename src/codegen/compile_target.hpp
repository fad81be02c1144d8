#pragma once
// The NVRTC target a variant is compiled for, decided in one place. Most variants compile for
// the device's architecture (sm_90); an arch-specific one (Variant::arch_specific: its kernels
// use wgmma) needs the arch-specific target (sm_90a), whose code runs on that architecture
// only. The tuner, smoke tests, database bridge, binary exports and the provenance check all
// build their options here, so a stored sm_90a CUBIN is rebuilt with the options it was made
// with. Header-only: export and trust code use it without linking more of codegen.
#include <string>

#include "codegen/variant.hpp"
#include "gpu/compiler.hpp"

namespace fusetune::codegen {

// `arch` ("sm_90", the device's or --arch's) as the variant needs it: "sm_90a" when it is
// arch-specific, unchanged otherwise (and when `arch` names an arch-specific target already).
[[nodiscard]] inline std::string compile_arch(const Variant& v, const std::string& arch) {
  if (!v.arch_specific || arch.empty() || arch.back() == 'a') return arch;
  return arch + "a";
}

// nvcc's option for the same target, for exported sources: "-arch=sm_90", or for sm_90a
// "-gencode arch=compute_90a,code=sm_90a" (nvcc 13's -arch=sm_90a also embeds compute_90
// PTX, in which wgmma does not assemble).
[[nodiscard]] inline std::string nvcc_arch_flag(const Variant& v, const std::string& arch) {
  const std::string a = compile_arch(v, arch);
  if (a.size() > 3 && a.rfind("sm_", 0) == 0 && a.back() == 'a') {
    const std::string number = a.substr(3);  // "90a"
    return "-gencode arch=compute_" + number + ",code=sm_" + number;
  }
  return "-arch=" + a;
}

// The options every variant compile starts from: the target above and the math mode's
// (strict fp32: --fmad=false). Callers change ptxas_verbose where they need no figures.
[[nodiscard]] inline gpu::CompileOptions compile_options(const Variant& v, const std::string& arch, bool strict_fp32) {
  gpu::CompileOptions o;
  o.arch = compile_arch(v, arch);
  o.strict_fp32 = strict_fp32;
  return o;
}

}  // namespace fusetune::codegen
