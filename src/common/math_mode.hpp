#pragma once
// The arithmetic a tune is held to, typed from the command line to the worker, the verifier,
// cuDNN and the database (which stores its name).
//   tf32: tensor cores with TF32 products allowed (PyTorch's default for cuDNN convolutions);
//         verified by the TF32 rule (docs/numerics.md).
//   fp32: strict IEEE fp32 products (allow_tf32=False); verified at 1e-4 + 1e-4*|ref| (KernelBench's),
//         widened by 6 sd of a correct fp32 dot product's rounding (docs/verification.md).
#include <optional>
#include <string_view>

namespace fusetune {

enum class MathMode { tf32, fp32 };

[[nodiscard]] std::string_view math_mode_name(MathMode mode);  // "tf32" | "fp32"
[[nodiscard]] std::optional<MathMode> parse_math_mode(std::string_view text);

}  // namespace fusetune
