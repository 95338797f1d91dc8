//===- ArenaPlannerTest.cpp - Liveness-based arena offsets ----------------===//

#include "ArenaPlanner.h"

#include <catch2/catch.hpp>

using namespace mlcc::lowering;

namespace {

bool overlapInTime(const ArenaRequest &a, const ArenaRequest &b) {
  return a.first <= b.last && b.first <= a.last;
}

/// No two buffers alive at the same step share a byte.
void checkNoConflicts(const std::vector<ArenaRequest> &requests,
                      const ArenaPlan &plan, uint64_t alignment) {
  REQUIRE(plan.offsets.size() == requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    CHECK(plan.offsets[i] % alignment == 0);
    CHECK(plan.offsets[i] + requests[i].bytes <= plan.bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!overlapInTime(requests[i], requests[j]) || !requests[i].bytes ||
          !requests[j].bytes)
        continue;
      bool disjoint =
          plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
          plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      CHECK(disjoint);
    }
  }
}

} // namespace

TEST_CASE("a chain reuses memory: two buffers at a time", "[arena]") {
  // a -> b -> c -> d, each read only by the next.
  std::vector<ArenaRequest> chain = {
      {1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaPlan plan = planArena(chain, 64);
  checkNoConflicts(chain, plan, 64);
  CHECK(plan.bytes == 2 * 1024);
  CHECK(plan.lowerBound == 2 * 1024);
  CHECK(plan.offsets[0] == plan.offsets[2]);
}

TEST_CASE("buffers alive together get disjoint bytes", "[arena]") {
  std::vector<ArenaRequest> all = {{100, 0, 5}, {200, 0, 5}, {300, 0, 5}};
  ArenaPlan plan = planArena(all, 64);
  checkNoConflicts(all, plan, 64);
  CHECK(plan.bytes == 128 + 256 + 320);
  CHECK(plan.lowerBound == plan.bytes);
}

TEST_CASE("a skip connection stays alive across the branch", "[arena]") {
  // x (0..4) is read again at step 4; y, z are short-lived in between.
  std::vector<ArenaRequest> requests = {
      {4096, 0, 4}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 4}, {4096, 4, 5}};
  ArenaPlan plan = planArena(requests, 64);
  checkNoConflicts(requests, plan, 64);
  CHECK(plan.bytes == 3 * 4096);
}

TEST_CASE("random lifetimes never conflict; the plan is near the bound",
          "[arena]") {
  uint32_t state = 7;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  for (int round = 0; round < 20; ++round) {
    std::vector<ArenaRequest> requests;
    for (int i = 0; i < 60; ++i) {
      int64_t first = next(100);
      requests.push_back({1 + next(5000), first, first + next(10)});
    }
    ArenaPlan plan = planArena(requests, 64);
    checkNoConflicts(requests, plan, 64);
    CHECK(plan.bytes >= plan.lowerBound);
    CHECK(plan.bytes <= 2 * plan.lowerBound);
  }
}

TEST_CASE("another order reaches the bound where largest-first does not",
          "[arena]") {
  // In 64-byte units: largest-first puts B (4) at 0, then A (2) and D (2)
  // above it and C (3) cannot go below D: 8 units. The live peak is 6
  // (A + B at step 1, C + D at step 4), which placing in schedule order
  // reaches.
  std::vector<ArenaRequest> requests = {
      {2 * 64, 1, 3}, {4 * 64, 0, 1}, {3 * 64, 4, 5}, {2 * 64, 3, 4}};
  ArenaPlan plan = planArena(requests, 64);
  checkNoConflicts(requests, plan, 64);
  CHECK(plan.lowerBound == 6 * 64);
  CHECK(plan.bytes == 6 * 64);
}

TEST_CASE("no buffers: an empty arena", "[arena]") {
  ArenaPlan plan = planArena({}, 64);
  CHECK(plan.bytes == 0);
  CHECK(plan.lowerBound == 0);
}
