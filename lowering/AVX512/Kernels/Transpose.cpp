//===- Transpose.cpp - AVX-512 transposes of 4-byte elements --------------===//
//
// The plane [rows, cols] goes in tiles of 16 x 16: 16 input rows of 16
// elements (fewer at the plane's edges: masked loads, rows not loaded),
// JitGenerator::transpose16x16, 16 output rows (fewer at the edges: masked
// stores, rows not stored). The edge tiles' counts are constants of the
// code: a loop over the whole tiles of a row of tiles, then its edge tile;
// a loop over the whole rows of tiles, then the edge row.
//
// Register plan:
//   rsi, rdx, r8  outer level 0: src, dst, counter
//   r9, r10, r11  level 1      r12, r13, r14  level 2
//   rax, rbx  the row of tiles' src and dst   rcx, rdi  the tile's
//   r15  row-of-tiles counter   rbp  tile counter
//   zmm0-zmm16  the tile and the transpose's spare
//   k1  load mask (columns)   k2  store mask (rows)
//
//===----------------------------------------------------------------------===//

#include "Transpose.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <array>
#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int kTile = 16;
constexpr int64_t kMaxDisp = (int64_t(1) << 31) - 1;

class TransposeKernel : public JitGenerator {
public:
  TransposeKernel(std::vector<uint8_t> &buffer, const TransposeSpec &spec)
      : JitGenerator(buffer), s_(spec) {}

  void generate();

private:
  const TransposeSpec &s_;
  const Xbyak::Reg64 levelSrc_[kMaxTransposeOuterDims] = {rsi, r9, r12},
                     levelDst_[kMaxTransposeOuterDims] = {rdx, r10, r13},
                     levelCount_[kMaxTransposeOuterDims] = {r8, r11, r14};
  const Xbyak::Reg64 rowSrc_ = rax, rowDst_ = rbx, tileSrc_ = rcx,
                     tileDst_ = rdi, rowCount_ = r15, tileCount_ = rbp;

  void tile(int rows, int cols);
  void rowOfTiles(int rows);
  void plane(const Xbyak::Reg64 &src, const Xbyak::Reg64 &dst);
  void level(size_t k, const Xbyak::Reg64 &src, const Xbyak::Reg64 &dst);
};

/// The tile at tileSrc_ / tileDst_: `rows` input rows (output lanes) of
/// `cols` elements (output rows).
void TransposeKernel::tile(int rows, int cols) {
  std::array<int, 16> regs;
  for (int r = 0; r < kTile; ++r)
    regs[r] = r;
  int spare = kTile;
  // Rows past `rows` are not loaded: their lanes are never stored.
  for (int r = 0; r < rows; ++r) {
    Xbyak::Address a =
        ptr[tileSrc_ + static_cast<int>(4 * r * s_.srcRowStride)];
    if (cols < kTile)
      vmovups(Xbyak::Zmm(regs[r]) | k1 | T_z, a);
    else
      vmovups(Xbyak::Zmm(regs[r]), a);
  }
  transpose16x16(regs, spare);
  for (int c = 0; c < cols; ++c) {
    Xbyak::Address a =
        ptr[tileDst_ + static_cast<int>(4 * c * s_.dstRowStride)];
    if (rows < kTile)
      vmovups(a | k2, Xbyak::Zmm(regs[c]));
    else
      vmovups(a, Xbyak::Zmm(regs[c]));
  }
}

/// The tiles of `rows` input rows from rowSrc_ / rowDst_.
void TransposeKernel::rowOfTiles(int rows) {
  const int64_t whole = s_.cols / kTile;
  const int edge = static_cast<int>(s_.cols % kTile);
  mov(tileSrc_, rowSrc_);
  mov(tileDst_, rowDst_);
  if (whole > 0) {
    Xbyak::Label loop;
    mov(tileCount_, whole);
    L(loop);
    tile(rows, kTile);
    add(tileSrc_, 4 * kTile);
    add(tileDst_, static_cast<int>(4 * kTile * s_.dstRowStride));
    dec(tileCount_);
    jnz(loop, T_NEAR);
  }
  if (edge > 0)
    tile(rows, edge);
}

void TransposeKernel::plane(const Xbyak::Reg64 &src,
                            const Xbyak::Reg64 &dst) {
  const int64_t whole = s_.rows / kTile;
  const int edge = static_cast<int>(s_.rows % kTile);
  mov(rowSrc_, src);
  mov(rowDst_, dst);
  if (whole > 0) {
    Xbyak::Label loop;
    mov(rowCount_, whole);
    L(loop);
    rowOfTiles(kTile);
    add(rowSrc_, static_cast<int>(4 * kTile * s_.srcRowStride));
    add(rowDst_, 4 * kTile);
    dec(rowCount_);
    jnz(loop, T_NEAR);
  }
  if (edge > 0)
    rowOfTiles(edge);
}

/// Outer level k and the ones inside it, from src / dst.
void TransposeKernel::level(size_t k, const Xbyak::Reg64 &src,
                            const Xbyak::Reg64 &dst) {
  if (k == s_.outerSizes.size()) {
    plane(src, dst);
    return;
  }
  Xbyak::Label loop;
  mov(levelCount_[k], s_.outerSizes[k]);
  L(loop);
  if (k + 1 < s_.outerSizes.size()) {
    mov(levelSrc_[k + 1], src);
    mov(levelDst_[k + 1], dst);
    level(k + 1, levelSrc_[k + 1], levelDst_[k + 1]);
  } else {
    level(k + 1, src, dst);
  }
  add(src, static_cast<int>(4 * s_.outerSrcStrides[k]));
  add(dst, static_cast<int>(4 * s_.outerDstStrides[k]));
  dec(levelCount_[k]);
  jnz(loop, T_NEAR);
}

void TransposeKernel::generate() {
  preamble({rbx, rbp, r12, r13, r14, r15});
  int64_t planes = 1;
  for (int64_t n : s_.outerSizes)
    planes *= n;
  if (planes > 0 && s_.rows > 0 && s_.cols > 0) {
    mov(levelSrc_[0],
        ptr[rdi + static_cast<int>(offsetof(mlcc_transpose_args, src))]);
    mov(levelDst_[0],
        ptr[rdi + static_cast<int>(offsetof(mlcc_transpose_args, dst))]);
    // The edge tiles' masks: columns loaded, rows stored.
    if (s_.cols % kTile) {
      mov(eax, (1u << (s_.cols % kTile)) - 1);
      kmovw(k1, eax);
    }
    if (s_.rows % kTile) {
      mov(eax, (1u << (s_.rows % kTile)) - 1);
      kmovw(k2, eax);
    }
    level(0, levelSrc_[0], levelDst_[0]);
  }
  postamble();
}

} // namespace

bool planTranspose(const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &perm, TransposeSpec &spec) {
  const size_t rank = shape.size();
  if (perm.size() != rank)
    return false;
  // Dims of size 1 go; output dims that are consecutive input dims merge.
  std::vector<int64_t> kept; // input dims of size > 1, in output order
  for (int64_t d : perm)
    if (d < 0 || d >= static_cast<int64_t>(rank))
      return false;
    else if (shape[d] != 1)
      kept.push_back(d);
  std::vector<std::vector<int64_t>> groups; // input dims, output order
  for (int64_t d : kept)
    if (!groups.empty() && groups.back().back() + 1 == d)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  // The merged input's dims are the groups in input order.
  std::vector<size_t> inputOrder(groups.size());
  for (size_t g = 0; g < groups.size(); ++g)
    inputOrder[g] = g;
  std::sort(inputOrder.begin(), inputOrder.end(), [&](size_t x, size_t y) {
    return groups[x][0] < groups[y][0];
  });
  const size_t n = groups.size();
  if (n < 2 || inputOrder[n - 1] == n - 1)
    return false; // the identity, or the last dim stays: row copies
  std::vector<int64_t> size(n), srcStride(n), dstStride(n);
  for (size_t g = 0; g < n; ++g) {
    size[g] = 1;
    for (int64_t d : groups[g])
      size[g] *= shape[d];
  }
  int64_t stride = 1;
  for (size_t i = n; i-- > 0;) { // input strides, innermost input group first
    srcStride[inputOrder[i]] = stride;
    stride *= size[inputOrder[i]];
  }
  stride = 1;
  for (size_t g = n; g-- > 0;) { // output strides
    dstStride[g] = stride;
    stride *= size[g];
  }
  // The plane: rows the output's last group, cols the input's last.
  const size_t rowGroup = n - 1, colGroup = inputOrder[n - 1];
  spec.rows = size[rowGroup];
  spec.cols = size[colGroup];
  spec.srcRowStride = srcStride[rowGroup];
  spec.dstRowStride = dstStride[colGroup];
  spec.outerSizes.clear();
  spec.outerSrcStrides.clear();
  spec.outerDstStrides.clear();
  for (size_t g = 0; g < n; ++g)
    if (g != rowGroup && g != colGroup) {
      spec.outerSizes.push_back(size[g]);
      spec.outerSrcStrides.push_back(srcStride[g]);
      spec.outerDstStrides.push_back(dstStride[g]);
    }
  return spec.outerSizes.size() <= kMaxTransposeOuterDims;
}

Status validateTranspose(const TransposeSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.outerSizes.size() <= kMaxTransposeOuterDims &&
                 spec.outerSrcStrides.size() == spec.outerSizes.size() &&
                 spec.outerDstStrides.size() == spec.outerSizes.size(),
             name, ": ", spec.outerSizes.size(), " outer dims, at most ",
             kMaxTransposeOuterDims);
  MLCC_CHECK(spec.rows >= 0 && spec.cols >= 0, name, ": a size is negative");
  for (int64_t n : spec.outerSizes)
    MLCC_CHECK(n >= 0, name, ": a size is negative");
  // Byte offsets of a tile's rows and of every step are 32-bit.
  std::vector<int64_t> strides = spec.outerSrcStrides;
  strides.insert(strides.end(), spec.outerDstStrides.begin(),
                 spec.outerDstStrides.end());
  strides.push_back(kTile * spec.srcRowStride);
  strides.push_back(kTile * spec.dstRowStride);
  for (int64_t s : strides)
    MLCC_CHECK(s >= 0 && 4 * s <= kMaxDisp, name, ": a stride of ", s,
               " elements is 2 GiB or more");
  return Status::success();
}

Status generateTranspose(const TransposeSpec &spec,
                         std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validateTranspose(spec));
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    TransposeKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
