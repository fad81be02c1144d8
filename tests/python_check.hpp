#pragma once
// python3 for the export tests: whether it is there, and whether its parser accepts a module
// (torch is not needed to parse one).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fusetune::testing {

inline bool have_python() { return std::system("python3 -c pass > /dev/null 2>&1") == 0; }

// "" when python3's parser accepts `text`, else its complaint.
inline std::string python_parse_error(const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fusetune_python_parse_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "model.py";
  const fs::path log = dir / "parse.log";
  std::ofstream(file) << text;
  const std::string cmd = "python3 -c \"import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])\" \"" +
                          file.string() + "\" > \"" + log.string() + "\" 2>&1";
  std::string out;
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    out = std::string(std::istreambuf_iterator<char>(in), {});
    if (out.empty()) out = "python3 failed";
  }
  fs::remove_all(dir);
  return out;
}

}  // namespace fusetune::testing
