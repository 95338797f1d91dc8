//===- Tensor.h - Host tensors of the reference executor --------*- C++ -*-===//
//
// A dense, row-major host tensor with shared storage. The reference executor,
// the constant folder and the test harnesses exchange values in this form.
// Deliberately free of MLIR so that kernels compile fast and can be unit
// tested alone.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_TENSOR_H
#define MLCC_REFERENCE_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace mlcc::ref {

/// Element types. The numbering is ours; ONNX's TensorProto enum is mapped in
/// the importer.
enum class DType : uint8_t {
  Undefined,
  F32,
  F64,
  F16,
  BF16,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  Bool,
};

size_t dtypeSize(DType t);
/// The element type numbered as in ONNX's TensorProto.DataType (attributes
/// such as Cast's `to` use it); Undefined for string, complex and float8.
DType dtypeFromOnnxEnum(int64_t onnxType);
int64_t dtypeToOnnxEnum(DType t);
const char *dtypeName(DType t);
bool isFloatType(DType t);   // F32, F64, F16, BF16
bool isSignedInt(DType t);   // I8..I64
bool isUnsignedInt(DType t); // U8..U64 (not Bool)

using Shape = std::vector<int64_t>;
/// Marks an unknown dimension in shape inference; never in a Tensor.
constexpr int64_t kDynamic = -1;

int64_t numElements(const Shape &shape);
std::string shapeToString(const Shape &shape);
/// Row-major strides in elements.
std::vector<int64_t> stridesOf(const Shape &shape);

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);

/// Dense row-major tensor. Copies share storage (like a handle); use clone()
/// for a deep copy. A default-constructed Tensor is "absent" (an omitted
/// optional input or output).
class Tensor {
public:
  Tensor() = default;
  /// Zero-initialised tensor of the given type and shape. Out of memory,
  /// the process stops with a message (exit 1); allocate() is the form that
  /// reports it.
  Tensor(DType dtype, Shape shape);
  /// As the constructor; false, and `out` untouched, when the memory
  /// cannot be had (a model's shapes can ask for terabytes).
  static bool allocate(DType dtype, Shape shape, Tensor &out);

  template <typename T>
  static Tensor fromVector(DType dtype, Shape shape, const std::vector<T> &v) {
    Tensor t(dtype, std::move(shape));
    for (size_t i = 0; i < v.size(); ++i)
      t.setDouble(static_cast<int64_t>(i), static_cast<double>(v[i]));
    return t;
  }
  /// Tensor whose bytes are copied from `bytes` (byteSize() of them).
  static Tensor fromBytes(DType dtype, Shape shape, const void *bytes);

  bool present() const { return dtype_ != DType::Undefined; }
  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numel() const { return numElements(shape_); }
  size_t byteSize() const { return numel() * dtypeSize(dtype_); }

  void *raw() { return storage_.get(); }
  const void *raw() const { return storage_.get(); }
  template <typename T> T *data() { return static_cast<T *>(raw()); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(raw());
  }

  /// Element access through double, for any dtype: slow, but keeps the
  /// long tail of kernels dtype-generic. 64-bit integers beyond 2^53 lose
  /// precision here: use getInt/setInt for index data.
  double getDouble(int64_t i) const;
  void setDouble(int64_t i, double v);
  int64_t getInt(int64_t i) const;
  void setInt(int64_t i, int64_t v);

  /// Same storage, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  Tensor clone() const;
  /// Values of an integer tensor as int64 (shape inputs such as Reshape's).
  std::vector<int64_t> toInt64Vector() const;

private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  std::shared_ptr<uint8_t> storage_;
};

/// Calls `fn(T{})` with T the C++ storage type of `dtype` (uint16_t for
/// F16/BF16, bool for Bool).
template <typename Fn> auto dispatchDType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    return fn(float{});
  case DType::F64:
    return fn(double{});
  case DType::F16:
  case DType::BF16:
  case DType::U16:
    return fn(uint16_t{});
  case DType::I8:
    return fn(int8_t{});
  case DType::U8:
    return fn(uint8_t{});
  case DType::I16:
    return fn(int16_t{});
  case DType::I32:
    return fn(int32_t{});
  case DType::U32:
    return fn(uint32_t{});
  case DType::I64:
    return fn(int64_t{});
  case DType::U64:
    return fn(uint64_t{});
  case DType::Bool:
    return fn(bool{});
  case DType::Undefined:
    break;
  }
  return fn(float{});
}

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_TENSOR_H
