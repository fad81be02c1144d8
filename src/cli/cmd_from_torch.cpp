// `fusetune from-torch`: the tracing needs torch, so it is Python (python/fusetune_torch/,
// embedded in the binary, run by embedded_python_run.hpp), whose exit status and output are the
// command's.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/embedded_python_run.hpp"
#include "cli/output_args.hpp"
#include "common/error.hpp"
#include "common/output_guard.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"

namespace fusetune::cli {

void register_from_torch(CLI::App& app, FromTorchArgs& args) {
  auto* cmd = app.add_subcommand("from-torch",
                                 "find a PyTorch model's conv + epilogue blocks and write them as specs (needs python3 "
                                 "with torch; no GPU)");
  cmd->add_option("target", args.target, "FILE.py:Class, the model")->required();
  cmd->add_option("--input-shape", args.input_shape,
                  "the model input's shape, any rank (N,C,H,W; M,K; ...); default: the shapes of the file's "
                  "get_inputs(), as KernelBench's files have");
  cmd->add_flag("--train", args.train,
                "keep the model in training mode, as KernelBench runs its models: BatchNorm with batch statistics; "
                "active Dropout is refused (default: eval mode, BatchNorm folded, Dropout the identity)");
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
  std::vector<std::string> argv = {args.target, "--math", args.math, "--layout", args.layout};
  if (args.input_shape) argv.insert(argv.end(), {"--input-shape", *args.input_shape});
  if (args.train) argv.push_back("--train");
  if (args.init_args) argv.insert(argv.end(), {"--init-args", *args.init_args});
  if (args.output) argv.insert(argv.end(), {"-o", *args.output});
  if (args.json) argv.insert(argv.end(), {"--json", *args.json});
  const int code = run_embedded_python("from-torch", "from_torch", argv);
  return code == 0 || code == 1 || code == 2 ? code : int(ExitCode::failure);
}

}  // namespace fusetune::cli
