//===- ArenaPlanner.cpp - Offsets of intermediates in one arena -----------===//

#include "ArenaPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace mlcc::lowering {

static uint64_t roundUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

ArenaPlan planArena(const std::vector<ArenaRequest> &requests,
                    uint64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);

  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });

  struct Placed {
    uint64_t begin, end;
    int64_t first, last;
  };
  std::vector<Placed> placed;
  for (size_t i : order) {
    const ArenaRequest &r = requests[i];
    uint64_t size = roundUp(r.bytes, alignment);
    // The address ranges of the buffers alive at the same time, by start.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed &p : placed)
      if (p.first <= r.last && r.first <= p.last)
        busy.push_back({p.begin, p.end});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + size <= begin)
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    placed.push_back({offset, offset + size, r.first, r.last});
    plan.bytes = std::max(plan.bytes, offset + size);
  }

  // Live bytes per step, by a sweep over lifetime starts and ends.
  std::map<int64_t, int64_t> delta;
  for (const ArenaRequest &r : requests) {
    int64_t size = static_cast<int64_t>(roundUp(r.bytes, alignment));
    delta[r.first] += size;
    delta[r.last + 1] -= size;
  }
  int64_t live = 0;
  for (auto [step, d] : delta) {
    live += d;
    plan.lowerBound = std::max<uint64_t>(plan.lowerBound, live);
  }
  return plan;
}

} // namespace mlcc::lowering
