// Text from a database, a dump or a spec on its way to the terminal: controls and escape
// sequences made inert, every error message one printable line (common/terminal_text).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/terminal_text.hpp"

namespace fusetune {
namespace {

bool has_control(const std::string& s) {
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) return true;
  }
  return false;
}

TEST(TerminalText, EscapeSequencesBecomeOnePlaceholder) {
  EXPECT_EQ(text::printable("gpu\x1b[2Jname"), "gpu?name");                      // CSI: clear screen
  EXPECT_EQ(text::printable("a\x1b[38;5;196mred\x1b[0m"), "a?red?");              // SGR colours
  EXPECT_EQ(text::printable("x\x1b]0;title\x07y"), "x?y");                          // OSC set title, BEL
  EXPECT_EQ(text::printable("x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\y"), "x?link?y");  // OSC 8 hyperlink
  EXPECT_EQ(text::printable("x\x1b" "7y"), "x?y");                                   // ESC 7
  EXPECT_EQ(text::printable("x\x1b(By"), "x?y");                                    // charset designation
  EXPECT_EQ(text::printable("x\xc2\x9b" "31my"), "x?y");                             // C1 CSI (U+009B)
  EXPECT_EQ(text::printable("x\xc2\x9d" "0;t\x07y"), "x?y");                         // C1 OSC
  EXPECT_EQ(text::printable("x\x1b"), "x?");                                        // cut short
}

TEST(TerminalText, ControlsInvisiblesAndStrayBytesBecomePlaceholders) {
  EXPECT_EQ(text::printable("a\nb\rc\td\x7f" "e\x01"), "a?b?c?d?e?");
  EXPECT_EQ(text::printable("a\xe2\x80\xae" "b"), "a?b");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(text::printable("a\xe2\x80\x8b" "b"), "a?b");  // ZERO WIDTH SPACE
  EXPECT_EQ(text::printable("a\xff\xfe" "b"), "a??b");     // not UTF-8
  EXPECT_EQ(text::printable("a\xc3"), "a?");               // truncated sequence
  EXPECT_EQ(text::printable("caf\xc3\xa9 \xe2\x9c\x93 NVIDIA H200"), "caf\xc3\xa9 \xe2\x9c\x93 NVIDIA H200");
  EXPECT_EQ(text::single_line("two\nlines\r\tand\x1b[1m bold"), "two lines  and? bold");
}

TEST(TerminalText, ExcerptCutsAtACharacterAndSaysSo) {
  EXPECT_EQ(text::excerpt("short", 60), "short");
  EXPECT_EQ(text::excerpt(std::string(1000, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(text::excerpt("ab\xc3\xa9z", 3), "ab...");  // never half an 'é'
  EXPECT_FALSE(has_control(text::excerpt(std::string(100, '\x1b'), 10)));
}

TEST(TerminalText, DecodesUtf8Strictly) {
  EXPECT_EQ(text::decode_utf8("\xc3\xa9").code, U'\u00e9');
  EXPECT_EQ(text::decode_utf8("\xc3\xa9").length, 2u);
  EXPECT_EQ(text::decode_utf8("\xf0\x9f\x98\x80").code, U'\U0001F600');
  EXPECT_FALSE(text::decode_utf8("\xc0\xaf").valid);      // overlong '/'
  EXPECT_FALSE(text::decode_utf8("\xed\xa0\x80").valid);  // a surrogate
  EXPECT_FALSE(text::decode_utf8("\xe9").valid);
  EXPECT_EQ(text::decode_utf8("\xe9").length, 1u);
}

TEST(TerminalText, EveryErrorIsOnePrintableLine) {
  const Error e(ExitCode::bad_input, "the winner x\nimport os\x1b[2J was refused");
  EXPECT_STREQ(e.what(), "the winner x import os? was refused");
}

}  // namespace
}  // namespace fusetune

// The dump writes a text value as text only when it is strict UTF-8 (else as base64).
TEST(TerminalText, IsValidUtf8IsDecodeUtf8OverTheWholeText) {
  EXPECT_TRUE(fusetune::text::is_valid_utf8(""));
  EXPECT_TRUE(fusetune::text::is_valid_utf8("conv2d \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(fusetune::text::is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(fusetune::text::is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(fusetune::text::is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(fusetune::text::is_valid_utf8("ok\xe2\x82"));        // truncated at the end
}
