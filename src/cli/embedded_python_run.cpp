#include "cli/embedded_python_run.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cli/embedded_python.hpp"
#include "common/error.hpp"
#include "common/temp_dir.hpp"

extern char** environ;

namespace fusetune::cli {

namespace {

volatile sig_atomic_t g_child = 0;  // the Python process a TERM or HUP is passed on to

extern "C" void pass_on(int sig) {
  if (g_child > 0) kill(pid_t(g_child), sig);
}

// While Python runs, a TERM or HUP sent to fusetune (`timeout`, a batch system, a closed session)
// is passed on to it, so it stops too and this process still removes its temporary folder; before,
// fusetune died alone and Python went on holding the GPU. (Ctrl-C reaches both through the
// terminal's process group.)
class PassOnSignals {
 public:
  explicit PassOnSignals(pid_t child) {
    g_child = child;
    struct sigaction sa {};
    sa.sa_handler = pass_on;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGHUP, &sa, &old_hup_);
  }
  ~PassOnSignals() {
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
    g_child = 0;
  }
  PassOnSignals(const PassOnSignals&) = delete;
  PassOnSignals& operator=(const PassOnSignals&) = delete;

 private:
  struct sigaction old_term_ {}, old_hup_ {};
};

}  // namespace

int run_embedded_python(const std::string& command, const std::string& module, const std::vector<std::string>& args,
                        const std::vector<std::string>& extra_env) {
  const TempDir dir("fusetune-" + command);
  const auto pkg = dir.path() / "fusetune_torch";
  std::filesystem::create_directories(pkg);
  for (const auto& [name, text] : embedded_python()) {
    std::ofstream f(pkg / name, std::ios::binary);
    f.write(text.data(), std::streamsize(text.size()));
    if (!f) throw Error(ExitCode::failure, fmt::format("cannot write {}", (pkg / name).string()));
  }
  const char* py = std::getenv("FUSETUNE_PYTHON");
  const std::string python = py && *py ? py : "python3";
  std::vector<std::string> argv = {python, "-m", "fusetune_torch." + module};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // PYTHONPATH: the package first, then whatever the user had (their torch may live there).
  std::vector<std::string> env;
  const char* old = std::getenv("PYTHONPATH");
  env.push_back("PYTHONPATH=" + dir.path().string() + (old && *old ? std::string(":") + old : ""));
  env.push_back("PYTHONDONTWRITEBYTECODE=1");
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const auto name = entry.substr(0, entry.find('=') + 1);
    bool replaced = name == "PYTHONPATH=" || name == "PYTHONDONTWRITEBYTECODE=";
    for (const std::string& x : extra_env) replaced = replaced || x.rfind(name, 0) == 0;
    if (!replaced) env.emplace_back(*e);
  }
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, cargv.data(), cenv.data()); rc != 0)
    throw InputError(fmt::format("{} runs Python with torch, and '{}' could not be started: {} (set "
                                 "FUSETUNE_PYTHON to a python3 that has torch)",
                                 command, python, std::strerror(rc)));
  int status = 0;
  {
    const PassOnSignals pass_on_signals(pid);
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) throw Error(ExitCode::failure, fmt::format("{}: lost its Python process", command));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  fmt::print(stderr, "fusetune: {}: Python ended by signal {}\n", command, WTERMSIG(status));
  return int(ExitCode::failure);
}

}  // namespace fusetune::cli
