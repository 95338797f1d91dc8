//===- Winograd.cpp - Winograd F(m x m, r x r) pieces ---------------------===//
//
// Both transforms work on one channel block (16 lanes) of one tile at a
// time. F(2x2, 3x3): the 16 values of a 4x4 in zmm0-15 and the
// half-transformed ones in zmm16-31. The 6x6 of F(4x4, 3x3) and F(2x2,
// 5x5) does not fit the registers: the input transform takes B^T d a
// column at a time into 36 vectors on the stack, then (B^T d) B a row at a
// time from there; the output transform keeps A^T M (m x 6) in zmm8 on,
// formed a column of M at a time, then forms and stores the outputs a row
// at a time (F(2x2, 5x5): two rows at a time). As in PoolBlocked.cpp,
// which of a tile's input rows and columns lie inside the image is known
// when the kernel is generated: tiles wholly inside run in loops, border
// ones are straight-line code that loads only what is inside (zeros for
// the rest).
//
// Input transform registers: r8 X plane, r9 V of the image, r15 V of the
// block, r12 X row and r13 V row (row loop), rax X tile and rcx V tile
// (column loop); r10, r11, r14, rbx the image, block, row and column
// counters.
//
// Output transform registers: rbp M of the image, r8 M of the block, r9 Y
// plane, rbx bias of the block, r15 residual minus Y; r12/r13 and rax/rcx
// the M and Y row and tile; r10, r11, r14, rdx counters. zmm0-3 the 2x2
// outputs (the epilogue's scratch zmm4-7, the bias zmm4 before it),
// zmm8-23 M's 4x4, zmm24-31 the half transform (F(2x2)).
//
//===----------------------------------------------------------------------===//

#include "Winograd.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kPixelBytes = kLanes * 4;

int64_t padded(int64_t c) { return (c + kLanes - 1) / kLanes * kLanes; }

Xbyak::Address argField(Xbyak::CodeGenerator &g, size_t offset) {
  return g.ptr[g.rdi + static_cast<int>(offset)];
}

// The 6x6 transforms on the points 0, -1, 1, 1/2, -2 and infinity, which
// Barabasz et al. (2020) suggest for F(4x4, 3x3) in f32: Lavin's 0, +-1,
// +-2 had 1.6 times the mean and 3 times the largest error in a simulation
// of these kernels' roundings (64 channels, inputs and weights in [-1, 1)),
// and missed --check's default tolerance on winograd.test's 22x27 model.
// B^T depends on the points only, so F(2x2, 5x5) shares it; A^T's row i
// is p^i, with the infinite point in the last row; G is in
// transformWinogradWeights.
constexpr double kPoints6[5] = {0, -1, 1, 0.5, -2};
constexpr double kBT6[6][6] = {
    {1, -1.5, -2, 1.5, 1, 0}, {0, 1, -2.5, 0.5, 1, 0},
    {0, -1, 0.5, 2.5, 1, 0},  {0, -2, -1, 2, 1, 0},
    {0, 0.5, -1, -0.5, 1, 0}, {0, 1, -1.5, -2, 1.5, 1}};
constexpr double kAT6m4[4][6] = {{1, 1, 1, 1, 1, 0},
                                 {0, -1, 1, 0.5, -2, 0},
                                 {0, 1, 1, 0.25, 4, 0},
                                 {0, -1, 1, 0.125, -8, 1}};
constexpr double kAT6m2[2][6] = {{1, 1, 1, 1, 1, 0}, {0, -1, 1, 0.5, -2, 1}};

/// y[i] = sum_j coef[i][j] x[j] for `rows` rows of six: adds and subtracts
/// for the +-1 terms, FMAs with broadcast constants for the others. y must
/// not overlap x.
void emitSums6(JitGenerator &g, const double (*coef)[6], int rows,
               const Xbyak::Zmm *x, const Xbyak::Zmm *y) {
  for (int i = 0; i < rows; ++i) {
    int first = -1;
    for (int j = 0; j < 6 && first < 0; ++j)
      if (coef[i][j] == 1)
        first = j;
    if (first >= 0)
      g.vmovaps(y[i], x[first]);
    for (int j = 0; j < 6; ++j) {
      const double c = coef[i][j];
      if (c == 0 || j == first)
        continue;
      if (first < 0) {
        g.vmulps(y[i], x[j], g.cst(static_cast<float>(c)));
        first = j;
      } else if (c == 1) {
        g.vaddps(y[i], y[i], x[j]);
      } else if (c == -1) {
        g.vsubps(y[i], y[i], x[j]);
      } else if (c > 0) {
        g.vfmadd231ps(y[i], x[j], g.cst(static_cast<float>(c)));
      } else {
        g.vfnmadd231ps(y[i], x[j], g.cst(static_cast<float>(-c)));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Input transform: V = B^T d B
//===----------------------------------------------------------------------===//

class WinogradInputKernel : public JitGenerator {
public:
  WinogradInputKernel(std::vector<uint8_t> &buffer, const WinogradSpec &spec)
      : JitGenerator(buffer), s_(spec), rowFloats_(spec.vRowFloats()),
        positionBytes_(spec.tiles() * spec.vRowFloats() * 4),
        alpha_(static_cast<int>(spec.alpha())), inside_((1u << alpha_) - 1) {}

  void generate();

private:
  const WinogradSpec &s_;
  const int64_t rowFloats_, positionBytes_;
  /// The patch's side, and the bits of a patch wholly inside.
  const int alpha_;
  const uint32_t inside_;
  static constexpr int kStackBytes = 36 * 64;

  /// Bits i of the rows (columns) of tile row th (column tw) inside X.
  uint32_t rowsInside(int64_t th) const {
    return inside(s_.m * th - s_.pads[0], s_.h);
  }
  uint32_t colsInside(int64_t tw) const {
    return inside(s_.m * tw - s_.pads[1], s_.w);
  }
  uint32_t inside(int64_t first, int64_t extent) const {
    uint32_t bits = 0;
    for (int i = 0; i < alpha_; ++i)
      if (first + i >= 0 && first + i < extent)
        bits |= 1u << i;
    return bits;
  }

  void tile(uint32_t rows, uint32_t cols, const Xbyak::Reg64 &src,
            int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void tile4x4(uint32_t rows, uint32_t cols, const Xbyak::Reg64 &src,
               int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void tile6x6(uint32_t rows, uint32_t cols, const Xbyak::Reg64 &src,
               int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void row(int64_t th, const Xbyak::Reg64 &src, int64_t srcDisp,
           const Xbyak::Reg64 &dst, int64_t dstDisp);
  void plane();
};

/// srcDisp addresses the patch's first element (it may lie in the pads),
/// dstDisp the tile's row of V at position 0.
void WinogradInputKernel::tile(uint32_t rows, uint32_t cols,
                               const Xbyak::Reg64 &src, int64_t srcDisp,
                               const Xbyak::Reg64 &dst, int64_t dstDisp) {
  if (alpha_ == 6)
    tile6x6(rows, cols, src, srcDisp, dst, dstDisp);
  else
    tile4x4(rows, cols, src, srcDisp, dst, dstDisp);
}

/// F(2x2, 3x3)'s 4x4 patch.
void WinogradInputKernel::tile4x4(uint32_t rows, uint32_t cols,
                                  const Xbyak::Reg64 &src, int64_t srcDisp,
                                  const Xbyak::Reg64 &dst, int64_t dstDisp) {
  auto d = [](int i, int j) { return Xbyak::Zmm(i * 4 + j); };
  auto t = [](int i, int j) { return Xbyak::Zmm(16 + i * 4 + j); };
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if ((rows >> i & 1) && (cols >> j & 1))
        vmovups(d(i, j),
                ptr[src +
                    static_cast<int>(srcDisp + (i * s_.w + j) * kPixelBytes)]);
      else
        vpxord(d(i, j), d(i, j), d(i, j));
    }
  // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3.
  for (int j = 0; j < 4; ++j) {
    vsubps(t(0, j), d(0, j), d(2, j));
    vaddps(t(1, j), d(1, j), d(2, j));
    vsubps(t(2, j), d(2, j), d(1, j));
    vsubps(t(3, j), d(1, j), d(3, j));
  }
  // (B^T d) B: the same on the columns.
  for (int i = 0; i < 4; ++i) {
    vsubps(d(i, 0), t(i, 0), t(i, 2));
    vaddps(d(i, 1), t(i, 1), t(i, 2));
    vsubps(d(i, 2), t(i, 2), t(i, 1));
    vsubps(d(i, 3), t(i, 1), t(i, 3));
  }
  for (int xi = 0; xi < 16; ++xi)
    vmovups(ptr[dst + static_cast<int>(dstDisp + xi * positionBytes_)],
            Xbyak::Zmm(xi));
}

/// A 6x6 patch: B^T d a column at a time into the stack (t(i, j) at rsp +
/// (6 i + j) * 64), then (B^T d) B a row at a time into V.
void WinogradInputKernel::tile6x6(uint32_t rows, uint32_t cols,
                                  const Xbyak::Reg64 &src, int64_t srcDisp,
                                  const Xbyak::Reg64 &dst, int64_t dstDisp) {
  const Xbyak::Zmm x[6] = {zmm0, zmm1, zmm2, zmm3, zmm4, zmm5};
  const Xbyak::Zmm y[6] = {zmm6, zmm7, zmm8, zmm9, zmm10, zmm11};
  auto stack = [&](int i, int j) { return ptr[rsp + (i * 6 + j) * 64]; };
  for (int j = 0; j < 6; ++j) {
    for (int i = 0; i < 6; ++i) {
      if ((rows >> i & 1) && (cols >> j & 1))
        vmovups(x[i], ptr[src + static_cast<int>(srcDisp + (i * s_.w + j) *
                                                               kPixelBytes)]);
      else
        vpxord(x[i], x[i], x[i]);
    }
    emitSums6(*this, kBT6, 6, x, y);
    for (int i = 0; i < 6; ++i)
      vmovups(stack(i, j), y[i]);
  }
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j)
      vmovups(x[j], stack(i, j));
    emitSums6(*this, kBT6, 6, x, y);
    for (int j = 0; j < 6; ++j)
      vmovups(
          ptr[dst + static_cast<int>(dstDisp + (i * 6 + j) * positionBytes_)],
          y[j]);
  }
}

/// srcDisp addresses X at (m th - pad top, 0), dstDisp V at tile (th, 0).
void WinogradInputKernel::row(int64_t th, const Xbyak::Reg64 &src,
                              int64_t srcDisp, const Xbyak::Reg64 &dst,
                              int64_t dstDisp) {
  const uint32_t rows = rowsInside(th);
  const int64_t tw = s_.tileCols(), rowBytes = rowFloats_ * 4;
  int64_t c0 = 0;
  while (c0 < tw && colsInside(c0) != inside_)
    ++c0;
  int64_t c1 = c0;
  while (c1 < tw && colsInside(c1) == inside_)
    ++c1;
  if (c1 - c0 < 2)
    c0 = c1 = tw;
  auto straight = [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c)
      tile(rows, colsInside(c), src,
           srcDisp + (s_.m * c - s_.pads[1]) * kPixelBytes, dst,
           dstDisp + c * rowBytes);
  };
  straight(0, c0);
  if (c1 > c0) {
    lea(rax, ptr[src + static_cast<int>(srcDisp + (s_.m * c0 - s_.pads[1]) *
                                                      kPixelBytes)]);
    lea(rcx, ptr[dst + static_cast<int>(dstDisp + c0 * rowBytes)]);
    mov(rbx, c1 - c0);
    Xbyak::Label loop;
    L(loop);
    tile(rows, inside_, rax, 0, rcx, 0);
    add(rax, static_cast<int>(s_.m * kPixelBytes));
    addImm(rcx, rowBytes, rdx);
    dec(rbx);
    jnz(loop, T_NEAR);
  }
  straight(c1, tw);
}

/// One block of one image: r8 its X plane, r15 its column of V.
void WinogradInputKernel::plane() {
  const int64_t th = s_.tileRows();
  const int64_t xRow = s_.w * kPixelBytes,
                vRow = s_.tileCols() * rowFloats_ * 4;
  int64_t r0 = 0;
  while (r0 < th && rowsInside(r0) != inside_)
    ++r0;
  int64_t r1 = r0;
  while (r1 < th && rowsInside(r1) == inside_)
    ++r1;
  if (r1 - r0 < 2)
    r0 = r1 = th;
  auto straight = [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r)
      row(r, r8, (s_.m * r - s_.pads[0]) * xRow, r15, r * vRow);
  };
  straight(0, r0);
  if (r1 > r0) {
    lea(r12, ptr[r8 + static_cast<int>((s_.m * r0 - s_.pads[0]) * xRow)]);
    lea(r13, ptr[r15 + static_cast<int>(r0 * vRow)]);
    mov(r14, r1 - r0);
    Xbyak::Label loop;
    L(loop);
    row(r0, r12, 0, r13, 0);
    addImm(r12, s_.m * xRow, rdx);
    addImm(r13, vRow, rdx);
    dec(r14);
    jnz(loop, T_NEAR);
  }
  straight(r1, th);
}

void WinogradInputKernel::generate() {
  preamble({rbx, r12, r13, r14, r15});
  const int64_t blocks = padded(s_.c) / kLanes;
  if (s_.tiles() > 0 && blocks > 0) {
    if (alpha_ == 6)
      sub(rsp, kStackBytes);
    mov(r8, argField(*this, offsetof(mlcc_winograd_args, src)));
    mov(r9, argField(*this, offsetof(mlcc_winograd_args, dst)));
    mov(r10, s_.n);
    Xbyak::Label image, block;
    L(image);
    mov(r15, r9);
    mov(r11, blocks);
    L(block);
    plane();
    addImm(r8, s_.xPlaneFloats() * 4, rdx);
    add(r15, kPixelBytes);
    dec(r11);
    jnz(block, T_NEAR);
    addImm(r9, s_.tileRows() * s_.tileCols() * rowFloats_ * 4, rdx);
    dec(r10);
    jnz(image, T_NEAR);
    if (alpha_ == 6)
      add(rsp, kStackBytes);
  }
  postamble();
}

//===----------------------------------------------------------------------===//
// Output transform: Y = A^T M A, then bias, residual and the epilogue
//===----------------------------------------------------------------------===//

class WinogradOutputKernel : public JitGenerator {
public:
  WinogradOutputKernel(std::vector<uint8_t> &buffer, const WinogradSpec &spec)
      : JitGenerator(buffer), s_(spec), rowFloats_(spec.mRowFloats()),
        positionBytes_(spec.tiles() * spec.mRowFloats() * 4), injector_(*this) {
  }

  void generate();

private:
  const WinogradSpec &s_;
  const int64_t rowFloats_, positionBytes_;
  EltwiseInjector injector_;
  const Xbyak::Opmask kTail_ = k1;

  void tile(int rows, int cols, bool masked, const Xbyak::Reg64 &src,
            int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void tile4x4(int rows, int cols, bool masked, const Xbyak::Reg64 &src,
               int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void tile6x6(int rows, int cols, bool masked, const Xbyak::Reg64 &src,
               int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void finishOutputs(int blockCols, int rows, int cols, int firstRow,
                     bool masked, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void row(int rows, bool masked, const Xbyak::Reg64 &src, int64_t srcDisp,
           const Xbyak::Reg64 &dst, int64_t dstDisp);
  void plane(bool masked);
};

/// rows, cols (1 to m) of the tile's outputs inside Y; srcDisp addresses
/// M's row of the tile at position 0, dstDisp Y at the tile's first output.
void WinogradOutputKernel::tile(int rows, int cols, bool masked,
                                const Xbyak::Reg64 &src, int64_t srcDisp,
                                const Xbyak::Reg64 &dst, int64_t dstDisp) {
  if (s_.alpha() == 6)
    tile6x6(rows, cols, masked, src, srcDisp, dst, dstDisp);
  else
    tile4x4(rows, cols, masked, src, srcDisp, dst, dstDisp);
}

/// F(2x2, 3x3)'s 4x4 positions.
void WinogradOutputKernel::tile4x4(int rows, int cols, bool masked,
                                   const Xbyak::Reg64 &src, int64_t srcDisp,
                                   const Xbyak::Reg64 &dst, int64_t dstDisp) {
  auto m = [](int i, int j) { return Xbyak::Zmm(8 + i * 4 + j); };
  auto t = [](int i, int j) { return Xbyak::Zmm(24 + i * 4 + j); };
  auto y = [](int i, int j) { return Xbyak::Zmm(i * 2 + j); };
  for (int xi = 0; xi < 16; ++xi)
    vmovups(Xbyak::Zmm(8 + xi),
            ptr[src + static_cast<int>(srcDisp + xi * positionBytes_)]);
  // A^T M: rows m0 + m1 + m2 and m1 - m2 - m3.
  for (int j = 0; j < 4; ++j) {
    vaddps(t(0, j), m(0, j), m(1, j));
    vaddps(t(0, j), t(0, j), m(2, j));
    vsubps(t(1, j), m(1, j), m(2, j));
    vsubps(t(1, j), t(1, j), m(3, j));
  }
  // (A^T M) A: the same on the columns.
  for (int i = 0; i < 2; ++i) {
    vaddps(y(i, 0), t(i, 0), t(i, 1));
    vaddps(y(i, 0), y(i, 0), t(i, 2));
    vsubps(y(i, 1), t(i, 1), t(i, 2));
    vsubps(y(i, 1), y(i, 1), t(i, 3));
  }
  finishOutputs(2, rows, cols, 0, masked, dst, dstDisp);
}

/// The tile's outputs in zmm0-3, `rows` rows of `blockCols` (= m) from
/// the tile's row `firstRow` on: bias, residual, epilogue (scratch
/// zmm4-7), then those of the first `rows` x `cols` inside Y stored.
void WinogradOutputKernel::finishOutputs(int blockCols, int rows, int cols,
                                         int firstRow, bool masked,
                                         const Xbyak::Reg64 &dst,
                                         int64_t dstDisp) {
  auto y = [&](int i, int j) { return Xbyak::Zmm(i * blockCols + j); };
  if (s_.bias) {
    if (masked)
      vmovups(zmm4 | kTail_ | T_z, ptr[rbx]);
    else
      vmovups(zmm4, ptr[rbx]);
    for (int k = 0; k < 4; ++k)
      vaddps(Xbyak::Zmm(k), Xbyak::Zmm(k), zmm4);
  }
  auto at = [&](int i, int j) {
    return static_cast<int>(dstDisp +
                            ((firstRow + i) * s_.outW() + j) * kPixelBytes);
  };
  if (s_.residual)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        vaddps(y(i, j), y(i, j), ptr[dst + r15 + at(i, j)]);
  injector_.blockEpilogue(s_.epilogue, 4, 1, nullptr, false, kTail_);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      // Y's padding lanes are stored as 0.
      if (masked)
        vmovaps(y(i, j) | kTail_ | T_z, y(i, j));
      vmovups(ptr[dst + at(i, j)], y(i, j));
    }
}

/// 6x6 positions: A^T M a column of M at a time into zmm8 on (row i of A^T
/// M in zmm(8 + 6 i) on), then the outputs from those, as many rows as fill
/// zmm0-3 at a time (one of F(4x4, 3x3), two of F(2x2, 5x5)).
void WinogradOutputKernel::tile6x6(int rows, int cols, bool masked,
                                   const Xbyak::Reg64 &src, int64_t srcDisp,
                                   const Xbyak::Reg64 &dst, int64_t dstDisp) {
  const int m = static_cast<int>(s_.m);
  const double(*at)[6] = m == 4 ? kAT6m4 : kAT6m2;
  auto half = [](int i, int j) { return Xbyak::Zmm(8 + i * 6 + j); };
  const Xbyak::Zmm x[6] = {zmm0, zmm1, zmm2, zmm3, zmm4, zmm5};
  for (int j = 0; j < 6; ++j) {
    for (int i = 0; i < 6; ++i)
      vmovups(
          x[i],
          ptr[src + static_cast<int>(srcDisp + (i * 6 + j) * positionBytes_)]);
    Xbyak::Zmm y[4];
    for (int i = 0; i < m; ++i)
      y[i] = half(i, j);
    emitSums6(*this, at, m, x, y);
  }
  const int rowsAtOnce = 4 / m;
  for (int i0 = 0; i0 < rows; i0 += rowsAtOnce) {
    const int n = std::min(rowsAtOnce, rows - i0);
    for (int i = 0; i < n; ++i) {
      const Xbyak::Zmm h[6] = {half(i0 + i, 0), half(i0 + i, 1),
                               half(i0 + i, 2), half(i0 + i, 3),
                               half(i0 + i, 4), half(i0 + i, 5)};
      Xbyak::Zmm y[4];
      for (int j = 0; j < m; ++j)
        y[j] = Xbyak::Zmm(i * m + j);
      emitSums6(*this, at, m, h, y);
    }
    finishOutputs(m, n, cols, i0, masked, dst, dstDisp);
  }
}

/// A row of tiles with `rows` output rows; srcDisp addresses M's row of
/// its first tile, dstDisp Y at its first output.
void WinogradOutputKernel::row(int rows, bool masked, const Xbyak::Reg64 &src,
                               int64_t srcDisp, const Xbyak::Reg64 &dst,
                               int64_t dstDisp) {
  const int m = static_cast<int>(s_.m);
  const int64_t full = s_.outW() / m, tileBytes = rowFloats_ * 4;
  if (full > 0) {
    lea(rax, ptr[src + static_cast<int>(srcDisp)]);
    lea(rcx, ptr[dst + static_cast<int>(dstDisp)]);
    mov(rdx, full);
    Xbyak::Label loop;
    L(loop);
    tile(rows, m, masked, rax, 0, rcx, 0);
    addImm(rax, tileBytes, rsi);
    add(rcx, m * kPixelBytes);
    dec(rdx);
    jnz(loop, T_NEAR);
  }
  if (s_.outW() % m)
    tile(rows, static_cast<int>(s_.outW() % m), masked, src,
         srcDisp + full * tileBytes, dst, dstDisp + m * full * kPixelBytes);
}

/// One block of one image: r8 its column of M, r9 its Y plane.
void WinogradOutputKernel::plane(bool masked) {
  const int m = static_cast<int>(s_.m);
  const int64_t full = s_.outH() / m;
  const int64_t mRow = s_.tileCols() * rowFloats_ * 4,
                yRows = m * s_.outW() * kPixelBytes;
  if (full > 0) {
    mov(r12, r8);
    mov(r13, r9);
    mov(r14, full);
    Xbyak::Label loop;
    L(loop);
    row(m, masked, r12, 0, r13, 0);
    addImm(r12, mRow, rsi);
    addImm(r13, yRows, rsi);
    dec(r14);
    jnz(loop, T_NEAR);
  }
  if (s_.outH() % m)
    row(static_cast<int>(s_.outH() % m), masked, r8, full * mRow, r9,
        full * yRows);
}

void WinogradOutputKernel::generate() {
  preamble({rbx, rbp, r12, r13, r14, r15});
  const int64_t blocks = padded(s_.oc) / kLanes, fullBlocks = s_.oc / kLanes;
  const int64_t planeBytes = s_.yPlaneFloats() * 4;
  if (s_.tiles() > 0 && blocks > 0) {
    if (s_.oc % kLanes) {
      mov(eax, (1u << (s_.oc % kLanes)) - 1);
      kmovw(kTail_, eax);
    }
    mov(rbp, argField(*this, offsetof(mlcc_winograd_args, src)));
    mov(r9, argField(*this, offsetof(mlcc_winograd_args, dst)));
    if (s_.residual) {
      mov(r15, argField(*this, offsetof(mlcc_winograd_args, residual)));
      sub(r15, r9);
    }
    mov(r10, s_.n);
    Xbyak::Label image, block;
    L(image);
    mov(r8, rbp);
    if (s_.bias)
      mov(rbx, argField(*this, offsetof(mlcc_winograd_args, bias)));
    auto next = [&] {
      add(r8, kPixelBytes);
      addImm(r9, planeBytes, rsi);
      if (s_.bias)
        add(rbx, kPixelBytes);
    };
    if (fullBlocks > 0) {
      mov(r11, fullBlocks);
      L(block);
      plane(/*masked=*/false);
      next();
      dec(r11);
      jnz(block, T_NEAR);
    }
    if (blocks > fullBlocks) {
      plane(/*masked=*/true);
      next();
    }
    addImm(rbp, s_.tileRows() * s_.tileCols() * rowFloats_ * 4, rsi);
    dec(r10);
    jnz(image, T_NEAR);
  }
  postamble();
}

} // namespace

ref::Status checkWinograd(const WinogradSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.n >= 0 && spec.c > 0 && spec.oc > 0 && spec.h > 0 &&
                 spec.w > 0,
             name, ": Winograd needs non-empty shapes");
  MLCC_CHECK((spec.r == 3 && (spec.m == 2 || spec.m == 4)) ||
                 (spec.r == 5 && spec.m == 2),
             name, ": Winograd F(2x2, 3x3), F(4x4, 3x3) or F(2x2, 5x5), not F(",
             spec.m, "x", spec.m, ", ", spec.r, "x", spec.r, ")");
  for (int64_t p : spec.pads)
    MLCC_CHECK(p >= 0 && p < spec.r, name, ": Winograd takes pads of 0 to ",
               spec.r - 1);
  MLCC_CHECK(spec.outH() > 0 && spec.outW() > 0, name, ": the ", spec.r, "x",
             spec.r, " window does not fit the input");
  for (const EltwiseOp &op : spec.epilogue)
    MLCC_CHECK(!isBinary(op.kind) && EltwiseInjector::tempsNeeded(op) <= 4,
               name, ": the epilogue takes unary ops only");
  MLCC_CHECK(spec.vRowFloats() >= padded(spec.c) &&
                 spec.mRowFloats() >= padded(spec.oc),
             name, ": rows of V or M shorter than the channels");
  MLCC_CHECK(spec.xPlaneFloats() >= spec.h * spec.w * kLanes &&
                 spec.yPlaneFloats() >= spec.outH() * spec.outW() * kLanes,
             name, ": channel blocks of X or Y closer than their planes");
  // Displacements into a plane, V and M are 32-bit.
  constexpr int64_t kMax = int64_t(1) << 30;
  const int64_t widest = std::max(spec.vRowFloats(), spec.mRowFloats());
  MLCC_CHECK(spec.h * spec.w * kPixelBytes < kMax &&
                 spec.outH() * spec.outW() * kPixelBytes < kMax &&
                 spec.positions() * spec.tiles() * widest * 4 < kMax,
             name, ": tensors too big for a Winograd kernel");
  return ref::Status::success();
}

ref::Status generateWinogradInput(const WinogradSpec &spec,
                                  std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(checkWinograd(spec));
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    WinogradInputKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

ref::Status generateWinogradOutput(const WinogradSpec &spec,
                                   std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(checkWinograd(spec));
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    WinogradOutputKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

WinogradSpec winogradBand(const WinogradSpec &whole, int64_t r0, int64_t r1,
                          int64_t &firstRow) {
  WinogradSpec band = whole;
  const int64_t top = r0 * whole.m - whole.pads[0];
  const int64_t outRows = std::min(whole.outH(), r1 * whole.m) - r0 * whole.m;
  firstRow = std::max<int64_t>(top, 0);
  // The band's outputs read input rows up to top + outRows + r - 2.
  const int64_t reads = outRows + whole.r - 1;
  band.h = std::min(whole.h, top + reads) - firstRow;
  band.pads[0] = firstRow - top;
  band.pads[2] = reads - band.h - band.pads[0];
  band.xPlane = whole.xPlaneFloats();
  band.yPlane = whole.yPlaneFloats();
  return band;
}

void transformWinogradWeights(const float *g, int64_t oc, int64_t c,
                              int64_t ocp, int64_t m, int64_t r,
                              std::vector<float> &u) {
  const int a = static_cast<int>(m + r - 1), k = static_cast<int>(r);
  // G (a x r) in double: F(2x2, 3x3)'s, or for the 6x6 ones row p^q /
  // prod_{p' != p} (p - p') for each point p of kPoints6, then the infinite
  // point's (0, ..., 0, 1).
  static const double kG2[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  double gm[6][5] = {};
  if (a == 4) {
    for (int i = 0; i < 4; ++i)
      std::copy(kG2[i], kG2[i] + 3, gm[i]);
  } else {
    for (int i = 0; i < 5; ++i) {
      double norm = 1;
      for (int j = 0; j < 5; ++j)
        if (j != i)
          norm *= kPoints6[i] - kPoints6[j];
      for (int q = 0; q < k; ++q)
        gm[i][q] = std::pow(kPoints6[i], q) / norm;
    }
    gm[5][k - 1] = 1;
  }
  u.assign(static_cast<size_t>(a * a * c * ocp), 0.0f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i) {
      const float *w = g + (o * c + i) * k * k;
      double gw[6][5]; // G g
      for (int p = 0; p < a; ++p)
        for (int q = 0; q < k; ++q) {
          gw[p][q] = 0;
          for (int t = 0; t < k; ++t)
            gw[p][q] += gm[p][t] * w[t * k + q];
        }
      for (int p = 0; p < a; ++p)
        for (int q = 0; q < a; ++q) {
          double v = 0;
          for (int t = 0; t < k; ++t)
            v += gw[p][t] * gm[q][t];
          u[static_cast<size_t>(((p * a + q) * c + i) * ocp + o)] =
              static_cast<float>(v);
        }
    }
}

} // namespace mlcc::avx512
