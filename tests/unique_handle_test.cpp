// UniqueHandle (common/unique_handle.hpp), the one move-only owner behind every handle type:
// each handle is released exactly once, whatever moves happen, and never the empty one.
#include <gtest/gtest.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "common/unique_handle.hpp"

namespace fusetune {
namespace {

std::vector<int> released;  // handles passed to the deleter, in order

struct Release {
  void operator()(int handle) const noexcept { released.push_back(handle); }
};
using Owner = UniqueHandle<int, Release>;

// A deleter with state, like a primary context released through its device.
struct ReleaseWithTag {
  int tag = 0;
  void operator()(int handle) const noexcept { released.push_back(handle * 100 + tag); }
};

static_assert(!std::is_copy_constructible_v<Owner> && !std::is_copy_assignable_v<Owner>);
static_assert(std::is_nothrow_move_constructible_v<Owner> && std::is_nothrow_move_assignable_v<Owner>);
static_assert(sizeof(Owner) == sizeof(int), "a stateless deleter takes no space");

// Destructors never throw: a deleter that may throw is refused at compile time.
struct MayThrow {
  void operator()(int) const {}
};
template <typename H, typename D>
concept Ownable = requires { typename UniqueHandle<H, D>; };
static_assert(Ownable<int, Release>);
static_assert(!Ownable<int, MayThrow>);

class UniqueHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { released.clear(); }
};

TEST_F(UniqueHandleTest, ReleasesOnceAtScopeEndAndNeverTheEmptyHandle) {
  {
    Owner a(7);
    Owner empty;
    EXPECT_TRUE(a);
    EXPECT_FALSE(empty);
    EXPECT_EQ(a.get(), 7);
  }
  EXPECT_EQ(released, std::vector<int>{7});
}

TEST_F(UniqueHandleTest, MoveTransfersOwnership) {
  {
    Owner a(1);
    Owner b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(b.get(), 1);
    Owner c(2);
    c = std::move(b);  // releases 2, takes 1
    EXPECT_EQ(released, std::vector<int>{2});
    auto& self = c;
    c = std::move(self);  // self-move keeps the handle
    EXPECT_EQ(c.get(), 1);
  }
  EXPECT_EQ(released, (std::vector<int>{2, 1}));
}

TEST_F(UniqueHandleTest, ResetAndRelease) {
  Owner a(3);
  a.reset(4);
  EXPECT_EQ(released, std::vector<int>{3});
  const int kept = a.release();
  EXPECT_EQ(kept, 4);
  EXPECT_FALSE(a);
  a.reset();
  EXPECT_EQ(released, std::vector<int>{3});
}

TEST_F(UniqueHandleTest, StatefulDeleterMovesWithItsHandle) {
  {
    UniqueHandle<int, ReleaseWithTag> a(5, ReleaseWithTag{1});
    UniqueHandle<int, ReleaseWithTag> b(6, ReleaseWithTag{2});
    b = std::move(a);  // 6 released with tag 2; 5 now owned with tag 1
    EXPECT_EQ(b.deleter().tag, 1);
  }
  EXPECT_EQ(released, (std::vector<int>{602, 501}));
}

}  // namespace
}  // namespace fusetune
