//===- StencilModes.h - graph.stencil's reduction and padding modes -*- C++ -*-===//
//
// The modes of graph.stencil as enums, and their attribute spellings: one
// definition for the reference kernel, the portable lowering and the
// AVX-512 kernel generator. Header only.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_STENCILMODES_H
#define MLCC_REFERENCE_STENCILMODES_H

#include <cstdint>
#include <string>

namespace mlcc::ref {

enum class StencilReduction : uint8_t { Sum, Min, Max, ArgMin, ArgMax };
enum class StencilPadding : uint8_t { Zero, Clamp, Reflect, Mirror };

/// The attribute spellings ("sum", "argmax"; "zero", "mirror"); false for
/// an unknown one.
inline bool parseStencilReduction(const std::string &s, StencilReduction &r) {
  static const char *const names[] = {"sum", "min", "max", "argmin",
                                      "argmax"};
  for (unsigned i = 0; i < 5; ++i)
    if (s == names[i]) {
      r = static_cast<StencilReduction>(i);
      return true;
    }
  return false;
}

inline bool parseStencilPadding(const std::string &s, StencilPadding &p) {
  static const char *const names[] = {"zero", "clamp", "reflect", "mirror"};
  for (unsigned i = 0; i < 4; ++i)
    if (s == names[i]) {
      p = static_cast<StencilPadding>(i);
      return true;
    }
  return false;
}

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_STENCILMODES_H
