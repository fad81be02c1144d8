#include <gtest/gtest.h>

#include <string>

#include "db/base64.hpp"

namespace fusetune::db {
namespace {

TEST(DbBase64, Rfc4648Vectors) {
  const std::pair<std::string, std::string> cases[] = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : cases) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), plain);
  }
}

TEST(DbBase64, EveryByteValueRoundTrips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t cut = 0; cut < 4; ++cut) {  // every padding case
    const std::string bytes = all.substr(cut);
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes);
  }
  EXPECT_EQ(base64_encode(std::string("\xfb\xff\xbf", 3)), "+/+/");
}

TEST(DbBase64, MalformedTextIsRefused) {
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zm9v!A==", "Zg==Zg==", "Zh==", "Zm9=", " Zm9v", "Zm9v\n", "=Zm9"})
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
}

}  // namespace
}  // namespace fusetune::db
