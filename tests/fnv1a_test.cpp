// The one FNV-1a (common/fnv1a.hpp): its values key stored records (problem keys, the kernel
// templates' hash in the environment fingerprint, compile-cache files, shards), so they are
// pinned here, and templates_hash() is checked against the algorithm it had before it used
// the shared function.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/fnv1a.hpp"
#include "templates/embedded_templates.hpp"

namespace fusetune {
namespace {

// The published 64-bit FNV-1a test vectors (Fowler/Noll/Vo).
static_assert(fnv1a64("") == 0xcbf29ce484222325ULL);
static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
static_assert(fnv1a64("foobar") == 0x85944171f73967e8ULL);

TEST(Fnv1a, IncrementalEqualsOneShot) {
  EXPECT_EQ(Fnv1a64().add("foo").add("bar").value(), fnv1a64("foobar"));
  EXPECT_EQ(Fnv1a64().add(static_cast<unsigned char>('a')).value(), fnv1a64("a"));
  // Bytes above 0x7f hash as unsigned, whatever the signedness of char.
  EXPECT_EQ(fnv1a64("\xff"), Fnv1a64().add(static_cast<unsigned char>(0xff)).value());
  EXPECT_EQ(fnv1a64("\xff"), 0xaf64724c8602eb6eULL);
  // The short basis is the published one with its last decimal digit lost.
  EXPECT_EQ(Fnv1a64::kShortBasis, Fnv1a64::kOffsetBasis / 10);
  EXPECT_EQ(Fnv1a64(Fnv1a64::kShortBasis).add("a").value(), (Fnv1a64::kShortBasis ^ 'a') * Fnv1a64::kPrime);
}

// templates_hash() as it was written before the shared function (embedded_templates.cpp at
// c3b5b19), kept here verbatim so a change to either is caught: the value is part of every
// stored result's environment key.
std::string templates_hash_as_before() {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  for (const auto& [name, text] : templates::embedded_templates()) {
    mix(name);
    mix(text);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

TEST(Fnv1a, TemplatesHashIsUnchanged) {
  const std::string hash = templates::templates_hash();
  EXPECT_EQ(hash.size(), 16u);
  EXPECT_EQ(hash, templates_hash_as_before());
}

}  // namespace
}  // namespace fusetune
