//===- StrassenGemm.cpp - A large GEMM as seven half-size products --------===//
//
// A direct f32 GEMM cannot beat the FMA peak; BERT's fcs run at 82-93% of
// it. One level of Strassen's algorithm computes C = A x B from seven
// products of half-size blocks instead of eight: 7/8 of the multiply-adds,
// for a few passes over blocks of A and C. B is a weight, so its sums are
// made now, packed as seven matrices. Winograd's form of the algorithm
// (15 block additions rather than 18), with A split into m x k blocks, B
// into k x n and C into m x n:
//
//   S1 = A21 + A22   S2 = S1 - A11    S3 = A11 - A21   S4 = A12 - S2
//   T1 = B12 - B11   T2 = B22 - T1    T3 = B22 - B12   T4 = T2 - B21
//
//   X = A11 B11              C11 = A12 B21 + X
//   Y = S2 T2 + X            Z = S1 T1 + Y          X = S3 T3 + Y
//   C21 = A22 (-T4) + X      C22 = X + Z - Y        C12 = S4 B22 + Z
//
// Every product but the first adds a block that an earlier one wrote (the
// GEMM kernel's residual), so the additions of C cost one pass, C22's.
// The S sums are one pass over A (Kernels/Strassen.h). The bias and the
// activation go into the last write of each block of C: the products of
// C11, C21 and C12, C22's sum. A residual of the fc (its Z, read like C)
// cannot share the kernels' one residual with the chain: then each block
// of C gets it in a pass of its own.
//
// An odd M (ViT's 197 tokens) runs on a copy of A with a row of zeros
// added, into a C with a row more, copied back: two passes over A and C.
//
// Rounding: a sum of blocks before a product (S, T) rounds once more than
// A x B does, so the result is a little less accurate than a direct GEMM's
// (BERT-base's output 1.4e-5 off PyTorch's where the direct GEMM's is
// 7.6e-6). Row i of C reads row i + m of A too: an inf or nan there makes
// both rows nan, where a direct GEMM keeps it to its own row.
//
// Threads: the S sums split A's rows; then the threads take chunks of 64
// of each block's n columns: every product and sum of a chunk's columns
// reads only those columns of the blocks before it, so a thread runs them
// all, chunk after chunk, with no barrier between; the temporaries' chunks
// stay in its cache.
//
//===----------------------------------------------------------------------===//

#include "StrassenGemm.h"
#include "Eltwise.h"
#include "Gemm.h"
#include "SelectionUtils.h"
#include "Strassen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Columns of C one kernel call computes: four panels, the GEMM kernel's
/// widest register block.
constexpr int64_t kChunkColumns = 4 * kGemmPanel;

/// The seven B-side factors, in the order the products use them.
enum Factor { B11, B21, T2, T1, T3, NegT4, B22, kFactors };

/// The k x n block (i, j) of the K x N matrix `b`.
std::vector<float> blockOf(const std::vector<float> &b, int64_t n, int64_t k,
                           int i, int j) {
  std::vector<float> block(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r)
    std::copy_n(b.begin() + (i * k + r) * 2 * n + j * n, n,
                block.begin() + r * n);
  return block;
}

/// x + sign * y.
std::vector<float> plus(std::vector<float> x, const std::vector<float> &y,
                        float sign) {
  for (size_t i = 0; i < x.size(); ++i)
    x[i] += sign * y[i];
  return x;
}

/// The seven factors packed for the GEMM kernels, in the order a thread
/// reads them: chunk after chunk of columns, and within a chunk factor
/// after factor (its kChunkColumns / 16 panels of each), so that each
/// product's B follows the one before and the kernels prefetch it.
std::vector<float> packFactors(const StrassenGemm &g) {
  const int64_t k = g.k / 2, n = g.n / 2;
  auto b11 = blockOf(g.b, n, k, 0, 0), b12 = blockOf(g.b, n, k, 0, 1),
       b21 = blockOf(g.b, n, k, 1, 0), b22 = blockOf(g.b, n, k, 1, 1);
  auto t1 = plus(b12, b11, -1), t2 = plus(b22, t1, -1), t3 = plus(b22, b12, -1),
       negT4 = plus(b21, t2, -1);
  std::vector<std::vector<float>> packedFactors(kFactors);
  const std::vector<float> *factors[kFactors] = {&b11, &b21,   &t2, &t1,
                                                 &t3,  &negT4, &b22};
  for (int f = 0; f < kFactors; ++f)
    packB(factors[f]->data(), k, n, n, /*transB=*/false, packedFactors[f]);
  const int64_t chunkFloats = kChunkColumns * k;
  std::vector<float> packed;
  for (int64_t chunk = 0; chunk < n / kChunkColumns; ++chunk)
    for (const std::vector<float> &factor : packedFactors)
      packed.insert(packed.end(), factor.begin() + chunk * chunkFloats,
                    factor.begin() + (chunk + 1) * chunkFloats);
  return packed;
}

} // namespace

bool strassenApplies(int64_t m, int64_t k, int64_t n) {
  // Below these the products' own tails and the sums' passes eat the
  // eighth saved (measured on BERT-base's 128 x 768 x 768 fcs: 7-12%
  // faster on one Zen 4 core).
  return m >= 64 && k % (2 * kGemmPanel) == 0 && k >= 512 &&
         n % (2 * kChunkColumns) == 0 && n >= 512;
}

LogicalResult emitStrassenGemm(Operation *op, OpLoweringContext &ctx,
                               const StrassenGemm &g) {
  // An odd M gets a row of zeros: A and C (and the fc's residual) are
  // copied into scratch with one row more, and C's rows back.
  const bool padRow = g.m % 2 != 0;
  const int64_t m = (g.m + 1) / 2, k = g.k / 2, n = g.n / 2;
  const bool bias = !g.bias.empty(), residual = static_cast<bool>(g.residual);
  const std::string name = g.name + "_strassen";

  // The products: from a block of A (lda K) or an S (lda k), adding the
  // block an earlier product wrote, and the last write of a block of C
  // (bias and activation, unless the fc's residual comes after).
  GemmSpec common;
  common.name = name;
  common.m = m;
  common.k = k;
  common.n = kChunkColumns;
  common.ldc = g.n;
  // One pass over k, so that each call prefetches the next call's B, which
  // follows its own (packFactors), where a slice of B leaves room for it in
  // L2 (k up to 1024: Gemm.cpp).
  common.kBlock = k;
  common.prefetchNextB = true;
  auto productSpec = [&](bool fromA, bool adds, bool last) {
    GemmSpec s = common;
    s.lda = fromA ? g.k : k;
    s.residual = adds;
    if (last && !residual) {
      s.bias = bias;
      s.epilogue = g.epilogue;
    }
    return s;
  };
  std::string firstKernel, fromAKernel, chainKernel, lastKernel;
  if (!addGeneratedKernel(op, ctx, generateGemm,
                          productSpec(true, false, false), name, firstKernel) ||
      !addGeneratedKernel(op, ctx, generateGemm, productSpec(true, true, true),
                          name, fromAKernel) ||
      !addGeneratedKernel(op, ctx, generateGemm,
                          productSpec(false, true, false), name, chainKernel) ||
      !addGeneratedKernel(op, ctx, generateGemm, productSpec(false, true, true),
                          name, lastKernel))
    return failure();

  StrassenSumsSpec sums;
  sums.name = name + "_sums";
  sums.m = m;
  sums.k = k;
  sums.lda = g.k;
  StrassenCombineSpec c22;
  c22.name = name + "_c22";
  c22.rows = m;
  c22.cols = kChunkColumns;
  c22.ld = g.n;
  c22.signs = {1, 1, -1}; // X + Z - Y
  if (residual)
    c22.signs.push_back(1);
  c22.bias = bias;
  c22.epilogue = g.epilogue;
  StrassenCombineSpec finish = c22; // C + the fc's residual
  finish.name = name + "_residual";
  finish.signs = {1, 1};
  std::string sumsKernel, c22Kernel, finishKernel, copyA, copyRow, copyC;
  auto copyKernel = [&](const char *what, int64_t floats, std::string &symbol) {
    EltwiseSpec spec; // no ops: a copy of src[0]
    spec.name = name + what;
    spec.n = floats;
    return addGeneratedKernel(op, ctx, generateEltwise, spec, spec.name,
                              symbol);
  };
  if (padRow && (!copyKernel("_copy_a", g.m * g.k, copyA) ||
                 !copyKernel("_zero_row", g.k, copyRow) ||
                 !copyKernel("_copy_c", g.m * g.n, copyC)))
    return failure();
  if (!addGeneratedKernel(op, ctx, generateStrassenSums, sums, sums.name,
                          sumsKernel) ||
      !addGeneratedKernel(op, ctx, generateStrassenCombine, c22, c22.name,
                          c22Kernel) ||
      (residual && !addGeneratedKernel(op, ctx, generateStrassenCombine, finish,
                                       finish.name, finishKernel)))
    return failure();

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIntOp>(loc, v, 64);
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(loc, x, y);
  };
  auto mul = [&](Value x, int64_t v) -> Value {
    return b.create<arith::MulIOp>(loc, x, i64(v));
  };
  auto scratch = [&](int64_t floats) {
    return ctx.address(ctx.scratch(MemRefType::get({floats}, b.getF32Type())));
  };
  // A chunk's columns of one factor.
  const int64_t chunkBytes = kChunkColumns * k * 4;
  // The S sums, m x k each; X and Y side by side in one m x N buffer, Z in
  // another: the temporaries have C's leading dimension, as the kernels'
  // residual does.
  Value s = scratch(4 * m * k), xy = scratch(m * g.n), z = scratch(m * g.n);
  Value packed = ctx.addData(name + "_packed", bytesOf(packFactors(g)));
  Value biasData = bias ? ctx.addData(name + "_bias", bytesOf(g.bias)) : i64(0);

  Value a = g.a, c = g.c, residualData = residual ? g.residual : i64(0);
  // mlcc_eltwise_args: src[4], dst, n.
  auto copy = [&](const std::string &kernel, Value from, Value to,
                  int64_t floats) {
    ctx.callKernel(kernel, {from, i64(0), i64(0), i64(0), to, i64(floats)});
  };
  if (padRow) {
    a = scratch(2 * m * g.k);
    c = scratch(2 * m * g.n);
    copy(copyA, g.a, a, g.m * g.k);
    copy(copyRow,
         ctx.addData(name + "_zeros", std::vector<uint8_t>(g.k * 4, 0)),
         add(a, i64(g.m * g.k * 4)), g.k);
    if (residual) {
      // Its last row is only added to C's, which is dropped.
      residualData = scratch(2 * m * g.n);
      copy(copyC, g.residual, residualData, g.m * g.n);
    }
  }

  ctx.parallelForRanges(m, {a, s}, [&](Value begin, Value end, ValueRange f) {
    ctx.callKernel(sumsKernel, {add(f[0], mul(begin, g.k * 4)),
                                add(f[1], mul(begin, k * 4)),
                                b.create<arith::SubIOp>(loc, end, begin)});
  });

  enum Field { A, S, XY, Z, C, Bias, Packed, Residual };
  SmallVector<Value> fields{a, s, xy, z, c, biasData, packed, residualData};
  ctx.parallelFor(
      n / kChunkColumns, fields, [&](Value chunk, ValueRange f) {
        // The chunk's byte offset in C's rows and its factors.
        Value col = mul(chunk, kChunkColumns * 4);
        Value factors = mul(chunk, kFactors * chunkBytes);
        auto at = [&](Field base, int64_t bytes) {
          return add(f[base], i64(bytes));
        };
        // Block (i, j) of C, of the fc's residual or of a temporary, at the
        // chunk's columns.
        auto block = [&](Field base, int i, int j) {
          return add(at(base, (i * m * g.n + j * n) * 4), col);
        };
        auto fromA = [&](int i, int j) {
          return at(A, (i * m * g.k + j * k) * 4);
        };
        auto sum = [&](int i) { return at(S, (i - 1) * m * k * 4); };
        Value none = i64(0);
        Value biasLeft = bias ? add(f[Bias], col) : none;
        Value biasRight = bias ? add(at(Bias, n * 4), col) : none;
        // X and Y side by side, Z: the temporaries.
        Value x = block(XY, 0, 0), y = block(XY, 0, 1), zz = block(Z, 0, 0);
        // A product into `dst`, adding `added` (null: nothing): the
        // kernel's fields a, packed_b, bias, c (, residual).
        auto product = [&](const std::string &kernel, Value from, Factor factor,
                           Value biasOf, Value dst, Value added) {
          SmallVector<Value> args{
              from, add(f[Packed], add(factors, i64(factor * chunkBytes))),
              biasOf, dst};
          if (added)
            args.push_back(added);
          ctx.callKernel(kernel, args);
        };
        product(firstKernel, fromA(0, 0), B11, none, x, Value());
        product(fromAKernel, fromA(0, 1), B21, biasLeft, block(C, 0, 0), x);
        product(chainKernel, sum(2), T2, none, y, x);
        product(chainKernel, sum(1), T1, none, zz, y);
        product(chainKernel, sum(3), T3, none, x, y);
        product(fromAKernel, fromA(1, 1), NegT4, biasLeft, block(C, 1, 0), x);
        // mlcc_strassen_combine_args: dst, bias, terms.
        SmallVector<Value> c22Args{block(C, 1, 1), biasRight, x, zz, y};
        if (residual)
          c22Args.push_back(block(Residual, 1, 1));
        ctx.callKernel(c22Kernel, c22Args);
        product(lastKernel, sum(4), B22, biasRight, block(C, 0, 1), zz);
        if (!residual)
          return;
        for (auto [i, j] : {std::pair{0, 0}, {1, 0}, {0, 1}})
          ctx.callKernel(finishKernel,
                         {block(C, i, j), j ? biasRight : biasLeft,
                          block(C, i, j), block(Residual, i, j)});
      });
  if (padRow)
    copy(copyC, c, g.c, g.m * g.n);
  return success();
}

} // namespace mlcc::avx512
