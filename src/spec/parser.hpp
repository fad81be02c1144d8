#pragma once
// The spec language: one line such as
//   conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | min(0.5) | add(param[k]) | mul(2.0)
// parsed into a Problem. The grammar and the rules are documented in docs/spec-language.md
// ("Spec language"); canonical.hpp prints the normalized form.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "spec/problem.hpp"

namespace fusetune::spec {

// A malformed or meaningless spec. what() is one line that names the position and the
// fault: "spec error at column 17: expected ',' or ')', found ']'". Exit code 2.
class SpecError : public InputError {
 public:
  SpecError(int column, const std::string& message);
  [[nodiscard]] int column() const noexcept { return column_; }          // 1-based byte column
  [[nodiscard]] const std::string& message() const noexcept { return message_; }  // without the prefix

 private:
  int column_;
  std::string message_;
};

// Longest spec accepted; a spec is one shell-quoted line, so anything longer is a mistake.
inline constexpr std::size_t kMaxSpecLength = 65536;

// Largest element count of any tensor (input, weights, conv output): 2^40, far above
// any GPU's memory, and low enough that every size product fits in int64 with room.
inline constexpr int64_t kMaxTensorElems = int64_t{1} << 40;

// Parses and validates a spec. Throws SpecError on any syntax or semantic fault;
// on success every default is filled in (s, stride, pad, dilation, bias, layouts,
// op arguments) and per-channel parameters are numbered in order of appearance.
Problem parse(std::string_view text);

}  // namespace fusetune::spec
