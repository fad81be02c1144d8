#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace fusetune::cli {

void add_problem_args(CLI::App* cmd, ProblemArgs& args, bool required) {
  (void)required;  // presence of exactly one is checked by spec::resolve_problem, with a clear message
  cmd->add_option("spec", args.spec, "problem spec, e.g. 'conv2d(n=1,c=8,h=32,w=32,k=16,r=3) | relu'");
  cmd->add_option("--preset", args.preset, "a named problem: kernelbench-31, kernelbench-32");
}

}  // namespace fusetune::cli
