//===- Winograd.cpp - Winograd F(2x2, 3x3) and F(4x4, 3x3) pieces ---------===//
//
// Both transforms work on one channel block (16 lanes) of one tile at a
// time. F(2x2): the 16 values of a 4x4 in zmm0-15 and the half-transformed
// ones in zmm16-31. F(4x4)'s 6x6 does not fit the registers: the input
// transform takes B^T d a column at a time into 36 vectors on the stack,
// then (B^T d) B a row at a time from there; the output transform keeps
// A^T M (4x6) in zmm8-31, formed a column of M at a time, then forms and
// stores the outputs a row at a time. As in PoolBlocked.cpp, which of a
// tile's input rows and columns lie inside the image is known when the
// kernel is generated: tiles wholly inside run in loops, border ones are
// straight-line code that loads only what is inside (zeros for the rest).
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
#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kPixelBytes = kLanes * 4;

int64_t padded(int64_t c) { return (c + kLanes - 1) / kLanes * kLanes; }

Xbyak::Address argField(Xbyak::CodeGenerator &g, size_t offset) {
  return g.ptr[g.rdi + static_cast<int>(offset)];
}

// F(4x4, 3x3) on the points 0, -1, 1, 1/2, -2 and infinity, which
// Barabasz et al. (2020) suggest for F(4x4) in f32: Lavin's 0, +-1, +-2
// had 1.6 times the mean and 3 times the largest error in a simulation of
// these kernels' roundings (64 channels, inputs and weights in [-1, 1)),
// and missed --check's default tolerance on winograd.test's 22x27 model.
// G is in transformWinogradWeights.
constexpr double kBT4[6][6] = {
    {1, -1.5, -2, 1.5, 1, 0}, {0, 1, -2.5, 0.5, 1, 0},
    {0, -1, 0.5, 2.5, 1, 0},  {0, -2, -1, 2, 1, 0},
    {0, 0.5, -1, -0.5, 1, 0}, {0, 1, -1.5, -2, 1.5, 1}};
constexpr double kAT4[4][6] = {{1, 1, 1, 1, 1, 0},
                               {0, -1, 1, 0.5, -2, 0},
                               {0, 1, 1, 0.25, 4, 0},
                               {0, -1, 1, 0.125, -8, 1}};

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
  void tile2(uint32_t rows, uint32_t cols, const Xbyak::Reg64 &src,
             int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void tile4(uint32_t rows, uint32_t cols, const Xbyak::Reg64 &src,
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
  if (s_.m == 4)
    tile4(rows, cols, src, srcDisp, dst, dstDisp);
  else
    tile2(rows, cols, src, srcDisp, dst, dstDisp);
}

void WinogradInputKernel::tile2(uint32_t rows, uint32_t cols,
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

/// F(4x4): B^T d a column at a time into the stack (t(i, j) at rsp + (6 i +
/// j) * 64), then (B^T d) B a row at a time into V.
void WinogradInputKernel::tile4(uint32_t rows, uint32_t cols,
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
    emitSums6(*this, kBT4, 6, x, y);
    for (int i = 0; i < 6; ++i)
      vmovups(stack(i, j), y[i]);
  }
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j)
      vmovups(x[j], stack(i, j));
    emitSums6(*this, kBT4, 6, x, y);
    for (int j = 0; j < 6; ++j)
      vmovups(
          ptr[dst + static_cast<int>(dstDisp + (i * 6 + j) * positionBytes_)],
          y[j]);
  }
}

/// srcDisp addresses X at (2 th - pad top, 0), dstDisp V at tile (th, 0).
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
    if (s_.m == 4)
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
    if (s_.m == 4)
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
  void tile2(int rows, int cols, bool masked, const Xbyak::Reg64 &src,
             int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void tile4(int rows, int cols, bool masked, const Xbyak::Reg64 &src,
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
  if (s_.m == 4)
    tile4(rows, cols, masked, src, srcDisp, dst, dstDisp);
  else
    tile2(rows, cols, masked, src, srcDisp, dst, dstDisp);
}

void WinogradOutputKernel::tile2(int rows, int cols, bool masked,
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

/// The tile's four outputs in zmm0-3, rows of `blockCols` (2 for F(2x2),
/// 4 for an F(4x4) tile's row `firstRow`): bias, residual, epilogue
/// (scratch zmm4-7), then those of the first `rows` x `cols` inside Y
/// stored.
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

/// F(4x4): A^T M a column of M at a time into zmm8-31 (row i of A^T M in
/// zmm(8 + 6 i) on), then each output row from its six.
void WinogradOutputKernel::tile4(int rows, int cols, bool masked,
                                 const Xbyak::Reg64 &src, int64_t srcDisp,
                                 const Xbyak::Reg64 &dst, int64_t dstDisp) {
  auto half = [](int i, int j) { return Xbyak::Zmm(8 + i * 6 + j); };
  const Xbyak::Zmm x[6] = {zmm0, zmm1, zmm2, zmm3, zmm4, zmm5};
  for (int j = 0; j < 6; ++j) {
    for (int i = 0; i < 6; ++i)
      vmovups(
          x[i],
          ptr[src + static_cast<int>(srcDisp + (i * 6 + j) * positionBytes_)]);
    const Xbyak::Zmm y[4] = {half(0, j), half(1, j), half(2, j), half(3, j)};
    emitSums6(*this, kAT4, 4, x, y);
  }
  const Xbyak::Zmm y[4] = {zmm0, zmm1, zmm2, zmm3};
  for (int i = 0; i < rows; ++i) {
    const Xbyak::Zmm h[6] = {half(i, 0), half(i, 1), half(i, 2),
                             half(i, 3), half(i, 4), half(i, 5)};
    emitSums6(*this, kAT4, 4, h, y);
    finishOutputs(4, 1, cols, i, masked, dst, dstDisp);
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
  MLCC_CHECK(spec.m == 2 || spec.m == 4, name,
             ": Winograd tiles of 2x2 or 4x4 outputs, not ", spec.m);
  for (int64_t p : spec.pads)
    MLCC_CHECK(p >= 0 && p <= 2, name, ": Winograd takes pads of 0 to 2");
  MLCC_CHECK(spec.outH() > 0 && spec.outW() > 0, name,
             ": the 3x3 window does not fit the input");
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
  // The band's outputs read input rows up to top + outRows + 1.
  band.h = std::min(whole.h, top + outRows + 2) - firstRow;
  band.pads[0] = firstRow - top;
  band.pads[2] = outRows + 2 - band.h - band.pads[0];
  band.xPlane = whole.xPlaneFloats();
  band.yPlane = whole.yPlaneFloats();
  return band;
}

void transformWinogradWeights(const float *g, int64_t oc, int64_t c,
                              int64_t ocp, int64_t m, std::vector<float> &u) {
  // G of F(2x2) and of F(4x4), in double: U = G g G^T.
  static const double kG2[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  // F(4x4)'s rows: p^k / prod_{q != p} (p - q) for the points p of kBT4.
  static const double kG4[6][3] = {{1, 0, 0},
                                   {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                   {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                   {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                   {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                   {0, 0, 1}};
  const int a = static_cast<int>(m + 2);
  auto G = [&](int r, int q) { return m == 4 ? kG4[r][q] : kG2[r][q]; };
  u.assign(static_cast<size_t>(a * a * c * ocp), 0.0f);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i) {
      const float *k = g + (o * c + i) * 9;
      double gk[6][3]; // G g
      for (int r = 0; r < a; ++r)
        for (int q = 0; q < 3; ++q)
          gk[r][q] = G(r, 0) * k[q] + G(r, 1) * k[3 + q] + G(r, 2) * k[6 + q];
      for (int r = 0; r < a; ++r)
        for (int q = 0; q < a; ++q) {
          double v =
              gk[r][0] * G(q, 0) + gk[r][1] * G(q, 1) + gk[r][2] * G(q, 2);
          u[static_cast<size_t>(((r * a + q) * c + i) * ocp + o)] =
              static_cast<float>(v);
        }
    }
}

} // namespace mlcc::avx512
