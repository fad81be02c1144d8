// Sweeps' building blocks, GPU-free: `--shard I/N` (every problem and every variant in exactly
// one shard, the same one on every machine) and `--spec-file` (comments, presets, duplicates,
// and a bad line named by file:line:column before anything runs).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"
#include "spec/spec_list.hpp"
#include "tune/shard.hpp"

namespace fusetune {
namespace {

using tune::parse_shard;
using tune::Shard;

TEST(Shard, ParsesIOverNCountingFromZero) {
  ASSERT_TRUE(parse_shard("0/1"));
  EXPECT_TRUE(parse_shard("0/1")->whole());
  const auto s = parse_shard("3/8");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 8);
  EXPECT_EQ(s->text(), "3/8");
  EXPECT_TRUE(parse_shard("99999/100000"));
  for (const char* bad : {"", "1", "/", "1/", "/4", "4/4", "5/4", "-1/4", "0/0", "1/-4", "a/4", "1/4x", " 1/4",
                          "1 /4", "+1/4", "0x1/4", "0/100001", "1/2/3", "0.5/4"})
    EXPECT_FALSE(parse_shard(bad)) << bad;
}

TEST(Shard, EveryPositionIsInExactlyOneShardAndTheSharesDifferByAtMostOne) {
  for (int n : {1, 2, 3, 4, 7}) {
    std::vector<int> sizes(size_t(n), 0);
    for (size_t i = 0; i < 50; ++i) {
      int holders = 0;
      for (int k = 0; k < n; ++k)
        if (Shard{k, n}.holds_position(i)) {
          ++holders;
          ++sizes[size_t(k)];
        }
      EXPECT_EQ(holders, 1) << i << " of " << n;
    }
    EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()), 1);
  }
}

TEST(Shard, EveryVariantNameIsInExactlyOneShardWhateverTheListAround) {
  std::vector<std::string> names;
  for (int t : {32, 64, 128})
    for (int v : {1, 2, 4})
      for (int b : {128, 256, 512}) names.push_back(fmt::format("epilogue.nhwc.t{}.v{}.o1.b{}", t, v, b));
  names.push_back("cudnn-fused.x-nchw.eng7.k2_1.k24_29");
  for (int n : {1, 2, 4, 5}) {
    size_t total = 0;
    for (const auto& name : names) {
      int holders = 0;
      for (int k = 0; k < n; ++k) holders += Shard{k, n}.holds_name(name);
      EXPECT_EQ(holders, 1) << name;
    }
    for (int k = 0; k < n; ++k)
      for (const auto& name : names) total += Shard{k, n}.holds_name(name);
    EXPECT_EQ(total, names.size());
  }
  // The rule is the name's FNV-1a modulo N: pinned, since shards on different machines (and
  // different fusetune builds) must agree on it.
  EXPECT_TRUE((Shard{int(0xcbf29ce484222325ull % 3), 3}.holds_name("")));
}

TEST(SpecList, ReadsSpecsAndPresetsSkippingCommentsAndBlankLines) {
  const auto list = spec::parse_spec_list(
      "# layers of a network\n"
      "\n"
      "conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu   # first\n"
      "   kernelbench-32\r\n"
      "\t\n"
      "conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1)|relu\n"
      "conv2d(n=1,c=8,h=6,w=6,k=8,r=1) | sigmoid",  // no newline at the end
      "layers.txt");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].line, 3u);
  EXPECT_EQ(list[1].line, 4u);
  EXPECT_EQ(spec::canonical(list[1].problem), spec::canonical(spec::resolve_problem(std::nullopt, "kernelbench-32")));
  EXPECT_EQ(list[2].line, 6u);
  EXPECT_EQ(list[2].duplicate_of, 3u) << "the same problem written another way";
  EXPECT_EQ(list[3].line, 7u);
  EXPECT_EQ(list[3].duplicate_of, 0u);
}

std::string error_of(const std::string& text) {
  try {
    (void)spec::parse_spec_list(text, "sweep.txt");
  } catch (const InputError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  return "(accepted)";
}

TEST(SpecList, ABadLineIsNamedByFileLineAndColumn) {
  EXPECT_EQ(error_of("# ok\nconv2d(n=1,c=4,h=9,w=7,k=3,r=3) | relu\n  conv2d(n=1,c=4,h=9,w=7,k=3,r=3) | rleu\n"),
            "sweep.txt:3: spec error at column 37: unknown op 'rleu'; did you mean 'relu'?");
  EXPECT_EQ(error_of("kernelbench-33\n"),
            "sweep.txt:1: unknown preset 'kernelbench-33' (known: kernelbench-31, kernelbench-32; or a spec: "
            "conv2d(...) | ...)");
  EXPECT_EQ(error_of("\n\nconv2d(n=1,c=4\n"), "sweep.txt:3: spec error at column 15: expected ',' or ')', found end of input");
  EXPECT_EQ(error_of("# nothing\n\n   \n"), "sweep.txt: no problems (every line is blank or a comment)");
  EXPECT_EQ(error_of(""), "sweep.txt: no problems (every line is blank or a comment)");
}

TEST(SpecList, TheListInDocsClusterParses) {
  // docs/cluster.md's example list (the ```text block whose first line names layers.txt).
  std::ifstream f(std::string(FUSETUNE_SOURCE_DIR) + "/docs/cluster.md");
  std::string text, line;
  bool in_block = false, found = false;
  while (std::getline(f, line)) {
    if (line.starts_with("```")) {
      if (in_block && found) break;
      in_block = line == "```text";
      continue;
    }
    if (in_block && line.starts_with("# layers.txt")) found = true;
    if (in_block && found) text += line + "\n";
  }
  ASSERT_TRUE(found) << "docs/cluster.md: the layers.txt example is gone";
  const auto list = spec::parse_spec_list(text, "layers.txt");
  EXPECT_EQ(list.size(), 5u);
}

}  // namespace
}  // namespace fusetune
