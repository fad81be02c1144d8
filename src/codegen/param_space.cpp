#include "codegen/param_space.hpp"

#include <cctype>
#include <stdexcept>

namespace fusetune::codegen {

int64_t ParamValues::at(std::string_view name) const {
  for (const auto& [n, v] : items) {
    if (n == name) return v;
  }
  throw std::out_of_range("no parameter '" + std::string(name) + "' in this point");
}

ParamSpace& ParamSpace::param(std::string name, std::string abbrev, std::vector<int64_t> values) {
  params.push_back(Param{std::move(name), std::move(abbrev), std::move(values)});
  return *this;
}

ParamSpace& ParamSpace::require(std::string reason, std::function<bool(const ParamValues&)> ok) {
  constraints.push_back(Constraint{std::move(reason), std::move(ok)});
  return *this;
}

size_t ParamSpace::size() const {
  size_t n = params.empty() ? 0 : 1;
  for (const auto& p : params) n *= p.values.size();
  return n;
}

std::vector<ParamValues> ParamSpace::enumerate(std::vector<Rejection>* rejected) const {
  std::vector<ParamValues> out;
  const size_t total = size();
  // Mixed-radix counter over the value lists, last parameter fastest.
  std::vector<size_t> idx(params.size(), 0);
  for (size_t count = 0; count < total; ++count) {
    ParamValues point;
    point.items.reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) point.items.emplace_back(params[i].name, params[i].values[idx[i]]);

    const Constraint* failed = nullptr;
    for (const auto& c : constraints) {
      if (!c.ok(point)) {
        failed = &c;
        break;
      }
    }
    if (failed == nullptr) {
      out.push_back(std::move(point));
    } else if (rejected != nullptr) {
      rejected->push_back(Rejection{std::move(point), failed->reason});
    }

    for (size_t i = params.size(); i-- > 0;) {
      if (++idx[i] < params[i].values.size()) break;
      idx[i] = 0;
    }
  }
  return out;
}

std::string ParamSpace::variant_name(const std::string& prefix, const ParamValues& values) const {
  std::string name = prefix;
  for (const auto& p : params) {
    if (p.abbrev.empty()) continue;
    name += "." + p.abbrev + std::to_string(values.at(p.name));
  }
  return name;
}

std::string macro_name(std::string_view param) {
  std::string m = "FT_";
  for (const char ch : param) m += char(std::toupper(static_cast<unsigned char>(ch)));
  return m;
}

}  // namespace fusetune::codegen
