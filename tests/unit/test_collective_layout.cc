// ina/collective-layout.h: how Canary's blocks and PANAMA's packets are
// numbered over every collective of every iteration. Worked example: an
// iteration of three collectives of 1000, 24 and 300 elements, k = 256:
// 4, 1 and 2 units (7 per iteration), two iterations (14 units).
#include "ina/collective-layout.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using inasim::CollectiveLayout;

TEST(CollectiveLayout, UnitsAreNumberedOverEveryCollectiveOfEveryIteration) {
  const CollectiveLayout l({1000, 24, 300}, 256, 2);
  EXPECT_EQ(l.units_per_iteration(), 7u);
  EXPECT_EQ(l.total_units(), 14u);
  struct Want { uint64_t g; uint32_t c; uint64_t first, count; };
  for (const Want& w : {Want{0, 0, 0, 256}, Want{3, 0, 768, 232}, Want{4, 1, 0, 24}, Want{5, 2, 0, 256},
                        Want{6, 2, 256, 44}, Want{7, 3, 0, 256}, Want{11, 4, 0, 24}, Want{13, 5, 256, 44}}) {
    const CollectiveLayout::Unit u = l.Locate(w.g);
    EXPECT_EQ(u.collective, w.c) << w.g;
    EXPECT_EQ(u.first_element, w.first) << w.g;
    EXPECT_EQ(u.count, w.count) << w.g;
  }
  EXPECT_EQ(l.FirstUnitOf(0), 0u);
  EXPECT_EQ(l.FirstUnitOf(2), 5u);
  EXPECT_EQ(l.FirstUnitOf(4), 11u);
  EXPECT_EQ(l.UnitsOf(3), 4u);
  EXPECT_EQ(l.UnitsOf(5), 2u);
  EXPECT_EQ(l.ElementsOf(4), 24u);
}

TEST(CollectiveLayout, OneCollectiveIsTheIterationsOwnNumbering) {
  const CollectiveLayout l({1000}, 256, 3);  // no schedule: g / 4 is the iteration
  for (uint64_t g = 0; g < 12; ++g) {
    EXPECT_EQ(l.Locate(g).collective, g / 4);
    EXPECT_EQ(l.Locate(g).first_element, g % 4 * 256);
  }
  EXPECT_THROW(CollectiveLayout({}, 256, 1), std::invalid_argument);
}

}  // namespace
