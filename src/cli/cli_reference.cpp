// The Markdown command reference (cli_reference.hpp). Reads only what CLI11 keeps per option:
// names, type name (with the validators' descriptions, e.g. the choices of --math), the default
// string a registration captured, and what it excludes. A default that depends on the machine
// (--jobs: all cores) is never captured, so it appears only in the option's description.
#include "cli/cli_reference.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace fusetune::cli {

namespace {

// Hidden options and commands have an empty group (query's --format, kept for old scripts).
bool hidden(const CLI::Option& o) { return o.get_group().empty(); }
bool hidden(const CLI::App& a) { return a.get_group().empty(); }

std::vector<const CLI::App*> subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!hidden(*sub)) out.push_back(sub);
  return out;
}

// Options and positionals as the reference lists them: without -h/--help, which every command
// takes (said once in the summary).
std::vector<const CLI::Option*> listed_options(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* o : app.get_options()) {
    if (hidden(*o) || o == app.get_help_ptr()) continue;
    out.push_back(o);
  }
  return out;
}

// Text inside a Markdown table cell: a '|' would end the cell, even inside `code`.
std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

std::string code(const std::string& s) { return s.empty() ? "" : "`" + cell(s) + "`"; }

std::string names(const CLI::Option& o) {
  if (o.get_positional()) return o.get_name();
  std::string out;
  for (const auto& s : o.get_snames()) out += (out.empty() ? "-" : ", -") + s;
  for (const auto& l : o.get_lnames()) out += (out.empty() ? "--" : ", --") + l;
  return out;
}

bool many(const CLI::Option& o) { return o.get_expected_max() > 1; }

// "fusetune db merge [OPTIONS] <other>..." in CLI11's own terms (required positionals bare).
std::string usage(const CLI::App& app, const std::string& path) {
  std::string out = path;
  bool options = false;
  for (const CLI::Option* o : listed_options(app)) options = options || !o->get_positional();
  if (options) out += " [OPTIONS]";
  for (const CLI::Option* o : listed_options(app)) {
    if (!o->get_positional()) continue;
    const std::string word = "<" + o->get_name() + ">" + (many(*o) ? "..." : "");
    out += o->get_required() ? " " + word : " [" + word + "]";
  }
  if (!subcommands(app).empty()) out += app.get_require_subcommand_min() > 0 ? " COMMAND" : " [COMMAND]";
  return out;
}

std::string value_of(const CLI::Option& o) {
  if (o.get_expected_max() == 0) return "flag";
  return code(o.get_type_name()) + (many(o) ? " ..." : "");
}

std::string default_of(const CLI::Option& o) {
  const std::string d = o.get_default_str();
  if (d.empty() || o.get_expected_max() == 0) return "";
  // expected(0, 1) (--json, --csv): the default string is the value the option takes alone.
  if (o.get_expected_min() == 0) return code(d) + " when given alone";
  return code(d);
}

std::string description_of(const CLI::Option& o) {
  std::string out = o.get_description();
  if (o.get_required()) out = "required; " + out;
  for (const CLI::Option* other : o.get_excludes()) out += " (not with `" + names(*other) + "`)";
  return cell(out);
}

// GitHub's anchor of a "## fusetune db dump" heading.
std::string anchor(std::string heading) {
  for (char& ch : heading) ch = ch == ' ' ? '-' : ch;
  return heading;
}

void section(const CLI::App& app, const std::string& path, std::string& out) {
  out += fmt::format("## {}\n\n```\n{}\n```\n\n{}\n", path, usage(app, path), app.get_description());
  if (const auto subs = subcommands(app); !subs.empty()) {
    out += "\n| command | description |\n| --- | --- |\n";
    for (const CLI::App* sub : subs)
      out += fmt::format("| [`{0} {1}`](#{2}) | {3} |\n", path, sub->get_name(), anchor(path + " " + sub->get_name()),
                         cell(sub->get_description()));
  }
  if (const auto options = listed_options(app); !options.empty()) {
    out += "\n| argument | value | default | description |\n| --- | --- | --- | --- |\n";
    for (const CLI::Option* o : options)
      out += fmt::format("| {} | {} | {} | {} |\n", code(names(*o)), value_of(*o), default_of(*o), description_of(*o));
  }
  out += "\n";
  for (const CLI::App* sub : subcommands(app)) section(*sub, path + " " + sub->get_name(), out);
}

}  // namespace

std::string cli_reference(const CLI::App& app) {
  std::string out =
      "# Command reference\n\n"
      "Every command, nested command, argument and option of `fusetune`, with its type, choices and\n"
      "default. This page is generated from the command tree that parses the arguments, by\n"
      "`fusetune __cli-reference > docs/cli-reference.md`: do not edit it by hand (the test\n"
      "`cli_reference_test` fails when it differs from what the binary prints). Every command also\n"
      "takes `-h, --help`. What the commands do, with examples, is in [commands.md](commands.md).\n\n";
  section(app, "fusetune", out);
  // One newline at the end of the file, not two.
  out.pop_back();
  return out;
}

}  // namespace fusetune::cli
