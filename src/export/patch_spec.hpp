#pragma once
// The blocks of a spec file written by `fusetune from-torch`, for `export --format torch-patch`:
// each spec line with the `#@block {JSON}` comment line after it that says where the block sits
// in the model. The specs are read as `tune --spec-file` reads them (spec::parse_spec_list).
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec_list.hpp"

namespace fusetune::exporter {

struct SpecBlock {
  spec::ListedProblem listed;
  std::string block_json;  // the text after "#@block ", unchecked (export_torch_patch checks it)
};

// InputError "FILE:LINE: ..." for a spec line without its record, a record that follows no spec
// line, or two records for one line; and whatever parse_spec_list refuses.
[[nodiscard]] std::vector<SpecBlock> read_patch_spec(std::string_view text, std::string_view file);

}  // namespace fusetune::exporter
