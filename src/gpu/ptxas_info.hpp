#pragma once
// Per-kernel resources read from ptxas's verbose output (-Xptxas=-v). The tuner prunes and
// records variants by them (registers limit occupancy; any spill is a red flag).
#include <string>
#include <string_view>
#include <vector>

namespace fusetune::gpu {

struct KernelResources {
  std::string kernel;    // entry name as compiled (plain for extern "C" kernels)
  int registers = -1;    // -1: ptxas printed no "Used N registers" line for it
  int spill_stores = 0;  // bytes
  int spill_loads = 0;   // bytes
  int stack_bytes = 0;   // cumulative stack (own frame plus callees) when reported, else the frame
  int smem_bytes = 0;    // static shared memory; dynamic shared memory is a launch parameter
  int cmem_bytes = 0;    // summed over constant banks (cmem[0] holds the kernel parameters)
};

// Entry functions in the order ptxas compiled them. Lines it does not know are ignored, so
// a format change loses figures rather than failing a compile. Recognized (NVRTC 13 / ptxas):
//   ptxas info    : Compiling entry function 'foo' for 'sm_90'
//   ptxas info    : Function properties for foo
//   ptxas         .     560 bytes stack frame, 1116 bytes spill stores, 872 bytes spill loads
//   ptxas info    : Used 24 registers, used 1 barriers, 560 bytes cumulative stack size, 1024 bytes smem, 372 bytes cmem[0]
// Properties of non-inlined device functions ("Function properties for _Z6helperf") are not
// entries and are left out; their stack shows up in the caller's cumulative stack size.
std::vector<KernelResources> parse_ptxas_info(std::string_view log);

}  // namespace fusetune::gpu
