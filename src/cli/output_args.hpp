#pragma once
// The one output convention of every command that reports results (docs/commands.md: "Output"):
//   --json [FILE|-]   the command's JSON document, schema "fusetune.<command>/2" (published in
//                     docs/schema/fusetune-output.schema.json)
//   --csv  [FILE|-]   its rows as CSV, a header line first
//   -o, --output FILE|-   the one document a command exists to write (db dump, export, report,
//                         from-torch): the same rule, though its value is never optional
//                         (a positional SPEC may follow it)
// "-", or the flag with no value, is standard output; then the human-readable text moves out of
// the way (it is not printed, or goes to stderr) so that stdout parses. Several may be given
// together to different destinations, but only one to standard output: two documents there
// would be one unparseable stream (check_output_args). Files are written whole or not at all
// (output_file.hpp).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace fusetune::cli {

struct OutputArgs {
  std::optional<std::string> json;
  std::optional<std::string> csv;
  std::optional<std::string> other;  // a third document a command writes (smoke's --junit, from-torch's -o)
  std::string other_flag = "--junit";  // how `other` was given, for the messages

  // Whether the human-readable table may go to stdout (no document does).
  [[nodiscard]] bool human_on_stdout() const;
};

// "-", /dev/stdout, /dev/fd/1 and /proc/self/fd/1 all name standard output.
[[nodiscard]] bool is_stdout(const std::optional<std::string>& path);

// Adds `-o,--output FILE|-` to `cmd`: `what` names the document in the help, `default_to` says
// where it goes without -o ("standard output", or a file name). An empty value is refused while
// parsing (exit 2): `-o ""` is a slip, not a request for the default.
CLI::Option* add_output_option(CLI::App* cmd, std::string& path, std::string_view what, std::string_view default_to);
CLI::Option* add_output_option(CLI::App* cmd, std::optional<std::string>& path, std::string_view what,
                               std::string_view default_to);

// Adds --json and --csv to `cmd`; `rows` says what a CSV row is ("one row per variant").
// `csv` false: the command has no rows (JSON only).
void add_output_args(CLI::App* cmd, OutputArgs& out, std::string_view rows, bool csv = true);

// Throws InputError (exit 2) when two documents would go to standard output (naming the flags), or a document would
// replace the tuning database `db_path` (when given). Called before any work is done.
void check_output_args(const OutputArgs& out, const std::string& db_path = "");

// Writes the documents that were asked for.
void write_outputs(const OutputArgs& out, const nlohmann::json& json, const std::string& csv_text);

// The fields every JSON document starts with: schema, the fusetune / NVRTC / cuDNN / driver
// versions (null where not found) and the UTC time it was made. Asks the driver and cuDNN only
// when a JSON document was asked for (`out.json`): a plain table never loads them.
// `driver`: the driver's version when the caller knows it already (tune: from the device
// description); "" asks the driver, which costs 0.2 s of initialisation (cuInit).
[[nodiscard]] nlohmann::json json_document(std::string_view command, const OutputArgs& out,
                                           const std::string& driver = "");

// A figure for a CSV cell: empty where JSON has null (not finite).
[[nodiscard]] std::string csv_figure(double v);

// A time or a speedup, 0 when it was never measured: null in JSON, an empty CSV cell.
[[nodiscard]] nlohmann::json measured_json(double v);
[[nodiscard]] std::string measured_csv(double v);

}  // namespace fusetune::cli
