#include "gpu/ptxas_info.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace fusetune::gpu {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::string_view unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  return s;
}

// Counters from the "N bytes stack frame, ..." and "Used N registers, ..." lines.
struct Figures {
  int registers = -1;
  int frame = 0;
  int cumulative = 0;
  int spill_stores = 0;
  int spill_loads = 0;
  int smem = 0;
  int cmem = 0;
};

// Reads comma-separated "<words> N <unit>" parts, e.g. "used 1 barriers", "372 bytes cmem[0]".
void read_parts(std::string_view text, Figures& f) {
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view part = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto digit = part.find_first_of("0123456789");
    if (digit == std::string_view::npos) continue;
    part = part.substr(digit);
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc{}) continue;
    const std::string_view unit = trim(part.substr(static_cast<size_t>(end - part.data())));
    if (unit == "registers") f.registers = value;
    else if (unit == "bytes stack frame") f.frame = value;
    else if (unit == "bytes cumulative stack size") f.cumulative = value;
    else if (unit == "bytes spill stores") f.spill_stores = value;
    else if (unit == "bytes spill loads") f.spill_loads = value;
    else if (unit == "bytes smem") f.smem = value;
    else if (unit.starts_with("bytes cmem")) f.cmem += value;
  }
}

}  // namespace

std::vector<KernelResources> parse_ptxas_info(std::string_view log) {
  constexpr std::string_view kEntry = "Compiling entry function ";
  constexpr std::string_view kProps = "Function properties for ";
  constexpr std::string_view kUsed = "Used ";

  std::vector<std::string> entries;          // compile order
  std::map<std::string, Figures> figures;    // by function name, entries and device functions
  std::string current_entry;                 // "Used" lines belong to the entry being compiled
  std::string props_target;                  // stack lines belong to the last "Function properties"

  while (!log.empty()) {
    const auto nl = log.find('\n');
    const std::string_view line = log.substr(0, nl);
    log = nl == std::string_view::npos ? std::string_view{} : log.substr(nl + 1);

    if (auto p = line.find(kEntry); p != std::string_view::npos) {
      // 'foo' for 'sm_90'
      std::string_view rest = line.substr(p + kEntry.size());
      const auto for_pos = rest.rfind(" for ");
      current_entry = std::string(unquote(rest.substr(0, for_pos)));
      if (std::find(entries.begin(), entries.end(), current_entry) == entries.end()) {
        entries.push_back(current_entry);
      }
    } else if (auto q = line.find(kProps); q != std::string_view::npos) {
      props_target = std::string(unquote(line.substr(q + kProps.size())));
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      if (!props_target.empty()) read_parts(line, figures[props_target]);
    } else if (auto u = line.find(kUsed); u != std::string_view::npos &&
                                         line.find("registers") != std::string_view::npos) {
      if (!current_entry.empty()) read_parts(line.substr(u), figures[current_entry]);
    }
  }

  std::vector<KernelResources> out;
  out.reserve(entries.size());
  for (const auto& name : entries) {
    const Figures& f = figures[name];
    out.push_back(KernelResources{name, f.registers, f.spill_stores, f.spill_loads,
                                  std::max(f.frame, f.cumulative), f.smem, f.cmem});
  }
  return out;
}

}  // namespace fusetune::gpu
