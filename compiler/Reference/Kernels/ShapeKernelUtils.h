//===- ShapeKernelUtils.h - Helpers of shape/indexing kernels ---*- C++ -*-===//
//
// Shared by Shape.cpp, Layout.cpp, Movement.cpp, Gather.cpp, Scatter.cpp and
// Sort.cpp: reading shape-like operands, strided byte copies that work for
// every dtype, and index normalisation. Kept in a nested namespace so that
// other kernel families' helpers cannot collide with these.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_SHAPEKERNELUTILS_H
#define MLCC_REFERENCE_KERNELS_SHAPEKERNELUTILS_H

#include "KernelUtils.h"

#include <string>
#include <vector>

namespace mlcc::ref::shapek {

/// The optional input `i`, or null when it is omitted.
inline const ValueInfo *optionalInput(const std::vector<ValueInfo> &inputs,
                                      size_t i) {
  return i < inputs.size() && inputs[i].present() ? &inputs[i] : nullptr;
}
inline const Tensor *optionalInput(const std::vector<Tensor> &inputs,
                                   size_t i) {
  return i < inputs.size() && inputs[i].present() ? &inputs[i] : nullptr;
}

/// Fails unless the first `n` inputs are present.
template <typename V>
Status requireInputs(const char *op, const std::vector<V> &inputs, size_t n) {
  for (size_t i = 0; i < n; ++i)
    MLCC_CHECK(i < inputs.size() && inputs[i].present(), op, ": input ", i,
               " is missing");
  return Status::success();
}

/// Reads an integer operand (Reshape's shape, Slice's starts...) when its
/// value is known at shape-inference time. Returns false when it is not.
inline bool constInts(const ValueInfo &v, std::vector<int64_t> &out) {
  if (!v.present() || !v.value)
    return false;
  out = v.value->toInt64Vector();
  return true;
}

/// Element count of a 1-D shape-like operand, or kDynamic.
inline int64_t operandLength(const ValueInfo &v) {
  if (v.value)
    return v.value->numel();
  if (v.rank() == 0)
    return 1;
  return v.rank() == 1 ? v.shape[0] : kDynamic;
}

/// The most dims a result whose rank comes from an operand's length (Reshape's
/// shape, Unsqueeze's axes...) may have; numpy's limit too. Past it the
/// operand is a mistake, not a shape, and the rank alone would not fit in
/// memory.
constexpr int64_t kMaxRank = 64;

/// The length of `v`, a 1-D operand of `op` whose values are unknown and
/// whose length sets the result's rank: it must be known and at most
/// kMaxRank.
inline Status rankOperandLength(const char *op, const char *what,
                                const ValueInfo &v, int64_t &len) {
  len = operandLength(v);
  MLCC_CHECK(len != kDynamic, op, ": the ", what,
             " operand has unknown length, so the result's rank is unknown");
  MLCC_CHECK(len <= kMaxRank, op, ": the ", what, " operand has ", len,
             " elements, for a result of more than ", kMaxRank, " dims");
  return Status::success();
}

inline bool isIntegerType(DType t) {
  return isSignedInt(t) || isUnsignedInt(t);
}

/// Product of shape[begin, end), kDynamic if any of them is dynamic (unless
/// one is 0, which makes the product 0 regardless).
inline int64_t productOf(const Shape &shape, size_t begin, size_t end) {
  int64_t p = 1;
  bool dynamic = false;
  for (size_t i = begin; i < end; ++i) {
    if (shape[i] == 0)
      return 0;
    if (isDyn(shape[i]))
      dynamic = true;
    else
      p *= shape[i];
  }
  return dynamic ? kDynamic : p;
}

/// Maps a possibly negative index into [0, dim); fails when out of range.
/// Used by every gather/scatter so that a bad index is an error, never a
/// wild read or write.
inline Status normalizeIndex(const char *op, int64_t index, int64_t dim,
                             int64_t &out) {
  if (index < -dim || index >= dim)
    return Status::error(op, ": index ", index,
                         " is out of range for a dimension of size ", dim);
  out = index < 0 ? index + dim : index;
  return Status::success();
}

/// ValueInfos of concrete tensors, values set (as the executor sees them).
/// The tensors must outlive the result.
inline std::vector<ValueInfo> infosOf(const std::vector<Tensor> &inputs) {
  std::vector<ValueInfo> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i].dtype = inputs[i].dtype();
    in[i].shape = inputs[i].shape();
    in[i].value = inputs[i].present() ? &inputs[i] : nullptr;
  }
  return in;
}

/// The ShapeFn applied to concrete tensors; the output shapes must resolve.
/// For kernels that do not simply allocate their outputs (views, data
/// dependent shapes).
Status inferConcrete(ShapeFn fn, const Attrs &attrs,
                     const std::vector<Tensor> &inputs,
                     std::vector<ValueInfo> &outputs);

/// Copies the elements of a strided view into the dense row-major `dst` of
/// shape `outShape`. `src` points at the view's first element; `srcStrides`
/// are in elements and may be 0 (broadcast) or negative (reversed). Byte
/// copies of `elemSize`, so it serves every dtype.
void copyStrided(const void *src, const std::vector<int64_t> &srcStrides,
                 void *dst, const Shape &outShape, size_t elemSize);

/// Dense transpose: output dim i is input dim perm[i].
Tensor transposeTensor(const Tensor &in, const std::vector<int64_t> &perm);

/// ONNX TensorProto data type number to DType (Undefined if unsupported),
/// for attributes such as EyeLike's dtype.

// Registration of the files behind registerShapeKernels.
void registerLayoutKernels(KernelRegistry &r);
void registerMovementKernels(KernelRegistry &r);
// Registration of the files behind registerIndexingKernels.
void registerScatterKernels(KernelRegistry &r);
void registerSortKernels(KernelRegistry &r);

} // namespace mlcc::ref::shapek

#endif // MLCC_REFERENCE_KERNELS_SHAPEKERNELUTILS_H
