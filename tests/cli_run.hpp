#pragma once
// Runs the built fusetune binary as a user's shell would, for the command-line tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace fusetune::testing {

struct Run {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the shell command `cmd`, appends what it prints to `out`; pclose's status.
inline int read_pipe(const std::string& cmd, std::string& out) {
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  return pclose(p);
}

// `args` is pasted into a shell command line after the binary: quote as a user would. `prefix`
// runs the binary through another program or with variables set ("setpriv ... ", "VAR=x ").
inline Run run(const std::string& args, const std::string& prefix = "") {
  // ctest runs tests as parallel processes: one stderr file per process and call.
  static int calls = 0;
  const std::string err_file = ::testing::TempDir() + "cli_stderr." + std::to_string(getpid()) + "." +
                               std::to_string(calls++) + ".txt";
  const std::string cmd = prefix + FUSETUNE_BINARY + " " + args + " 2>" + err_file;
  Run r;
  const int status = read_pipe(cmd, r.out);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::array<char, 4096> buf{};
  size_t n;
  if (FILE* f = fopen(err_file.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.err.append(buf.data(), n);
    fclose(f);
  }
  std::remove(err_file.c_str());
  return r;
}

inline size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace fusetune::testing
