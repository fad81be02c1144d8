#pragma once
// The report's colors in one place. tests/report_screenshot.py finds each plot by its tint and
// counts bars by their fill: no bar color is also a line color or a tint, and no two plots share
// a tint.
#include <string>
#include <string_view>

namespace fusetune::report::palette {

// A candidate's bars and legend swatch; one that this fusetune does not know is drawn purple.
[[nodiscard]] std::string candidate_color(std::string_view candidate);

// Reference lines.
inline constexpr std::string_view kUnfused = "#d64545";
inline constexpr std::string_view kConvFloor = "#6d4c41";
inline constexpr std::string_view kRoofline = "#1f2933";
inline constexpr std::string_view kWinner = "#7b1fa2";
inline constexpr std::string_view kCopy = "#d64545";
inline constexpr std::string_view kBound = "#d64545";

// Bars of the parameter charts (one series each).
inline constexpr std::string_view kParamBar = "#5b8db8";

// Plot-area tints, one per plot kind.
inline constexpr std::string_view kTimesTint = "#f2f5f9";
inline constexpr std::string_view kBandwidthTint = "#f3f8f4";
inline constexpr std::string_view kParamsTint = "#fbf8f1";
inline constexpr std::string_view kErrorTint = "#fbf4f4";
inline constexpr std::string_view kRelL2Tint = "#f6f3fa";

}  // namespace fusetune::report::palette
