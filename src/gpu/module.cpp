#include "gpu/module.hpp"

#include <fmt/format.h>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Module::Module(std::string_view image) {
  // A CUBIN is an ELF file whose headers give its size. PTX is text that cuModuleLoadData
  // reads up to its NUL, which a string_view need not have: copy PTX into a std::string.
  CUmodule module = nullptr;
  if (image.starts_with("\x7f" "ELF")) {
    FT_CU_CALL(driver().cuModuleLoadData(&module, image.data()));
  } else {
    const std::string ptx(image);
    FT_CU_CALL(driver().cuModuleLoadData(&module, ptx.c_str()));
  }
  module_.reset(module);
}

void Module::Unload::operator()(CUmodule module) const noexcept {
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuModuleUnload(module));
}

CUfunction Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  const CUresult r = driver().cuModuleGetFunction(&f, get(), name.c_str());
  if (r != CUDA_SUCCESS) {
    throw CudaError(r, fmt::format("kernel '{}' not found in the module: {}", name, cu_result_text(r)));
  }
  return f;
}

FunctionInfo function_info(CUfunction f) {
  const DriverApi& cu = driver();
  FunctionInfo info;
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.static_smem_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.const_bytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, f));
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION, f));
  FT_CU_CALL(cu.cuFuncGetAttribute(&info.binary_version, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f));
  return info;
}

void set_max_dynamic_smem(CUfunction f, int bytes) {
  FT_CU_CALL(driver().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}

int max_active_blocks_per_sm(CUfunction f, int block_threads, size_t dynamic_smem_bytes) {
  int blocks = 0;
  FT_CU_CALL(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, block_threads, dynamic_smem_bytes));
  return blocks;
}

void launch(CUfunction f, const Dim3& grid, const Dim3& block, uint32_t smem_bytes, CUstream stream,
            void** args) {
  FT_CU_CALL(driver().cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem_bytes,
                                     stream, args, nullptr));
}

}  // namespace fusetune::gpu
