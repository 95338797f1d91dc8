//===- ArenaPlanner.h - Offsets of intermediates in one arena ---*- C++ -*-===//
//
// Every intermediate tensor of a compiled model lives at a fixed offset in
// one activation arena. Two buffers may share bytes when their lifetimes
// (the steps of the schedule from definition to last use) do not overlap.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_ARENAPLANNER_H
#define MLCC_LOWERING_COMMON_ARENAPLANNER_H

#include <cstdint>
#include <vector>

namespace mlcc::lowering {

/// One buffer to place: `bytes` live from step `first` to step `last`,
/// both included.
struct ArenaRequest {
  uint64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
};

struct ArenaPlan {
  /// One offset per request, in request order, each a multiple of the
  /// alignment.
  std::vector<uint64_t> offsets;
  /// The arena size: the end of the highest placed buffer.
  uint64_t bytes = 0;
  /// The most bytes (each rounded up to the alignment) live at one step:
  /// no plan can be smaller.
  uint64_t lowerBound = 0;
};

/// Greedy by size: the largest buffers are placed first, each at the lowest
/// offset that overlaps no already placed buffer whose lifetime overlaps its
/// own. Deterministic: ties keep request order.
ArenaPlan planArena(const std::vector<ArenaRequest> &requests,
                    uint64_t alignment = 64);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_ARENAPLANNER_H
