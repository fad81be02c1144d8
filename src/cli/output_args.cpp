#include "cli/output_args.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <vector>

#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/output_guard.hpp"
#include "common/terminal_text.hpp"
#include "db/clock.hpp"
#include "gpu/compiler.hpp"
#include "spec/parser.hpp"
#include "gpu/cudnn_version.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::cli {

namespace {

template <class Target>
CLI::Option* add_output_option_to(CLI::App* cmd, Target& path, std::string_view what, std::string_view default_to) {
  return cmd
      ->add_option("-o,--output", path, fmt::format("write {} to FILE, or to standard output with - (default: {})", what,
                                                    default_to))
      ->type_name("FILE|-")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            return value.empty() ? "needs a FILE, or - for standard output" : "";
          },
          "", "output_path"));
}

}  // namespace

CLI::Option* add_output_option(CLI::App* cmd, std::string& path, std::string_view what, std::string_view default_to) {
  return add_output_option_to(cmd, path, what, default_to);
}

CLI::Option* add_output_option(CLI::App* cmd, std::optional<std::string>& path, std::string_view what,
                               std::string_view default_to) {
  return add_output_option_to(cmd, path, what, default_to);
}

void add_output_args(CLI::App* cmd, OutputArgs& out, std::string_view rows, bool csv) {
  // expected(0, 1): `--json` alone means stdout; a value that follows it is its file, so a
  // positional SPEC goes before it (or write `--json -`).
  cmd->add_option("--json", out.json, "write the results as JSON to FILE, or to stdout (- or no value)")
      ->expected(0, 1)
      ->default_str("-")
      ->type_name("[FILE|-]");
  if (csv)
    cmd->add_option("--csv", out.csv, fmt::format("write the results as CSV ({}) to FILE, or to stdout", rows))
        ->expected(0, 1)
        ->default_str("-")
        ->type_name("[FILE|-]");
}

bool is_stdout(const std::optional<std::string>& path) {
  return path && (*path == "-" || *path == "/dev/stdout" || *path == "/dev/fd/1" || *path == "/proc/self/fd/1");
}

bool OutputArgs::human_on_stdout() const { return !is_stdout(json) && !is_stdout(csv) && !is_stdout(other); }

namespace {

bool looks_like_a_spec(const std::string& text) {
  if (text.find('(') == std::string::npos) return false;
  try {
    (void)spec::parse(text);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

void check_output_args(const OutputArgs& out, const std::string& db_path) {
  std::vector<std::string> on_stdout;
  for (const auto& [flag, path] : {std::pair{"--json", out.json}, {"--csv", out.csv}, {out.other_flag.c_str(), out.other}})
    if (is_stdout(path)) on_stdout.push_back(fmt::format("{} {}", flag, text::excerpt(*path, 20)));
  if (on_stdout.size() > 1)
    throw InputError(fmt::format("only one document can go to standard output ({} name it): give the others a FILE",
                                 fmt::join(on_stdout, ", ")));
  for (const auto& [flag, path] : {std::pair{"--json", out.json}, {"--csv", out.csv}, {"", out.other}}) {
    if (!path || is_stdout(path)) continue;
    // `query --json 'conv2d(...)'`: the SPEC after a flag whose value is optional became its
    // file name (issue 42). No file fusetune writes is named like a spec.
    if (*flag && looks_like_a_spec(*path))
      throw InputError(fmt::format("{} {}: that is a spec, not a file name: give the SPEC before {} (or write {} - "
                                   "for standard output)",
                                   flag, text::excerpt(*path, 40), flag, flag));
    refuse_database_output(*path, db_path);
  }
}

void write_outputs(const OutputArgs& out, const nlohmann::json& json, const std::string& csv_text) {
  // Text from a database may not be UTF-8 (an imported dump): replaced, never a failed write.
  if (out.json) write_output_file(*out.json, json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (out.csv) write_output_file(*out.csv, csv_text);
}

std::string csv_figure(double v) { return std::isfinite(v) ? fmt::format("{}", v) : ""; }

nlohmann::json measured_json(double v) { return v > 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
std::string measured_csv(double v) { return v > 0 && std::isfinite(v) ? fmt::format("{}", v) : ""; }

nlohmann::json json_document(std::string_view command, const OutputArgs& out, const std::string& driver) {
  if (!out.json) return {{"schema", fmt::format("fusetune.{}/2", command)}};
  nlohmann::json versions = {{"fusetune", FUSETUNE_VERSION}, {"nvrtc", nullptr}, {"cudnn", nullptr}, {"driver", nullptr}};
  // Each version is asked on its own: a machine without a driver still names its NVRTC and cuDNN.
  try {
    versions["nvrtc"] = gpu::nvrtc_version();
  } catch (const std::exception&) {
  }
  try {
    versions["cudnn"] = gpu::cudnn_version_string();
  } catch (const std::exception&) {
  }
  try {
    if (!driver.empty())
      versions["driver"] = driver;
    else if (std::string why; gpu::driver_available(&why))
      versions["driver"] = gpu::driver_version_string();
  } catch (const std::exception&) {
  }
  return {{"schema", fmt::format("fusetune.{}/2", command)}, {"versions", versions},
          {"created_at", db::utc_now_iso8601()}};
}

}  // namespace fusetune::cli
