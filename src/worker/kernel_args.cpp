#include "worker/kernel_args.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace fusetune::worker {

KernelLaunchArgs::KernelLaunchArgs(const codegen::KernelStep& step, std::span<const CUdeviceptr> buffers,
                                   codegen::BufferRef output, std::optional<CUdeviceptr> redirect_output) {
  // Sized once before any pointer into it is taken.
  pointers_.assign(step.args.size(), CUdeviceptr(0));
  params_.reserve(step.args.size());
  for (size_t a = 0; a < step.args.size(); ++a) {
    std::visit(
        [&](const auto& arg) {
          using T = std::decay_t<decltype(arg)>;
          if constexpr (std::is_same_v<T, codegen::BufferRef>) {
            CUdeviceptr p = buffers[arg];
            const bool written = std::find(step.writes.begin(), step.writes.end(), a) != step.writes.end();
            if (redirect_output && written && arg == output) p = *redirect_output;
            pointers_[a] = p;
            params_.push_back(&pointers_[a]);
          } else if constexpr (std::is_same_v<T, codegen::NullArg>) {
            params_.push_back(&pointers_[a]);  // stays 0: the kernel receives a null pointer
          } else {
            static_assert(std::is_same_v<T, codegen::ValueArg>);
            // cuLaunchKernel copies the parameter's size (the kernel's signature says it) from here
            // at launch; the bytes are the host mirror's (codegen/stage_source.hpp), so they match.
            params_.push_back(const_cast<uint8_t*>(arg.bytes.data()));
          }
        },
        step.args[a]);
  }
}

}  // namespace fusetune::worker
