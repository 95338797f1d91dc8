//===- Layout.cpp - Transpose, broadcast and tiling copies ----------------===//
//
// transpose, expand, tile, depth_to_space and space_to_depth are all one
// strided copy of the input (a permuted, broadcast or interleaved view), so
// they share copyStrided, which moves elements as bytes and works for every
// dtype.
//
//===----------------------------------------------------------------------===//

#include "ShapeKernelUtils.h"

namespace mlcc::ref {
namespace shapek {

namespace {

/// copyStrided for one element size; N is a constant so each memcpy is a
/// single load/store.
template <size_t N>
void copyStridedN(const uint8_t *src, const std::vector<int64_t> &strides,
                  uint8_t *dst, const Shape &shape) {
  size_t rank = shape.size();
  int64_t total = numElements(shape);
  if (total == 0)
    return;
  if (rank == 0) {
    std::memcpy(dst, src, N);
    return;
  }
  int64_t inner = shape[rank - 1];
  int64_t innerStride = strides[rank - 1] * static_cast<int64_t>(N);
  int64_t outer = total / inner;
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0; // bytes from src to the current row
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t *row = src + offset;
    if (innerStride == static_cast<int64_t>(N)) {
      std::memcpy(dst, row, inner * N);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(dst + i * N, row + i * innerStride, N);
    }
    dst += inner * N;
    // Advance the outer multi-index, keeping the byte offset in step.
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      offset += strides[d] * static_cast<int64_t>(N);
      if (++idx[d] < shape[d])
        break;
      offset -= strides[d] * shape[d] * static_cast<int64_t>(N);
      idx[d] = 0;
    }
  }
}

} // namespace

void copyStrided(const void *src, const std::vector<int64_t> &srcStrides,
                 void *dst, const Shape &outShape, size_t elemSize) {
  auto *s = static_cast<const uint8_t *>(src);
  auto *d = static_cast<uint8_t *>(dst);
  switch (elemSize) {
  case 1:
    return copyStridedN<1>(s, srcStrides, d, outShape);
  case 2:
    return copyStridedN<2>(s, srcStrides, d, outShape);
  case 4:
    return copyStridedN<4>(s, srcStrides, d, outShape);
  case 8:
    return copyStridedN<8>(s, srcStrides, d, outShape);
  default:
    break;
  }
}

Tensor transposeTensor(const Tensor &in, const std::vector<int64_t> &perm) {
  std::vector<int64_t> inStrides = stridesOf(in.shape());
  Shape shape(perm.size());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = in.dim(perm[i]);
    strides[i] = inStrides[perm[i]];
  }
  Tensor out(in.dtype(), shape);
  copyStrided(in.raw(), strides, out.raw(), shape, dtypeSize(in.dtype()));
  return out;
}

} // namespace shapek

using namespace shapek;

namespace {

//===----------------------------------------------------------------------===//
// graph.transpose
//===----------------------------------------------------------------------===//

Status getPerm(const Attrs &attrs, int64_t rank, std::vector<int64_t> &perm) {
  if (!attrs.has("perm")) {
    // Default: reverse the dims.
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
    return Status::success();
  }
  perm = attrs.getInts("perm");
  MLCC_CHECK(static_cast<int64_t>(perm.size()) == rank, "transpose: perm has ",
             perm.size(), " entries for an input of rank ", rank);
  std::vector<bool> seen(rank, false);
  for (int64_t &p : perm) {
    MLCC_CHECK(p >= -rank && p < rank, "transpose: perm entry ", p,
               " is out of range for rank ", rank);
    if (p < 0)
      p += rank;
    MLCC_CHECK(!seen[p], "transpose: perm repeats axis ", p);
    seen[p] = true;
  }
  return Status::success();
}

Status inferTranspose(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("transpose", in, 1));
  std::vector<int64_t> perm;
  MLCC_RETURN_IF_ERROR(getPerm(attrs, in[0].rank(), perm));
  out[0].dtype = in[0].dtype;
  for (int64_t p : perm)
    out[0].shape.push_back(in[0].shape[p]);
  return Status::success();
}

Status runTranspose(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("transpose", in, 1));
  std::vector<int64_t> perm;
  MLCC_RETURN_IF_ERROR(getPerm(attrs, in[0].rank(), perm));
  out[0] = transposeTensor(in[0], perm);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.expand
//===----------------------------------------------------------------------===//

Status inferExpand(const Attrs &, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("expand", in, 2));
  MLCC_CHECK(isIntegerType(in[1].dtype), "expand: shape has type ",
             dtypeName(in[1].dtype), ", expected int64");
  out[0].dtype = in[0].dtype;
  const Shape &src = in[0].shape;
  std::vector<int64_t> target;
  if (constInts(in[1], target)) {
    Status s = broadcastShapes(src, target, out[0].shape);
    MLCC_CHECK(s.ok(), "expand: ", s.message());
    return Status::success();
  }
  int64_t len = 0;
  MLCC_RETURN_IF_ERROR(rankOperandLength("expand", "shape", in[1], len));
  // A target dim is 1 or equal to the input dim, so input dims other than
  // 1 survive whatever the target holds.
  size_t rank = std::max<size_t>(src.size(), len);
  out[0].shape.assign(rank, kDynamic);
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] != 1)
      out[0].shape[rank - src.size() + i] = src[i];
  return Status::success();
}

Status runExpand(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferExpand, attrs, in, out));
  copyStrided(in[0].raw(), broadcastStrides(in[0].shape(), out[0].shape()),
              out[0].raw(), out[0].shape(), dtypeSize(in[0].dtype()));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.tile
//===----------------------------------------------------------------------===//

Status inferTile(const Attrs &, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("tile", in, 2));
  MLCC_CHECK(isIntegerType(in[1].dtype), "tile: repeats has type ",
             dtypeName(in[1].dtype), ", expected int64");
  const Shape &src = in[0].shape;
  out[0].dtype = in[0].dtype;
  std::vector<int64_t> repeats;
  if (!constInts(in[1], repeats)) {
    out[0].shape.assign(src.size(), kDynamic);
    return Status::success();
  }
  MLCC_CHECK(repeats.size() == src.size(), "tile: ", repeats.size(),
             " repeats for an input of rank ", src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    MLCC_CHECK(repeats[i] >= 0, "tile: negative repeat ", repeats[i]);
    if (isDyn(src[i]) && repeats[i] != 0) {
      out[0].shape.push_back(kDynamic);
      continue;
    }
    int64_t d = 0;
    MLCC_CHECK(mulDims(isDyn(src[i]) ? 0 : src[i], repeats[i], d), "tile: dim ",
               i, " (", src[i], ") times its repeat ", repeats[i],
               " overflows int64");
    out[0].shape.push_back(d);
  }
  return Status::success();
}

Status runTile(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferTile, attrs, in, out));
  // The output [r0*d0, r1*d1, ...] has the row-major layout of the view
  // [r0, d0, r1, d1, ...] of the input where the r dims have stride 0.
  std::vector<int64_t> repeats = in[1].toInt64Vector();
  std::vector<int64_t> inStrides = stridesOf(in[0].shape());
  Shape view;
  std::vector<int64_t> strides;
  for (int64_t i = 0; i < in[0].rank(); ++i) {
    view.push_back(repeats[i]);
    strides.push_back(0);
    view.push_back(in[0].dim(i));
    strides.push_back(inStrides[i]);
  }
  copyStrided(in[0].raw(), strides, out[0].raw(), view,
              dtypeSize(in[0].dtype()));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.depth_to_space, graph.space_to_depth
//===----------------------------------------------------------------------===//

Status checkBlockInput(const char *op, const ValueInfo &x, int64_t block) {
  MLCC_CHECK(x.rank() == 4, op, ": input has rank ", x.rank(),
             ", expected rank 4 (NCHW)");
  MLCC_CHECK(block > 0, op, ": blocksize ", block, " must be positive");
  // Every dim is multiplied by at most block^2 (mulDim below).
  int64_t square = 0, scaled = 0;
  MLCC_CHECK(mulDims(block, block, square), op, ": blocksize ", block,
             " squared overflows int64");
  for (int64_t d : x.shape)
    MLCC_CHECK(isDyn(d) || mulDims(d, square, scaled), op, ": dim ", d,
               " times blocksize^2 overflows int64");
  return Status::success();
}

int64_t mulDim(int64_t d, int64_t f) { return isDyn(d) ? kDynamic : d * f; }

Status inferDepthToSpace(const Attrs &attrs, const std::vector<ValueInfo> &in,
                         std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("depth_to_space", in, 1));
  int64_t b = attrs.getInt("blocksize", 0);
  MLCC_RETURN_IF_ERROR(checkBlockInput("depth_to_space", in[0], b));
  std::string mode = attrs.getString("mode", "DCR");
  MLCC_CHECK(mode == "DCR" || mode == "CRD", "depth_to_space: unknown mode '",
             mode, "'");
  const Shape &s = in[0].shape;
  MLCC_CHECK(isDyn(s[1]) || s[1] % (b * b) == 0, "depth_to_space: channels ",
             s[1], " are not a multiple of blocksize^2 = ", b * b);
  out[0].dtype = in[0].dtype;
  out[0].shape = {s[0], isDyn(s[1]) ? kDynamic : s[1] / (b * b),
                  mulDim(s[2], b), mulDim(s[3], b)};
  return Status::success();
}

Status runDepthToSpace(const Attrs &attrs, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(1);
  MLCC_RETURN_IF_ERROR(inferConcrete(inferDepthToSpace, attrs, in, info));
  int64_t b = attrs.getInt("blocksize", 0);
  int64_t n = in[0].dim(0), c = in[0].dim(1), h = in[0].dim(2),
          w = in[0].dim(3);
  Tensor t;
  if (attrs.getString("mode", "DCR") == "DCR")
    // [N, b, b, C/b^2, H, W] -> [N, C/b^2, H, b, W, b]
    t = transposeTensor(in[0].reshaped({n, b, b, c / (b * b), h, w}),
                        {0, 3, 4, 1, 5, 2});
  else
    // [N, C/b^2, b, b, H, W] -> [N, C/b^2, H, b, W, b]
    t = transposeTensor(in[0].reshaped({n, c / (b * b), b, b, h, w}),
                        {0, 1, 4, 2, 5, 3});
  out[0] = t.reshaped(info[0].shape);
  return Status::success();
}

Status inferSpaceToDepth(const Attrs &attrs, const std::vector<ValueInfo> &in,
                         std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("space_to_depth", in, 1));
  int64_t b = attrs.getInt("blocksize", 0);
  MLCC_RETURN_IF_ERROR(checkBlockInput("space_to_depth", in[0], b));
  const Shape &s = in[0].shape;
  for (int i = 2; i < 4; ++i)
    MLCC_CHECK(isDyn(s[i]) || s[i] % b == 0, "space_to_depth: dimension ", i,
               " (", s[i], ") is not a multiple of blocksize ", b);
  out[0].dtype = in[0].dtype;
  out[0].shape = {s[0], mulDim(s[1], b * b), isDyn(s[2]) ? kDynamic : s[2] / b,
                  isDyn(s[3]) ? kDynamic : s[3] / b};
  return Status::success();
}

Status runSpaceToDepth(const Attrs &attrs, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(1);
  MLCC_RETURN_IF_ERROR(inferConcrete(inferSpaceToDepth, attrs, in, info));
  int64_t b = attrs.getInt("blocksize", 0);
  int64_t n = in[0].dim(0), c = in[0].dim(1), h = in[0].dim(2),
          w = in[0].dim(3);
  // [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b]
  Tensor t = transposeTensor(in[0].reshaped({n, c, h / b, b, w / b, b}),
                             {0, 3, 5, 1, 2, 4});
  out[0] = t.reshaped(info[0].shape);
  return Status::success();
}

} // namespace

void shapek::registerLayoutKernels(KernelRegistry &r) {
  r.add("transpose", {inferTranspose, runTranspose});
  r.add("expand", {inferExpand, runExpand});
  r.add("tile", {inferTile, runTile});
  r.add("depth_to_space", {inferDepthToSpace, runDepthToSpace});
  r.add("space_to_depth", {inferSpaceToDepth, runSpaceToDepth});
}

} // namespace mlcc::ref
