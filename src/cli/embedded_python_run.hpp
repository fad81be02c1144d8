#pragma once
// Runs a module of the embedded Python package (python/fusetune_torch/, embedded_python.hpp):
// the package written to a private temporary directory, then `python3 -m fusetune_torch.MODULE
// ARGS...` with the user's python3 (or $FUSETUNE_PYTHON), whose output is the command's.
// `from-torch` and `kernelbench` are this: they need torch, which is Python.
#include <string>
#include <vector>

namespace fusetune::cli {

// The child's exit status (a signal: 1, reported on stderr). `command` names the fusetune
// command in messages; `extra_env` (NAME=value) is added to the child's environment. Throws
// InputError when Python cannot be started.
int run_embedded_python(const std::string& command, const std::string& module, const std::vector<std::string>& args,
                        const std::vector<std::string>& extra_env = {});

}  // namespace fusetune::cli
