#pragma once
// docs/cli-reference.md, written from the command tree that parses the arguments (`fusetune
// __cli-reference`), so the reference cannot fall behind a new command, option or default:
// tests/cli_reference_test.cpp fails when the page differs from what the binary prints.
#include <string>

namespace CLI { class App; }

namespace fusetune::cli {

// The whole page as Markdown: every command and nested command, its usage, description and a
// table of its positionals and options. Depends on nothing but the tree (no terminal width, no
// version, no machine), so every build of the same sources prints the same bytes.
[[nodiscard]] std::string cli_reference(const CLI::App& app);

}  // namespace fusetune::cli
