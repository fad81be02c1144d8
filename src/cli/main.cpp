// fusetune's command line. Every failure ends as one line on stderr and a documented exit
// code (docs/output.md: "Exit codes"): 0 ok, 1 failure, 2 bad input, 3 no GPU, 4 nothing stored.
#include <fmt/core.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <string_view>
#include <system_error>

#include "cli/cli_reference.hpp"
#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/terminal_text.hpp"
#include "worker/worker_main.hpp"

namespace {

int run(int argc, char** argv);

// CLI11 says "A subcommand is required" for a misspelt one too (`fusetune db frob`): the word it
// did not know and the subcommands it could have been, or "" when no word was left over.
std::string unknown_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) {
      // An option's value is not a subcommand: skip it unless it came with '='.
      const CLI::Option* opt = at->get_option_no_throw(arg.substr(0, arg.find('=')));
      if (opt != nullptr && opt->get_expected_max() > 0 && arg.find('=') == std::string::npos) ++i;
      continue;
    }
    CLI::App* next = nullptr;
    for (CLI::App* sub : at->get_subcommands({}))
      if (sub->check_name(arg)) next = sub;
    if (next != nullptr) {
      at = next;
      continue;
    }
    std::string names;
    for (const CLI::App* sub : at->get_subcommands({}))
      if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
    return fmt::format("unknown {} subcommand '{}' (one of: {})", at->get_name(), fusetune::text::excerpt(arg, 40),
                       names);
  }
  return "";
}

// Set when a write to standard output failed and was reported: main() does not say it again.
bool stdout_failure_reported = false;

}  // namespace

int main(int argc, char** argv) {
  using namespace fusetune;
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, which the writers report,
  // instead of killing the process half-way through a file.
  std::signal(SIGXFSZ, SIG_IGN);
  const int code = run(argc, argv);
  // Whatever went to stdout must have arrived: `fusetune query > /dev/full` is a failure.
  if (std::string why = finish_stdout(); !why.empty()) {
    if (!stdout_failure_reported) fmt::print(stderr, "fusetune: {}\n", why);
    return code == 0 ? int(ExitCode::failure) : code;
  }
  return code;
}

namespace {

int run(int argc, char** argv) {
  using namespace fusetune;
  // The tuner's GPU worker (tune/worker_client.hpp): not a user command, so not in --help.
  if (argc >= 2 && std::string_view(argv[1]) == "__worker") return worker::worker_main();
  CLI::App app{"fusetune: JIT autotuner for fused convolution epilogues on NVIDIA GPUs"};
  app.set_version_flag("--version", [] { return cli::version_text(); },
                       "fusetune's version and the NVRTC, cuDNN and driver versions it finds");
  app.require_subcommand(1, 1);

  cli::CompileArgs compile_args;
  cli::TuneArgs tune_args;
  cli::DevicesArgs devices_args;
  cli::QueryArgs query_args;
  cli::ExportArgs export_args;
  cli::SmokeArgs smoke_args;
  cli::DbArgs db_args;
  cli::ReportArgs report_args;
  cli::CompletionArgs completion_args;
  cli::FromTorchArgs from_torch_args;
  cli::KernelBenchArgs kernelbench_args;
  cli::register_compile(app, compile_args);
  cli::register_tune(app, tune_args);
  cli::register_query(app, query_args);
  cli::register_export(app, export_args);
  cli::register_smoke(app, smoke_args);
  cli::register_db(app, db_args);
  cli::register_devices(app, devices_args);
  cli::register_report(app, report_args);
  cli::register_from_torch(app, from_torch_args);
  cli::register_kernelbench(app, kernelbench_args);
  cli::register_completion(app, completion_args);

  // docs/cli-reference.md is this tree's output (cli_reference.hpp): hidden, as __worker is.
  if (argc == 2 && std::string_view(argv[1]) == "__cli-reference") {
    write_stdout(cli::cli_reference(app));
    return 0;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string what = e.what();
    if (what.starts_with(": ")) what.erase(0, 2);  // a hidden option's empty name (cmd_query.cpp)
    if (what.find("subcommand is required") != std::string::npos)
      if (std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty()) what = unknown;
    fmt::print(stderr, "fusetune: {} (see fusetune --help)\n", what);
    return int(ExitCode::bad_input);
  }
  // FUSETUNE_PARSE_ONLY=1: the command line parsed (flags, grammar, numeric ranges), nothing runs.
  // tests/doc_examples_test.py runs every example of the README and docs/ so, GPU or not.
  if (const char* parse_only = std::getenv("FUSETUNE_PARSE_ONLY"); parse_only != nullptr && std::string_view(parse_only) == "1")
    return 0;

  try {
    if (app.got_subcommand("compile")) return cli::run_compile(compile_args);
    if (app.got_subcommand("tune")) return cli::run_tune(tune_args);
    if (app.got_subcommand("devices")) return cli::run_devices(devices_args);
    if (app.got_subcommand("query")) return cli::run_query(query_args);
    if (app.got_subcommand("export")) return cli::run_export(export_args);
    if (app.got_subcommand("smoke")) return cli::run_smoke(smoke_args);
    if (app.got_subcommand("db")) return cli::run_db(db_args);
    if (app.got_subcommand("report")) return cli::run_report(report_args);
    if (app.got_subcommand("from-torch")) return cli::run_from_torch(from_torch_args);
    if (app.got_subcommand("kernelbench")) return cli::run_kernelbench(kernelbench_args);
    if (app.got_subcommand("completion")) return cli::run_completion(app, completion_args);
  } catch (const Error& e) {
    // One line per failure: a stdout write that failed was this error (write_stdout), or is
    // less to the point than it.
    stdout_failure_reported = std::ferror(stdout) != 0;
    fmt::print(stderr, "fusetune: {}\n", e.what());
    return int(e.code());
  } catch (const std::system_error& e) {
    // fmt::print to a full disk or a closed pipe behind stdout ("cannot write to file"): the
    // user's output failed, not fusetune. One line, exit 1 (issue 42).
    if (std::ferror(stdout)) {
      stdout_failure_reported = true;
      fmt::print(stderr, "fusetune: cannot write to standard output ({})\n", e.code().message());
      return int(ExitCode::failure);
    }
    fmt::print(stderr, "fusetune: internal error: {}\n", e.what());
    return int(ExitCode::failure);
  } catch (const std::exception& e) {
    fmt::print(stderr, "fusetune: internal error: {}\n", e.what());
    return int(ExitCode::failure);
  }
  return int(ExitCode::bad_input);
}

}  // namespace
