//===- Matmul.cpp - Matrix product reference kernels ----------------------===//
//
// matmul (numpy semantics: batch broadcasting, 1-D operands), gemm,
// matmul_integer and qlinear_matmul. All of them end in matmulAcc, an i-k-j
// loop over contiguous rows; transposed gemm operands are copied into row
// order first, which costs O(size) against the O(m*k*n) product.
//
//===----------------------------------------------------------------------===//

#include "ConvPoolUtils.h"

namespace mlcc::ref {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// Batched products
//===----------------------------------------------------------------------===//

/// The operands of a numpy matmul viewed as [batch..., m, k] x
/// [batch..., k, n]: a 1-D A is a row [1, k], a 1-D B a column [k, 1].
struct MatmulDims {
  Shape aBatch, bBatch, batch; // batch = broadcast of aBatch and bBatch
  int64_t m, k, n;
  bool aVector, bVector;
};

Status matmulDims(const char *op, const Shape &a, const Shape &b,
                  MatmulDims &d) {
  MLCC_CHECK(!a.empty() && !b.empty(), op,
             ": operands must have rank >= 1, got shapes ", shapeToString(a),
             " and ", shapeToString(b));
  d.aVector = a.size() == 1;
  d.bVector = b.size() == 1;
  d.m = d.aVector ? 1 : a[a.size() - 2];
  d.k = a.back();
  int64_t kb = d.bVector ? b[0] : b[b.size() - 2];
  d.n = d.bVector ? 1 : b.back();
  MLCC_CHECK(isDyn(d.k) || isDyn(kb) || d.k == kb, op, ": shapes ",
             shapeToString(a), " and ", shapeToString(b),
             " do not agree on the contracted dim (", d.k, " vs ", kb, ")");
  if (isDyn(d.k))
    d.k = kb;
  d.aBatch.assign(a.begin(), a.end() - (d.aVector ? 1 : 2));
  d.bBatch.assign(b.begin(), b.end() - (d.bVector ? 1 : 2));
  Status s = broadcastShapes(d.aBatch, d.bBatch, d.batch);
  MLCC_CHECK(s.ok(), op, ": batch dims of ", shapeToString(a), " and ",
             shapeToString(b), " do not broadcast");
  return Status::success();
}

Shape matmulResultShape(const MatmulDims &d) {
  Shape out = d.batch;
  if (!d.aVector)
    out.push_back(d.m);
  if (!d.bVector)
    out.push_back(d.n);
  return out;
}

/// c += a x b over all (broadcast) batches; c is [batch..., m, n].
template <typename T>
void matmulBatched(const MatmulDims &d, const T *a, const T *b, T *c) {
  int64_t mk = d.m * d.k, kn = d.k * d.n, mn = d.m * d.n;
  // A shared B (no batch of its own): fold A's batches into its rows, one
  // long product (the common activations x weights case).
  if (numElements(d.bBatch) == 1) {
    matmulAcc(a, b, c, numElements(d.batch) * d.m, d.k, d.n);
    return;
  }
  std::vector<int64_t> sa = broadcastStrides(d.aBatch, d.batch);
  std::vector<int64_t> sb = broadcastStrides(d.bBatch, d.batch);
  forEachIndex(d.batch, [&](const std::vector<int64_t> &idx, int64_t i) {
    int64_t oa = 0, ob = 0;
    for (size_t j = 0; j < idx.size(); ++j) {
      oa += idx[j] * sa[j];
      ob += idx[j] * sb[j];
    }
    matmulAcc(a + oa * mk, b + ob * kn, c + i * mn, d.m, d.k, d.n);
  });
}

/// Runs matmulBatched<T> for the dtype of the (zero-initialised) output.
Status matmulTyped(const char *op, const MatmulDims &d, const Tensor &a,
                   const Tensor &b, Tensor &c) {
  switch (c.dtype()) {
  case DType::F32:
    matmulBatched(d, a.data<float>(), b.data<float>(), c.data<float>());
    break;
  case DType::F64:
    matmulBatched(d, a.data<double>(), b.data<double>(), c.data<double>());
    break;
  case DType::I32:
    matmulBatched(d, a.data<int32_t>(), b.data<int32_t>(), c.data<int32_t>());
    break;
  case DType::I64:
    matmulBatched(d, a.data<int64_t>(), b.data<int64_t>(), c.data<int64_t>());
    break;
  case DType::U32:
    matmulBatched(d, a.data<uint32_t>(), b.data<uint32_t>(),
                  c.data<uint32_t>());
    break;
  case DType::U64:
    matmulBatched(d, a.data<uint64_t>(), b.data<uint64_t>(),
                  c.data<uint64_t>());
    break;
  default:
    return Status::error(op, ": type ", dtypeName(c.dtype()),
                         " is not supported");
  }
  return Status::success();
}

/// The types matmul and gemm accept.
Status checkMatmulType(const char *op, const ValueInfo &a, const ValueInfo &b) {
  DType t = a.dtype;
  MLCC_CHECK(isFloatType(t) || t == DType::I32 || t == DType::I64 ||
                 t == DType::U32 || t == DType::U64,
             op, ": operand has type ", dtypeName(t),
             ", expected a float type or a 32/64-bit integer");
  MLCC_CHECK(b.dtype == t, op, ": operands have types ", dtypeName(t), " and ",
             dtypeName(b.dtype), ", expected the same");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.matmul
//===----------------------------------------------------------------------===//

Status inferMatmul(const Attrs &, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() == 2, "matmul: expected inputs A and B");
  MLCC_RETURN_IF_ERROR(checkMatmulType("matmul", in[0], in[1]));
  MatmulDims d;
  MLCC_RETURN_IF_ERROR(matmulDims("matmul", in[0].shape, in[1].shape, d));
  out[0].dtype = in[0].dtype;
  out[0].shape = matmulResultShape(d);
  return Status::success();
}

Status runMatmul(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMatmul, attrs, in, out));
  MatmulDims d;
  MLCC_RETURN_IF_ERROR(matmulDims("matmul", in[0].shape(), in[1].shape(), d));
  if (!isHalfType(out[0].dtype()))
    return matmulTyped("matmul", d, in[0], in[1], out[0]);
  Tensor c(DType::F32, out[0].shape());
  MLCC_RETURN_IF_ERROR(
      matmulTyped("matmul", d, widenHalf(in[0]), widenHalf(in[1]), c));
  narrowHalf(c, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.gemm
//===----------------------------------------------------------------------===//

// Y = alpha * A' x B' + beta * C, A' = transA ? A^T : A (same for B), C
// unidirectionally broadcast to [M, N].
Status inferGemm(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2, "gemm: expected inputs A and B");
  MLCC_RETURN_IF_ERROR(checkMatmulType("gemm", in[0], in[1]));
  const Shape &a = in[0].shape, &b = in[1].shape;
  MLCC_CHECK(a.size() == 2 && b.size() == 2, "gemm: operands have shapes ",
             shapeToString(a), " and ", shapeToString(b), ", expected rank 2");
  bool ta = attrs.getInt("transA", 0) != 0, tb = attrs.getInt("transB", 0) != 0;
  int64_t m = a[ta ? 1 : 0], k = a[ta ? 0 : 1];
  int64_t kb = b[tb ? 1 : 0], n = b[tb ? 0 : 1];
  MLCC_CHECK(isDyn(k) || isDyn(kb) || k == kb, "gemm: A' is ", m, "x", k,
             " but B' is ", kb, "x", n);
  out[0].dtype = in[0].dtype;
  out[0].shape = {m, n};
  if (in.size() > 2 && in[2].present()) {
    const ValueInfo &c = in[2];
    MLCC_CHECK(c.dtype == in[0].dtype, "gemm: C has type ", dtypeName(c.dtype),
               ", expected ", dtypeName(in[0].dtype));
    MLCC_CHECK(c.rank() <= 2, "gemm: C has rank ", c.rank(),
               ", expected at most 2");
    // Unidirectional broadcast: each dim of C (right-aligned) is 1 or
    // equal to the matching dim of Y.
    for (int64_t i = 0; i < c.rank(); ++i) {
      int64_t cd = c.shape[i], yd = out[0].shape[2 - c.rank() + i];
      MLCC_CHECK(cd == 1 || isDyn(cd) || isDyn(yd) || cd == yd,
                 "gemm: C of shape ", shapeToString(c.shape),
                 " does not broadcast to ", shapeToString(out[0].shape));
    }
  }
  return Status::success();
}

/// A row-major copy of the transpose of the rows x cols matrix `src`, in
/// tiles so that both sides stay in cache.
template <typename T>
std::vector<T> transposed(const T *src, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  std::vector<T> t(rows * cols);
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(cols, j0 + kTile); ++j)
          t[j * rows + i] = src[i * cols + j];
  return t;
}

template <typename T>
void gemmTyped(const Tensor &at, const Tensor &bt, const Tensor &ct, bool ta,
               bool tb, float alpha, float beta, Tensor &yt) {
  int64_t m = yt.dim(0), n = yt.dim(1);
  int64_t k = ta ? at.dim(0) : at.dim(1);
  const T *a = at.data<T>(), *b = bt.data<T>();
  std::vector<T> aT;
  if (ta) {
    aT = transposed(a, k, m);
    a = aT.data();
  }
  T *y = yt.data<T>();
  std::fill(y, y + m * n, T(0));
  if (tb)
    matmulAccTransB(a, b, y, m, k, n);
  else
    matmulAcc(a, b, y, m, k, n);
  if (alpha != 1.0f)
    for (int64_t i = 0; i < m * n; ++i)
      y[i] = static_cast<T>(alpha * y[i]);
  if (!ct.present() || beta == 0.0f)
    return;
  // C broadcasts along a dim of size 1 (or a missing leading dim).
  const T *c = ct.data<T>();
  int64_t cr = ct.rank() == 2 ? ct.dim(0) : 1;
  int64_t cc = ct.rank() >= 1 ? ct.dim(ct.rank() - 1) : 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] +=
          static_cast<T>(beta * c[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)]);
}

Status runGemm(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferGemm, attrs, in, out));
  bool ta = attrs.getInt("transA", 0) != 0, tb = attrs.getInt("transB", 0) != 0;
  float alpha = attrs.getFloat("alpha", 1.0f),
        beta = attrs.getFloat("beta", 1.0f);
  Tensor a = widenHalf(in[0]), b = widenHalf(in[1]);
  Tensor c = in.size() > 2 ? widenHalf(in[2]) : Tensor();
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  switch (y.dtype()) {
  case DType::F32:
    gemmTyped<float>(a, b, c, ta, tb, alpha, beta, y);
    break;
  case DType::F64:
    gemmTyped<double>(a, b, c, ta, tb, alpha, beta, y);
    break;
  case DType::I32:
    gemmTyped<int32_t>(a, b, c, ta, tb, alpha, beta, y);
    break;
  case DType::I64:
    gemmTyped<int64_t>(a, b, c, ta, tb, alpha, beta, y);
    break;
  case DType::U32:
    gemmTyped<uint32_t>(a, b, c, ta, tb, alpha, beta, y);
    break;
  case DType::U64:
    gemmTyped<uint64_t>(a, b, c, ta, tb, alpha, beta, y);
    break;
  default:
    return Status::error("gemm: type ", dtypeName(y.dtype()),
                         " is not supported");
  }
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.matmul_integer and graph.qlinear_matmul
//===----------------------------------------------------------------------===//

/// The int32 product of two 8-bit operands minus their zero points: a's
/// zero point per tensor or per row, b's per tensor or per column.
Status integerProduct(const char *op, const Tensor &a, const Tensor &aZero,
                      const Tensor &b, const Tensor &bZero, const Shape &yShape,
                      std::vector<int32_t> &acc) {
  MatmulDims d;
  MLCC_RETURN_IF_ERROR(matmulDims(op, a.shape(), b.shape(), d));
  std::vector<int32_t> as, bs;
  MLCC_RETURN_IF_ERROR(subtractZeroPoint(
      op, "A", a, aZero, a.rank() >= 2 ? a.rank() - 2 : -1, as));
  MLCC_RETURN_IF_ERROR(subtractZeroPoint(
      op, "B", b, bZero, b.rank() >= 2 ? b.rank() - 1 : -1, bs));
  acc.assign(numElements(yShape), 0);
  matmulBatched(d, as.data(), bs.data(), acc.data());
  return Status::success();
}

Status inferMatmulInteger(const Attrs &, const std::vector<ValueInfo> &in,
                          std::vector<ValueInfo> &out) {
  const char *op = "matmul_integer";
  MLCC_CHECK(in.size() >= 2, op, ": expected inputs A and B");
  MLCC_RETURN_IF_ERROR(check8Bit(op, "A", in[0].dtype));
  MLCC_RETURN_IF_ERROR(check8Bit(op, "B", in[1].dtype));
  MatmulDims d;
  MLCC_RETURN_IF_ERROR(matmulDims(op, in[0].shape, in[1].shape, d));
  out[0].dtype = DType::I32;
  out[0].shape = matmulResultShape(d);
  return Status::success();
}

Status runMatmulInteger(const Attrs &attrs, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMatmulInteger, attrs, in, out));
  Tensor none;
  std::vector<int32_t> acc;
  MLCC_RETURN_IF_ERROR(
      integerProduct("matmul_integer", in[0], in.size() > 2 ? in[2] : none,
                     in[1], in.size() > 3 ? in[3] : none, out[0].shape(), acc));
  std::copy(acc.begin(), acc.end(), out[0].data<int32_t>());
  return Status::success();
}

// Operands: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point.
Status inferQLinearMatmul(const Attrs &, const std::vector<ValueInfo> &in,
                          std::vector<ValueInfo> &out) {
  const char *op = "qlinear_matmul";
  MLCC_CHECK(in.size() == 8, op, ": expected 8 inputs");
  MLCC_RETURN_IF_ERROR(check8Bit(op, "a", in[0].dtype));
  MLCC_RETURN_IF_ERROR(check8Bit(op, "b", in[3].dtype));
  MLCC_RETURN_IF_ERROR(check8Bit(op, "y_zero_point", in[7].dtype));
  for (int i : {1, 4, 6})
    MLCC_CHECK(in[i].dtype == DType::F32, op, ": scale operand ", i,
               " has type ", dtypeName(in[i].dtype), ", expected f32");
  MatmulDims d;
  MLCC_RETURN_IF_ERROR(matmulDims(op, in[0].shape, in[3].shape, d));
  out[0].dtype = in[7].dtype;
  out[0].shape = matmulResultShape(d);
  return Status::success();
}

Status runQLinearMatmul(const Attrs &attrs, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferQLinearMatmul, attrs, in, out));
  const char *op = "qlinear_matmul";
  MatmulDims d;
  MLCC_RETURN_IF_ERROR(matmulDims(op, in[0].shape(), in[3].shape(), d));
  MLCC_CHECK(in[1].numel() == 1 || in[1].numel() == d.m, op, ": a_scale has ",
             in[1].numel(), " elements, expected 1 or ", d.m);
  MLCC_CHECK(in[4].numel() == 1 || in[4].numel() == d.n, op, ": b_scale has ",
             in[4].numel(), " elements, expected 1 or ", d.n);
  MLCC_CHECK(in[6].numel() == 1 && in[7].numel() == 1, op,
             ": y_scale and y_zero_point must be scalars");
  std::vector<int32_t> acc;
  Tensor &y = out[0];
  MLCC_RETURN_IF_ERROR(
      integerProduct(op, in[0], in[2], in[3], in[5], y.shape(), acc));
  float ys = in[6].data<float>()[0];
  int64_t yzp = in[7].getInt(0);
  for (int64_t i = 0, e = y.numel(); i < e; ++i) {
    int64_t row = (i / d.n) % d.m, col = i % d.n;
    float scale = static_cast<float>(paramAt(in[1], row)) *
                  static_cast<float>(paramAt(in[4], col)) / ys;
    y.setInt(i, requantize(static_cast<float>(acc[i]) * scale, yzp, y.dtype()));
  }
  return Status::success();
}

} // namespace

void registerMatmulKernels(KernelRegistry &r) {
  r.add("matmul", {inferMatmul, runMatmul});
  r.add("gemm", {inferGemm, runGemm});
  r.add("matmul_integer", {inferMatmulInteger, runMatmulInteger});
  r.add("qlinear_matmul", {inferQLinearMatmul, runQLinearMatmul});
  nn::registerEinsumKernels(r);
}

} // namespace mlcc::ref
