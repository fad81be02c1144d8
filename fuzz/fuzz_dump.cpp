// libFuzzer target over `fusetune db import` + `fusetune export`: the input is the text of a
// dump. It is imported into a fresh in-memory database; import either succeeds or throws
// fusetune::Error with a short one-line message. Then every stored winner whose problem parses is
// exported in every format, and each export either throws fusetune::Error or satisfies
//
//   INVARIANT: no database-derived text is placed outside an escaped literal, a comment, or the
//   verbatim generated-source block:
//   - cu: every line before the generated-source block is a `//` comment (or empty); in the host
//     section after it, outside `//` comments and "..." literals, only the characters fusetune's
//     host code uses appear, `#` only in `#include <cuda_runtime.h>`, no host line ends in `\`
//     (a splice would hide the next line in a comment), and every identifier is fusetune's host
//     vocabulary or a whole kernel or buffer name of the stored plan;
//   - torch: every string literal and comment of the Python module closes where it should, and
//     outside them only the characters the template uses appear (no `;`, no `\`) and every
//     identifier is one the template itself writes or the exporter's fixed vocabulary;
//   - ptx, cubin: the export is the stored bytes, unchanged (fusetune adds nothing to them).
// A violation abort()s, which libFuzzer reports as a crash with the input.
//
// export_ptx/export_cubin (and export_torch, which embeds the CUBIN) recompile with NVRTC when the
// record holds no PTX/CUBIN: seconds per input, and NVRTC's own parsing is not what this target
// tests, so those formats are only exported for records that store them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "db/database.hpp"
#include "export/export.hpp"
#include "export/template_fill.hpp"
#include "spec/parser.hpp"

namespace {

using namespace fusetune;

std::string_view g_input;  // for the report of a violation

[[noreturn]] void violation(const char* rule, std::string_view what, std::string_view output = {}) {
  std::fprintf(stderr, "fuzz_dump: INVARIANT VIOLATED: %s\n  at: %.*s\n", rule, static_cast<int>(what.size()),
               what.data());
  if (!output.empty())
    std::fprintf(stderr, "  export (first 4000 bytes):\n%.*s\n", static_cast<int>(std::min<size_t>(output.size(), 4000)),
                 output.data());
  std::fprintf(stderr, "  input (%zu bytes)\n", g_input.size());
  std::abort();
}

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    const size_t end = eol == std::string_view::npos ? text.size() : eol;
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

// A comment line's text must not carry control characters (a carriage return would let a
// terminal or an editor show something else) other than tab.
void check_comment_text(std::string_view line, std::string_view out) {
  for (const char c : line) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && b != '\t') || b == 0x7f) violation("control character in a comment line", line, out);
  }
}

// --- cu -------------------------------------------------------------------------------------

constexpr std::string_view kRule =
    "// =================================================================================================\n";
const std::string kSourceStart =
    std::string(kRule) + "// The generated kernels, verbatim as tuned (complete CUDA: no includes needed).\n" +
    std::string(kRule);
const std::string kHostStart =
    std::string(kRule) + "// Host side: launch configurations and the function that runs the plan.\n" +
    std::string(kRule);

const std::set<std::string, std::less<>> kCuVocabulary = {
    "struct", "fusetune_launch", "dim3", "grid", "block", "unsigned", "smem_bytes", "constexpr", "typedef",
    "cudaError_t", "fusetune_conv_fn", "void", "conv_ctx", "int", "step", "const", "float", "in", "filters", "bias",
    "out", "cudaStream_t", "stream", "extern", "fusetune_run_epilogue", "conv", "err", "cudaSuccess", "if",
    "return", "cudaErrorInvalidValue", "nullptr", "cudaFuncSetAttribute",
    "cudaFuncAttributeMaxDynamicSharedMemorySize", "cudaGetLastError"};

bool launch_constant(std::string_view id) {  // fusetune_step<N>_launch
  constexpr std::string_view pre = "fusetune_step", post = "_launch";
  if (!id.starts_with(pre) || !id.ends_with(post) || id.size() <= pre.size() + post.size()) return false;
  for (const char c : id.substr(pre.size(), id.size() - pre.size() - post.size()))
    if (!digit(c)) return false;
  return true;
}

void check_cu(const std::string& out, const std::set<std::string, std::less<>>& plan_names) {
  const size_t src = out.find(kSourceStart);
  if (src == std::string::npos || (src > 0 && out[src - 1] != '\n')) violation("cu: no generated-source marker", "", out);
  for (const std::string_view line : split_lines(std::string_view(out).substr(0, src))) {
    if (line.empty()) continue;
    // A header line ending in '\' splices the next line into its comment: harmless here, where
    // every line up to the source block is a comment.
    if (!line.starts_with("//")) violation("cu: a header line that is not a comment", line, out);
    check_comment_text(line, out);
  }
  // The last marker: the verbatim source may contain the text of one, the host section cannot.
  const size_t host = out.rfind(kHostStart);
  if (host == std::string::npos || host < src + kSourceStart.size() || out[host - 1] != '\n')
    violation("cu: no host-section marker after the source", "", out);
  for (const std::string_view full : split_lines(std::string_view(out).substr(host + kHostStart.size()))) {
    if (full.ends_with('\\')) violation("cu: a host line that splices the next", full, out);
    if (full == "#include <cuda_runtime.h>") continue;
    // Code up to a `//` comment; string literals ("C") skipped; a comment checked for controls.
    std::string_view line = full;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '"') {
        const size_t close = line.find('"', i + 1);
        if (close == std::string_view::npos) violation("cu: an unterminated string in the host section", full, out);
        for (size_t k = i + 1; k < close; ++k)
          if (!ident_char(line[k])) violation("cu: a host string literal that is not a word", full, out);
        i = close;
        continue;
      }
      if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') {
        check_comment_text(line.substr(i), out);
        line = line.substr(0, i);
        break;
      }
      if (ident_start(c)) {
        size_t e = i;
        while (e < line.size() && ident_char(line[e])) ++e;
        const std::string_view id = line.substr(i, e - i);
        if (!kCuVocabulary.contains(id) && !launch_constant(id) && !plan_names.contains(id))
          violation("cu: a host-code word that is neither fusetune's nor a name of the plan", full, out);
        i = e - 1;
        continue;
      }
      if (digit(c)) {  // 128u, 0
        while (i + 1 < line.size() && ident_char(line[i + 1])) ++i;
        continue;
      }
      if (std::string_view(" (){}[]<>;:,.*&=+-/|!").find(c) == std::string_view::npos)
        violation("cu: a character fusetune's host code does not use", full, out);
    }
  }
}

// --- torch -----------------------------------------------------------------------------------

struct PyScan {
  std::vector<std::string_view> identifiers;  // outside strings and comments
  std::string bad;                            // the first lexical fault, if any
};

bool string_prefix(std::string_view id) {
  if (id.size() > 2) return false;
  for (const char c : id)
    if (std::string_view("rRbBuUfF").find(c) == std::string_view::npos) return false;
  return true;
}

// Enough of Python's lexer to know what is code: comments, string literals (prefixes, triple
// quotes, escapes), identifiers, numbers, punctuation.
PyScan scan_python(std::string_view s) {
  PyScan r;
  size_t i = 0;
  const auto fail = [&](const std::string& why) {
    r.bad = why + " at byte " + std::to_string(i);
  };
  while (i < s.size() && r.bad.empty()) {
    const char c = s[i];
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      const bool triple = s.substr(i, 3) == std::string(3, c);
      const size_t open = i;
      i += triple ? 3 : 1;
      bool closed = false;
      while (i < s.size()) {
        if (s[i] == '\\') {
          i += 2;  // in raw strings too: a backslash keeps the quote after it from closing
          continue;
        }
        if (!triple && s[i] == '\n') break;
        if (triple ? s.substr(i, 3) == std::string(3, c) : s[i] == c) {
          i += triple ? 3 : 1;
          closed = true;
          break;
        }
        ++i;
      }
      if (!closed) {
        i = open;
        fail("an unterminated string literal");
      }
      continue;
    }
    if (ident_start(c)) {
      size_t e = i;
      while (e < s.size() && ident_char(s[e])) ++e;
      const std::string_view id = s.substr(i, e - i);
      if (e < s.size() && (s[e] == '"' || s[e] == '\'') && string_prefix(id)) {
        i = e;  // the literal itself is scanned next
        continue;
      }
      r.identifiers.push_back(id);
      i = e;
      continue;
    }
    if (digit(c) || (c == '.' && i + 1 < s.size() && digit(s[i + 1]))) {
      while (i < s.size() && (ident_char(s[i]) || s[i] == '.' ||
                              ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
        ++i;
      continue;
    }
    if (std::string_view(" \n()[]{}:,.=+-*/%<>!&|^~@").find(c) == std::string_view::npos) {
      fail(std::string("a character outside literals and comments: byte ") +
           std::to_string(static_cast<unsigned char>(c)));
      continue;
    }
    ++i;
  }
  return r;
}

std::set<std::string, std::less<>> g_torch_vocabulary;

void init_torch_vocabulary() {
  std::string t(exporter::export_template("torch_module.py.in"));
  t += "\n";
  t += exporter::export_template("torch_runtime.py.in");
  // Placeholders out: what fills them is checked, not taken as vocabulary.
  for (size_t at = t.find('@'); at != std::string::npos; at = t.find('@', at + 1)) {
    size_t end = at + 1;
    while (end < t.size() && ((t[end] >= 'A' && t[end] <= 'Z') || digit(t[end]) || t[end] == '_')) ++end;
    if (end > at + 1 && end < t.size() && t[end] == '@') t.replace(at, end - at + 1, " ");
  }
  const PyScan scan = scan_python(t);
  if (!scan.bad.empty()) violation("the torch template itself does not scan", scan.bad);
  for (const auto id : scan.identifiers) g_torch_vocabulary.emplace(id);
  // What export_torch.cpp and torch_signature.cpp write as code around the values: nn.Conv2d's
  // keywords, literals, and the KernelBench presets' constructor arguments.
  for (const char* id : {"dict", "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "bias",
                         "True", "False", "float", "constant_value", "bias_shape", "scaling_factor", "scale_factor",
                         "Model", "ModelNew"})
    g_torch_vocabulary.emplace(id);
}

void check_torch(const std::string& out) {
  const PyScan scan = scan_python(out);
  if (!scan.bad.empty()) violation("torch: the module does not scan as fusetune writes it", scan.bad, out);
  for (const auto id : scan.identifiers)
    if (!g_torch_vocabulary.contains(id)) violation("torch: a word in code that the template does not write", id, out);
}

// --- the target -------------------------------------------------------------------------------

std::set<std::string, std::less<>> plan_names(const db::WinnerRecord& w) {
  std::set<std::string, std::less<>> names;
  const codegen::Variant v = codegen::variant_from_json(nlohmann::json::parse(w.variant_json));
  for (const auto& b : v.buffers) names.insert(b.name);
  for (const auto& st : v.plan)
    if (st.kind() == codegen::StepKind::kernel) names.insert(st.kernel().name);
  return names;
}

// The export, or nullopt when it refuses the record (a fine outcome) with fusetune::Error.
// Anything else it throws escapes: libFuzzer reports it (the CLI would say "internal error").
template <typename Fn>
std::optional<std::string> attempt(Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    const std::string_view what = e.what();
    if (what.find('\n') != std::string_view::npos) violation("an export error of more than one line", what);
    return std::nullopt;
  }
}

void export_all(const db::WinnerRecord& w) {
  spec::Problem problem;
  try {
    problem = spec::parse(w.canonical);
  } catch (const spec::SpecError&) {
    return;  // `fusetune export` needs the problem; this record's text is not one
  }
  if (const auto cu = attempt([&] { return exporter::export_cu(problem, w); })) check_cu(*cu, plan_names(w));
  // The module embeds the CUBIN: a record without one would be compiled again (see above).
  if (!w.cubin.empty() || w.variant_json.find("\"source\":\"\"") != std::string::npos) {
    if (const auto py = attempt([&] { return exporter::export_torch(problem, w); })) check_torch(*py);
  }
  if (!w.ptx.empty()) {
    if (const auto ptx = attempt([&] { return exporter::export_ptx(problem, w); }); ptx && *ptx != w.ptx)
      violation("ptx: the export is not the stored PTX", w.variant_name);
  }
  if (!w.cubin.empty()) {
    if (const auto cubin = attempt([&] { return exporter::export_cubin(problem, w); }); cubin && *cubin != w.cubin)
      violation("cubin: the export is not the stored CUBIN", w.variant_name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  init_torch_vocabulary();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  g_input = input;
  auto database = db::Database::open(":memory:", db::OpenOptions{.load_shipped = false});
  try {
    database.import_dump(input);
  } catch (const Error& e) {
    // `db import` prints this as its one line: short, whatever the dump holds.
    const std::string_view what = e.what();
    if (what.find('\n') != std::string_view::npos) violation("an import error of more than one line", what);
    if (what.size() > 512) violation("an import error longer than 512 bytes", what.substr(0, 512));
    return 0;
  }
  for (const auto& w : database.winners(std::nullopt, "", std::nullopt)) export_all(w);
  return 0;
}
