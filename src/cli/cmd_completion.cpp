// `fusetune completion bash`: a bash completion script written from the command tree that parses
// the arguments, so it cannot fall behind a new command or option. Choices come from the options'
// own validators (`--math TEXT:{tf32,fp32}`), preset names from the preset table, and options
// that take a path complete file names.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "spec/presets.hpp"

namespace fusetune::cli {

namespace {

// Options whose value is a path, by long name.
const std::set<std::string>& path_options() {
  static const std::set<std::string> names{"--db", "--json", "--csv", "--output", "--junit", "--spec-file"};
  return names;
}

// "TEXT:{tf32,fp32}" -> {tf32, fp32}: the choices CLI11's IsMember check prints in the type name.
std::vector<std::string> choices_of(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  const size_t open = type.find('{'), close = type.find('}', open == std::string::npos ? 0 : open);
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string item;
  for (char ch : type.substr(open + 1, close - open - 1)) {
    if (ch == ',') {
      out.push_back(item);
      item.clear();
    } else if (ch != ' ') {
      item += ch;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Every option name of a command ("--math -j --jobs ..."), help included.
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_positional() || o->get_group().empty()) continue;  // empty group: hidden, kept for old scripts
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
  }
  return out;
}

// One `case` arm per option that takes a value: what its value completes to.
std::string value_arms(const std::string& path, const CLI::App& cmd) {
  std::string out;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_positional() || o->get_expected_max() == 0 || o->get_group().empty()) continue;
    std::vector<std::string> names;
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    std::string action;
    const bool is_path = std::any_of(names.begin(), names.end(), [](const std::string& n) {
      return path_options().count(n) != 0;
    });
    if (is_path) {
      action = "COMPREPLY=( $(compgen -f -- \"$cur\") )";
    } else if (std::find(names.begin(), names.end(), "--preset") != names.end()) {
      action = fmt::format("COMPREPLY=( $(compgen -W \"{}\" -- \"$cur\") )", join(spec::preset_names()));
    } else if (auto choices = choices_of(*o); !choices.empty()) {
      action = fmt::format("COMPREPLY=( $(compgen -W \"{}\" -- \"$cur\") )", join(choices));
    } else {
      action = "COMPREPLY=()";  // a number or free text: nothing to offer
    }
    for (const auto& n : names) out += fmt::format("    \"{} {}\") {}; return ;;\n", path, n, action);
  }
  return out;
}

struct Node {
  std::string path;  // "fusetune", "fusetune db", ...
  const CLI::App* app;
};

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  out.push_back({path, &app});
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect(*sub, path + " " + sub->get_name(), out);
}

std::string bash_script(const CLI::App& app) {
  std::vector<Node> nodes;
  collect(app, "fusetune", nodes);
  std::string subcommand_arms, value, words;
  for (const Node& n : nodes) {
    std::vector<std::string> subs;
    for (const CLI::App* sub : n.app->get_subcommands([](const CLI::App*) { return true; }))
      subs.push_back(sub->get_name());
    if (!subs.empty())
      subcommand_arms += fmt::format("      \"{}\") case \"$w\" in {}) path=\"$path $w\" ;; esac ;;\n", n.path,
                                     fmt::format("{}", fmt::join(subs, "|")));
    value += value_arms(n.path, *n.app);
    std::vector<std::string> offer = subs;
    for (const auto& o : option_names(*n.app)) offer.push_back(o);
    // Positional arguments: their choices (`completion bash`), or a file name (`db import FILE`).
    bool file_positional = false;
    for (const CLI::Option* o : n.app->get_options()) {
      if (!o->get_positional()) continue;
      if (auto choices = choices_of(*o); !choices.empty())
        offer.insert(offer.end(), choices.begin(), choices.end());
      else if (o->get_name() == "file" || o->get_name() == "other")
        file_positional = true;
    }
    words += fmt::format("    \"{}\") words=\"{}\"{} ;;\n", n.path, join(offer),
                         file_positional ? "; [[ \"$cur\" != -* ]] && { COMPREPLY=( $(compgen -f -- \"$cur\") ); return; }"
                                         : "");
  }
  return fmt::format(R"(# bash completion for fusetune, written by `fusetune completion bash` (fusetune {version}).
# Install: `fusetune completion bash > ~/.local/share/bash-completion/completions/fusetune`
# (`cmake --install` puts it under share/bash-completion/completions/).
_fusetune() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="" path="fusetune" w i words=""
  [ "$COMP_CWORD" -gt 0 ] && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  # The command path so far: each word that names a subcommand of the path before it.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${{COMP_WORDS[i]}}"
    case "$path" in
{subcommands}    esac
  done
  case "$path $prev" in
{values}  esac
  case "$path" in
{words}  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}}
complete -o filenames -F _fusetune fusetune
)",
                     fmt::arg("version", FUSETUNE_VERSION), fmt::arg("subcommands", subcommand_arms),
                     fmt::arg("values", value), fmt::arg("words", words));
}

}  // namespace

void register_completion(CLI::App& app, CompletionArgs& args) {
  auto* cmd = app.add_subcommand("completion", "print a shell completion script (bash)");
  cmd->add_option("shell", args.shell, "the shell: bash")->check(CLI::IsMember({"bash"}))->capture_default_str();
}

int run_completion(const CLI::App& app, const CompletionArgs& args) {
  if (args.shell != "bash") throw InputError(fmt::format("no completion for the shell {}", args.shell));
  write_stdout(bash_script(app));
  return 0;
}

}  // namespace fusetune::cli
