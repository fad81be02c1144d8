// `fusetune from-torch`: the tracing needs torch, so it is Python (python/fusetune_torch/,
// embedded in the binary): written to a private temporary directory and run with the user's
// python3 (or $FUSETUNE_PYTHON), whose exit status and output are the command's.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/embedded_python.hpp"
#include "cli/output_args.hpp"
#include "common/error.hpp"
#include "common/output_guard.hpp"
#include "common/temp_dir.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"

extern char** environ;

namespace fusetune::cli {

void register_from_torch(CLI::App& app, FromTorchArgs& args) {
  auto* cmd = app.add_subcommand("from-torch",
                                 "find a PyTorch model's conv + epilogue blocks and write them as specs (needs python3 "
                                 "with torch; no GPU)");
  cmd->add_option("target", args.target, "FILE.py:Class, the model")->required();
  cmd->add_option("--input-shape", args.input_shape, "N,C,H,W of the model's input")->required();
  cmd->add_option("--init-args", args.init_args,
                  "the class's constructor arguments as JSON: a list, or an object of keywords (default: the "
                  "file's get_init_inputs(), as KernelBench's files have)");
  cmd->add_option("--math", args.math, "tf32 | fp32: written into the file's tune line")
      ->check(CLI::IsMember({"tf32", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--layout", args.layout,
                  "chain: a value passed from one block straight into others stays channels-last (NHWC) between "
                  "them, as torch.compile keeps it; nchw: every block reads and writes NCHW")
      ->check(CLI::IsMember({"chain", "nchw"}))
      ->capture_default_str();
  add_output_option(cmd, args.output, "the spec file for `tune --spec-file`", "standard output");
  cmd->add_option("--json", args.json,
                  "also write the blocks (nodes, per-channel operands' sources) as JSON to FILE, or to standard "
                  "output with -")
      ->type_name("FILE|-");
}

int run_from_torch(const FromTorchArgs& args) {
  // Checked before Python starts, by the rules of every command's outputs: one document at most on
  // standard output (the spec file goes there without -o), and neither replaces the tuning
  // database (the default one: this command has no --db). Python handles "-" itself, so `-o -`
  // is passed on as given.
  if (!args.output && is_stdout(args.json))
    throw InputError(fmt::format("only one document can go to standard output (the spec file, without -o, and "
                                 "--json {} name it): give -o FILE or --json FILE",
                                 text::excerpt(*args.json, 20)));
  OutputArgs outputs{.json = args.json, .csv = std::nullopt, .other = args.output, .other_flag = "-o"};
  check_output_args(outputs, db::default_db_path());
  const TempDir dir("fusetune-from-torch");
  const auto pkg = dir.path() / "fusetune_torch";
  std::filesystem::create_directories(pkg);
  for (const auto& [name, text] : embedded_python()) {
    std::ofstream f(pkg / name, std::ios::binary);
    f.write(text.data(), std::streamsize(text.size()));
    if (!f) throw Error(ExitCode::failure, fmt::format("cannot write {}", (pkg / name).string()));
  }
  const char* py = std::getenv("FUSETUNE_PYTHON");
  const std::string python = py && *py ? py : "python3";
  std::vector<std::string> argv = {python, "-m", "fusetune_torch.from_torch", args.target, "--input-shape",
                                   args.input_shape, "--math", args.math, "--layout", args.layout};
  if (args.init_args) argv.insert(argv.end(), {"--init-args", *args.init_args});
  if (args.output) argv.insert(argv.end(), {"-o", *args.output});
  if (args.json) argv.insert(argv.end(), {"--json", *args.json});
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // PYTHONPATH: the package first, then whatever the user had (their torch may live there).
  std::vector<std::string> env;
  const char* old = std::getenv("PYTHONPATH");
  env.push_back("PYTHONPATH=" + dir.path().string() + (old && *old ? std::string(":") + old : ""));
  env.push_back("PYTHONDONTWRITEBYTECODE=1");
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "PYTHONPATH=", 11) != 0 && std::strncmp(*e, "PYTHONDONTWRITEBYTECODE=", 24) != 0)
      env.emplace_back(*e);
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, cargv.data(), cenv.data()); rc != 0)
    throw InputError(fmt::format("from-torch runs Python with torch, and '{}' could not be started: {} (set "
                                 "FUSETUNE_PYTHON to a python3 that has torch)",
                                 python, std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(ExitCode::failure, "from-torch: lost its Python process");
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    return code == 0 || code == 1 || code == 2 ? code : int(ExitCode::failure);
  }
  fmt::print(stderr, "fusetune: from-torch: Python ended by signal {}\n", WTERMSIG(status));
  return int(ExitCode::failure);
}

}  // namespace fusetune::cli
