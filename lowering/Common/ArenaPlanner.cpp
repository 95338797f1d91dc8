//===- ArenaPlanner.cpp - Offsets of intermediates in one arena -----------===//

#include "ArenaPlanner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>

namespace mlcc::lowering {

static uint64_t roundUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

namespace {

enum class Fit { Lowest, Tightest };

/// Places the requests in `order`, each at the lowest offset (or in the
/// tightest gap) that does not overlap a placed request alive at the same
/// time; returns the arena size and fills `offsets`.
uint64_t place(const std::vector<ArenaRequest> &requests,
               const std::vector<size_t> &order, uint64_t alignment, Fit fit,
               std::vector<uint64_t> &offsets) {
  struct Placed {
    uint64_t begin, end;
    int64_t first, last;
  };
  std::vector<Placed> placed;
  uint64_t top = 0;
  for (size_t i : order) {
    const ArenaRequest &r = requests[i];
    uint64_t size = roundUp(r.bytes, alignment);
    // The address ranges of the buffers alive at the same time, by start.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed &p : placed)
      if (p.first <= r.last && r.first <= p.last)
        busy.push_back({p.begin, p.end});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0, best = UINT64_MAX, bestGap = UINT64_MAX;
    for (auto [begin, end] : busy) {
      if (offset + size <= begin) {
        if (fit == Fit::Lowest) {
          best = offset;
          break;
        }
        if (begin - offset < bestGap) {
          bestGap = begin - offset;
          best = offset;
        }
      }
      offset = std::max(offset, end);
    }
    if (best == UINT64_MAX)
      best = offset;
    offsets[i] = best;
    placed.push_back({best, best + size, r.first, r.last});
    top = std::max(top, best + size);
  }
  return top;
}

} // namespace

// Offline placement is NP-hard; greedy orders are within a few percent of
// the live peak on real models, and which order wins depends on the model,
// so several are tried (a few ms for a thousand buffers) and the smallest
// arena is kept. The first that reaches the live peak stops the search.
ArenaPlan planArena(const std::vector<ArenaRequest> &requests,
                    uint64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);

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

  auto duration = [&](size_t i) {
    return static_cast<uint64_t>(requests[i].last - requests[i].first + 1);
  };
  using Key = std::function<bool(size_t, size_t)>;
  const Key keys[] = {
      // Largest first: big buffers get low offsets, small ones fill gaps.
      [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; },
      // Largest area in the (time, address) plane first.
      [&](size_t a, size_t b) {
        return requests[a].bytes * duration(a) > requests[b].bytes * duration(b);
      },
      // Longest-lived first, then largest.
      [&](size_t a, size_t b) {
        return duration(a) != duration(b) ? duration(a) > duration(b)
                                          : requests[a].bytes > requests[b].bytes;
      },
      // In schedule order, as a linear scan would.
      [&](size_t a, size_t b) { return requests[a].first < requests[b].first; },
  };
  std::vector<uint64_t> offsets(requests.size());
  plan.bytes = UINT64_MAX;
  for (const Key &key : keys) {
    std::vector<size_t> order(requests.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), key);
    for (Fit fit : {Fit::Lowest, Fit::Tightest}) {
      uint64_t bytes = place(requests, order, alignment, fit, offsets);
      if (bytes < plan.bytes) {
        plan.bytes = bytes;
        plan.offsets = offsets;
      }
      if (plan.bytes <= plan.lowerBound)
        return plan;
    }
  }
  return plan;
}

} // namespace mlcc::lowering
