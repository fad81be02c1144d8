// One convention for output paths (issue 49): `-o -` is standard output wherever `--json -` is,
// for every command that has `-o/--output`. The commands are found in the binary's own --help
// (every subcommand, nested ones too), so a new command with -o fails here until it has a case
// below. Each case runs in an empty working directory and must exit 0, put a plausible document
// on stdout and create no file named "-". Also: two documents never share stdout (one line, exit
// 2), `-o ''` is refused, and a CUBIN is not written to a terminal. GPU- and torch-free: exports
// come from the shipped winners of a fresh database, and from-torch runs the embedded Python with
// its tracing stubbed (tests/data/from_torch_stub.py); python/tests trace real models.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "common/temp_dir.hpp"
#include "spec/parser.hpp"

namespace fusetune {
namespace {

namespace fs = std::filesystem;
using testing::lines;
using testing::run;

// The subcommands `fusetune <path> --help` lists (CLI11's "Subcommands:" section).
std::vector<std::string> subcommands_of(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:" || line == "SUBCOMMANDS:") {
      inside = true;
    } else if (inside && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (inside && (line.empty() || line[0] != ' ')) {
      inside = false;
    }
  }
  return names;
}

// Whether the help lists an option named -o or --output.
bool has_output_option(const std::string& help) {
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] != '-') continue;
    const std::string names = line.substr(first, line.find(' ', first) - first);
    std::istringstream parts(names);
    for (std::string name; std::getline(parts, name, ',');)
      if (name == "-o" || name == "--output") return true;
  }
  return false;
}

// Every command path ("db dump") whose help has -o/--output, walking the tree from the top.
std::set<std::string> commands_with_output() {
  std::set<std::string> found;
  std::vector<std::string> todo = {""};
  while (!todo.empty()) {
    const std::string path = todo.back();
    todo.pop_back();
    const auto r = run(path + " --help");
    EXPECT_EQ(r.code, 0) << "fusetune " << path << " --help: " << r.err;
    if (!path.empty() && has_output_option(r.out)) found.insert(path);
    for (const auto& sub : subcommands_of(r.out)) todo.push_back(path.empty() ? sub : path + " " + sub);
  }
  return found;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// A scratch working directory holding what the cases read: the database is created there (with
// the shipped winners) by the first command that opens it.
struct Workdir {
  TempDir dir{"ft-dash"};
  Workdir() {
    std::ofstream(dir.path() / "model.py") << "class Net:\n    pass\n";  // the stub traces no model
    std::ofstream(dir.path() / "blocks.txt")
        << "kernelbench-31  # conv\n"
        << R"(#@block {"conv":"conv","nodes":["conv","min","add","mul"],"output":"mul","params":[{"kind":"tensor","path":"bias"}]})"
        << "\n";
  }
  // The binary run from this directory, with the stand-in python for from-torch.
  [[nodiscard]] testing::Run run_here(const std::string& args) const {
    return run(args, "cd '" + dir.path().string() + "' && FUSETUNE_PYTHON='" FUSETUNE_SOURCE_DIR
                     "/tests/data/from_torch_stub.py' ");
  }
};

struct Case {
  std::string args;  // with `-o -` in it
  std::function<void(const std::string& out)> plausible;
};

// How to run each command with -o - and what its stdout must look like. A command may have
// several cases (export: one per format).
std::multimap<std::string, Case> cases() {
  const std::string db = " --db t.db";
  std::multimap<std::string, Case> c;
  c.insert({"db dump", {"db dump" + db + " -o -", [](const std::string& out) {
                          const auto head = nlohmann::json::parse(first_line(out));
                          EXPECT_EQ(head.value("fusetune_dump", 0), 1) << first_line(out);
                          EXPECT_GT(lines(out), 1u) << "the shipped records";
                        }}});
  c.insert({"report", {"report --preset kernelbench-31" + db + " -o -", [](const std::string& out) {
                         EXPECT_EQ(first_line(out), "<!DOCTYPE html>");
                         EXPECT_TRUE(contains(out, "</html>"));
                       }}});
  const std::map<std::string, std::string> exports = {
      {"cu", "__global__"}, {"ptx", ".entry"}, {"cubin", "\x7f" "ELF"}, {"torch", "import torch"},
      {"kernelbench", "class ModelNew(nn.Module):"}};
  for (const auto& [format, mark] : exports)
    c.insert({"export", {"export --preset kernelbench-31 --format " + format + db + " -o -",
                         [mark = mark](const std::string& out) { EXPECT_TRUE(contains(out, mark)) << out.substr(0, 200); }}});
  c.insert({"export", {"export --format torch-patch --spec-file blocks.txt" + db + " -o -",
                       [](const std::string& out) { EXPECT_TRUE(contains(out, "def patch(model):")) << out.substr(0, 200); }}});
  c.insert({"from-torch", {"from-torch model.py:Net --input-shape 2,3,16,16 -o -", [](const std::string& out) {
                             EXPECT_TRUE(out.starts_with("# fusetune from-torch model.py:Net")) << out;
                             std::istringstream in(out);
                             std::string line;
                             while (std::getline(in, line) && line.starts_with("#")) {
                             }
                             const std::string spec = line.substr(0, line.find("  #"));
                             EXPECT_NO_THROW((void)spec::parse(spec)) << spec;
                             EXPECT_TRUE(contains(spec, "| min(0.5) | add(param[k]) | mul(2)")) << spec;
                           }}});
  return c;
}

TEST(CliOutputDash, EveryCommandWithAnOutputOptionHasACase) {
  std::set<std::string> with_cases;
  for (const auto& [command, _] : cases()) with_cases.insert(command);
  const std::set<std::string> found = commands_with_output();
  EXPECT_FALSE(found.empty()) << "no command's --help lists -o/--output: the help format changed?";
  for (const auto& command : found)
    EXPECT_TRUE(with_cases.contains(command)) << "`fusetune " << command
                                              << "` has -o/--output: add its `-o -` case to cases() here";
  for (const auto& command : with_cases)
    EXPECT_TRUE(found.contains(command)) << "`fusetune " << command << "` has a case but no -o in its --help";
}

TEST(CliOutputDash, DashIsStandardOutputForEveryCommand) {
  for (const auto& [command, c] : cases()) {
    SCOPED_TRACE(c.args);
    const Workdir w;
    const auto r = w.run_here(c.args);
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_FALSE(r.out.empty());
    c.plausible(r.out);
    EXPECT_FALSE(fs::exists(w.dir.path() / "-")) << "wrote a file named '-'";
    // stderr has no "wrote" line: nothing was written to a file.
    EXPECT_FALSE(contains(r.err, "wrote")) << r.err;
  }
}

TEST(CliOutputDash, AnEmptyOutputPathIsRefusedWhileParsing) {
  for (const auto& [command, c] : cases()) {
    SCOPED_TRACE(c.args);
    std::string args = c.args;
    args.replace(args.rfind(" -o -"), 5, " -o ''");
    const Workdir w;
    const auto r = w.run_here(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, "--output: needs a FILE, or - for standard output")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// Two documents on stdout would be one stream no reader can split: refused before any work, in
// one line naming both, exit 2, nothing on stdout.
TEST(CliOutputDash, TwoDocumentsNeverShareStandardOutput) {
  const Workdir w;
  const std::string db = " --db t.db";
  for (const std::string& args : std::vector<std::string>{
           "from-torch model.py:Net --input-shape 2,3,16,16 -o - --json -",
           "from-torch model.py:Net --input-shape 2,3,16,16 --json -",  // the spec file's default is stdout
           "from-torch model.py:Net --input-shape 2,3,16,16 -o /dev/stdout --json -",
           "query --preset kernelbench-31" + db + " --json - --csv -",
           "compile --preset kernelbench-31 --json - --csv",
           "smoke --checks database" + db + " --json - --junit -",
       }) {
    SCOPED_TRACE(args);
    const auto r = w.run_here(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, "only one document can go to standard output")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
  }
  EXPECT_FALSE(fs::exists(w.dir.path() / "-"));
}

// from-torch's other document on stdout while the spec file goes to a file.
TEST(CliOutputDash, FromTorchJsonDashIsStandardOutput) {
  const Workdir w;
  const auto r = w.run_here("from-torch model.py:Net --input-shape 2,3,16,16 -o specs.txt --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "fusetune.from-torch/1");
  EXPECT_EQ(j["blocks"].size(), 1u);
  EXPECT_TRUE(fs::exists(w.dir.path() / "specs.txt"));
  EXPECT_FALSE(fs::exists(w.dir.path() / "-"));
  EXPECT_TRUE(contains(r.err, "wrote specs.txt")) << r.err;
}

// The binary under a pseudo-terminal as stdout (stderr to a file): exit code, stderr, stdout.
testing::Run run_on_a_terminal(const Workdir& w, const std::string& args) {
  int master = -1, slave = -1;
  EXPECT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0) << std::strerror(errno);
  const std::string err_file = (w.dir.path() / "stderr.txt").string();
  const pid_t pid = fork();
  if (pid == 0) {
    ::close(master);
    ::dup2(slave, STDOUT_FILENO);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, STDERR_FILENO);
    if (::chdir(w.dir.path().c_str()) != 0) _exit(127);
    const std::string cmd = std::string("exec ") + FUSETUNE_BINARY + " " + args;
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(slave);
  testing::Run r;
  std::array<char, 4096> buf{};
  for (;;) {  // until the child closes the terminal (EIO on Linux)
    const ssize_t n = ::read(master, buf.data(), buf.size());
    if (n > 0) r.out.append(buf.data(), size_t(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

// A CUBIN is ELF bytes: refused on a terminal (as curl refuses binary output), with or without
// -o -; a pipe takes it (DashIsStandardOutputForEveryCommand), and so does a text format on a
// terminal.
TEST(CliOutputDash, ACubinIsNotWrittenToATerminal) {
  const Workdir w;
  for (const char* o : {" -o -", ""}) {
    const auto r = run_on_a_terminal(w, std::string("export --preset kernelbench-31 --format cubin --db t.db") + o);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, "--format cubin is binary and standard output is a terminal")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out.size() << " bytes on the terminal";
  }
  const auto r = run_on_a_terminal(w, "export --preset kernelbench-31 --format cu --db t.db -o -");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "__global__"));
}

}  // namespace
}  // namespace fusetune
