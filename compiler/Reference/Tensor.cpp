//===- Tensor.cpp - Host tensors of the reference executor ----------------===//

#include "mlcc/Reference/Tensor.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <utility>

namespace mlcc::ref {

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  case DType::Undefined:
    return 0;
  }
  return 0;
}

namespace {
// TensorProto.DataType numbering, fixed by the ONNX spec.
constexpr std::pair<int64_t, DType> kOnnxTypes[] = {
    {1, DType::F32},  {2, DType::U8},   {3, DType::I8},   {4, DType::U16},
    {5, DType::I16},  {6, DType::I32},  {7, DType::I64},  {9, DType::Bool},
    {10, DType::F16}, {11, DType::F64}, {12, DType::U32}, {13, DType::U64},
    {16, DType::BF16}};
} // namespace

DType dtypeFromOnnxEnum(int64_t onnxType) {
  for (auto [n, t] : kOnnxTypes)
    if (n == onnxType)
      return t;
  return DType::Undefined;
}

int64_t dtypeToOnnxEnum(DType dtype) {
  for (auto [n, t] : kOnnxTypes)
    if (t == dtype)
      return n;
  return 0; // UNDEFINED
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::I16: return "i16";
  case DType::U16: return "u16";
  case DType::I32: return "i32";
  case DType::U32: return "u32";
  case DType::I64: return "i64";
  case DType::U64: return "u64";
  case DType::Bool: return "bool";
  case DType::Undefined: return "none";
  }
  return "?";
}

bool isFloatType(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}
bool isSignedInt(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}
bool isUnsignedInt(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 ||
         t == DType::U64;
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(const Shape &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      os << 'x';
    if (shape[i] == kDynamic)
      os << '?';
    else
      os << shape[i];
  }
  os << ']';
  return os.str();
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return sign | 0x7c00u;
  if (absx < 0x38800000u) { // below the smallest normal half: subnormal
    float a;
    std::memcpy(&a, &absx, 4);
    // 2^-24 is the half subnormal step; round to nearest even.
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
    ++h;
  return sign | h;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet nan
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

/// Zeroed, 64-byte aligned storage for `bytes`, at least one line so that
/// data() is never null; null when it cannot be had.
static std::shared_ptr<uint8_t> zeroedStorage(size_t bytes) {
  if (bytes > SIZE_MAX - 128)
    return nullptr;
  size_t alloc = ((bytes + 63) / 64) * 64 + 64;
  void *p = std::aligned_alloc(64, alloc);
  if (!p)
    return nullptr;
  std::memset(p, 0, alloc);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), std::free);
}

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  storage_ = zeroedStorage(byteSize());
  if (!storage_) {
    // No status to return from a constructor; the kernels' outputs go
    // through allocate() (allocateOutputs), so this is a temporary.
    std::fprintf(stderr,
                 "mlcc: error: out of memory: %zu bytes for a tensor of "
                 "shape %s\n",
                 byteSize(), shapeToString(shape_).c_str());
    std::exit(1);
  }
}

bool Tensor::allocate(DType dtype, Shape shape, Tensor &out) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = zeroedStorage(t.byteSize());
  if (!t.storage_)
    return false;
  out = std::move(t);
  return true;
}

Tensor Tensor::fromBytes(DType dtype, Shape shape, const void *bytes) {
  Tensor t(dtype, std::move(shape));
  if (t.byteSize())
    std::memcpy(t.raw(), bytes, t.byteSize());
  return t;
}

double Tensor::getDouble(int64_t i) const {
  switch (dtype_) {
  case DType::F32: return data<float>()[i];
  case DType::F64: return data<double>()[i];
  case DType::F16: return halfToFloat(data<uint16_t>()[i]);
  case DType::BF16: return bf16ToFloat(data<uint16_t>()[i]);
  case DType::I8: return data<int8_t>()[i];
  case DType::U8: return data<uint8_t>()[i];
  case DType::I16: return data<int16_t>()[i];
  case DType::U16: return data<uint16_t>()[i];
  case DType::I32: return data<int32_t>()[i];
  case DType::U32: return data<uint32_t>()[i];
  case DType::I64: return static_cast<double>(data<int64_t>()[i]);
  case DType::U64: return static_cast<double>(data<uint64_t>()[i]);
  case DType::Bool: return data<bool>()[i] ? 1.0 : 0.0;
  case DType::Undefined: break;
  }
  return 0.0;
}

namespace {
/// Float to integer conversion that saturates instead of invoking UB on nan
/// or out-of-range values (ONNX leaves those undefined; we stay defined).
template <typename T> T toIntSaturating(double v) {
  if (std::isnan(v))
    return 0;
  double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo)
    return std::numeric_limits<T>::lowest();
  if (v >= hi)
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
} // namespace

void Tensor::setDouble(int64_t i, double v) {
  switch (dtype_) {
  case DType::F32: data<float>()[i] = static_cast<float>(v); return;
  case DType::F64: data<double>()[i] = v; return;
  case DType::F16: data<uint16_t>()[i] = floatToHalf(static_cast<float>(v)); return;
  case DType::BF16: data<uint16_t>()[i] = floatToBf16(static_cast<float>(v)); return;
  case DType::I8: data<int8_t>()[i] = toIntSaturating<int8_t>(v); return;
  case DType::U8: data<uint8_t>()[i] = toIntSaturating<uint8_t>(v); return;
  case DType::I16: data<int16_t>()[i] = toIntSaturating<int16_t>(v); return;
  case DType::U16: data<uint16_t>()[i] = toIntSaturating<uint16_t>(v); return;
  case DType::I32: data<int32_t>()[i] = toIntSaturating<int32_t>(v); return;
  case DType::U32: data<uint32_t>()[i] = toIntSaturating<uint32_t>(v); return;
  case DType::I64: data<int64_t>()[i] = toIntSaturating<int64_t>(v); return;
  case DType::U64: data<uint64_t>()[i] = toIntSaturating<uint64_t>(v); return;
  case DType::Bool: data<bool>()[i] = v != 0.0; return;
  case DType::Undefined: return;
  }
}

int64_t Tensor::getInt(int64_t i) const {
  switch (dtype_) {
  case DType::I64: return data<int64_t>()[i];
  case DType::U64: return static_cast<int64_t>(data<uint64_t>()[i]);
  case DType::I32: return data<int32_t>()[i];
  case DType::U32: return data<uint32_t>()[i];
  case DType::I16: return data<int16_t>()[i];
  case DType::U16: return data<uint16_t>()[i];
  case DType::I8: return data<int8_t>()[i];
  case DType::U8: return data<uint8_t>()[i];
  case DType::Bool: return data<bool>()[i];
  default:
    return toIntSaturating<int64_t>(getDouble(i));
  }
}

void Tensor::setInt(int64_t i, int64_t v) {
  switch (dtype_) {
  case DType::I64: data<int64_t>()[i] = v; return;
  case DType::U64: data<uint64_t>()[i] = static_cast<uint64_t>(v); return;
  case DType::I32: data<int32_t>()[i] = static_cast<int32_t>(v); return;
  case DType::U32: data<uint32_t>()[i] = static_cast<uint32_t>(v); return;
  case DType::I16: data<int16_t>()[i] = static_cast<int16_t>(v); return;
  case DType::U16: data<uint16_t>()[i] = static_cast<uint16_t>(v); return;
  case DType::I8: data<int8_t>()[i] = static_cast<int8_t>(v); return;
  case DType::U8: data<uint8_t>()[i] = static_cast<uint8_t>(v); return;
  case DType::Bool: data<bool>()[i] = v != 0; return;
  default: setDouble(i, static_cast<double>(v)); return;
  }
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const { return fromBytes(dtype_, shape_, raw()); }

std::vector<int64_t> Tensor::toInt64Vector() const {
  std::vector<int64_t> v(numel());
  for (int64_t i = 0; i < numel(); ++i)
    v[i] = getInt(i);
  return v;
}

} // namespace mlcc::ref
