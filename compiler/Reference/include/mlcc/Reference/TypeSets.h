//===- TypeSets.h - Classes of element types, as ONNX constrains them -*- C++ -*-===//
//
// The ONNX type constraint of an operand ("T: float types", "T: numeric") as
// a union of bits, and the words an error message uses for it. Shared by the
// reference kernels and the portable lowerings, so both reject a wrong type
// with the same sentence.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_TYPESETS_H
#define MLCC_REFERENCE_TYPESETS_H

namespace mlcc::ref {

enum TypeSet : unsigned {
  kFloat = 1,    // f16, bf16, f32, f64
  kSigned = 2,   // i8..i64
  kUnsigned = 4, // u8..u64
  kBool = 8,
  kFloatOrSigned = kFloat | kSigned,
  kNumeric = kFloat | kSigned | kUnsigned,
  kAny = kNumeric | kBool,
};

/// "a float type", "a numeric type", ... for "expected <name>".
inline const char *typeSetName(unsigned set) {
  switch (set) {
  case kFloat:
    return "a float type";
  case kSigned:
    return "a signed integer type";
  case kUnsigned:
    return "an unsigned integer type";
  case kBool:
    return "bool";
  case kFloatOrSigned:
    return "a float or signed integer type";
  case kNumeric:
    return "a numeric type";
  default:
    return "a tensor type";
  }
}

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_TYPESETS_H
