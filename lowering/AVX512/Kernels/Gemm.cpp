//===- Gemm.cpp - AVX-512 f32 GEMM kernels --------------------------------===//
//
// A register-blocked microkernel in the manner of BLIS/oneDNN's brgemm: an
// R x V block of C (R rows, V zmm vectors of 16 columns) stays in
// accumulators for the whole K loop; each k loads V vectors of packed B and
// broadcasts R elements of A, then issues R * V independent FMAs, enough to
// cover the FMA latency. Loops run over column blocks (outer, so a K x 16V
// slice of B stays in L2 while every row block reuses it) and row blocks
// (inner). Every count is a constant of the code: the N tail is a smaller
// column block whose last vector is stored through an opmask, the M tail a
// smaller row block, so no tail is tested at run time. With a run-time M
// the row loop counts args->m down instead, and the tail jumps to the
// smaller block of its size; a run-time N does the same with the column
// blocks, and a run-time K loop counts args->k.
//
// A long K is split into passes over C (as BLIS's kc): each pass reads a
// K-slice of A and B, so that a column block's slice of B stays in L2 while
// the row blocks reuse it. The first pass starts its accumulators at zero,
// the others load them from C; only the last applies the epilogue.
//
// Register plan (rbx, r12 and those of r13-r15 in use are saved, the rest
// is caller-saved):
//   rdi  args          r8  B column block     r9  C column block
//   r10  bias block    rsi A row block        rdx C row block
//   rax  A at k        r11 B at k             rcx k loop counter
//   rbx  row counter   r12 column counter
//   r13  residual - C, in bytes (with a residual): R's element is at the
//        same offset from r13 + C's address
//   r14  prefetch offset: from B at k to the line of the next column block
//        that this row block prefetches (see startPrefetch)
//   r15  bytes of A from row start to the pass's first k (several passes)
//   k1   mask of the last N vector             k2  epilogue scratch mask
//   zmm  accumulators from 0, then V B vectors and two A broadcasts; after
//        the K loop the registers above the accumulators are the bias and
//        the epilogue's scratch.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int kNumZmm = 32;
constexpr int kMaxBlockRows = 6;
constexpr int kMaxBlockVectors = 8;
/// k steps per iteration of the K loop: amortises the pointer updates and
/// the branch.
constexpr int64_t kUnrollK = 4;
/// The largest slice of a column block of B (its panels over one pass's K)
/// whose row blocks prefetch the next one.
constexpr int64_t kPrefetchSliceBytes = 256 * 1024;
/// Byte offsets are 32-bit displacements and immediates.
constexpr int64_t kMaxBytes = int64_t(1) << 31;

/// K steps per pass over C when the spec leaves it open: one pass up to
/// 1024, else equal passes of at most 768 (a 4-vector column block's slice
/// of B is then 192 KiB, half of a 1 MiB L2 with the next block's
/// prefetch), in whole cache lines of A.
int64_t defaultPassSteps(int64_t k) {
  if (k <= 1024)
    return k;
  int64_t passes = (k + 767) / 768;
  return std::min(k, ((k + passes - 1) / passes + 15) / 16 * 16);
}

/// Registers a block of `rows` x `vectors` needs inside the K loop.
int blockRegisters(int rows, int vectors) {
  return rows * vectors + vectors + 2;
}

Status validate(const GemmSpec &spec, int64_t lda, int64_t ldc) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.m >= 0 && spec.n >= 0 && spec.k >= 0, name,
             ": gemm sizes M=", spec.m, " N=", spec.n, " K=", spec.k,
             " must not be negative");
  MLCC_CHECK(lda >= spec.k, name, ": lda ", lda, " is smaller than K ", spec.k);
  MLCC_CHECK(ldc >= spec.n, name, ": ldc ", ldc, " is smaller than N ", spec.n);
  // Checked by division so that the products cannot overflow.
  const int64_t maxFloats = kMaxBytes / 4;
  MLCC_CHECK(spec.m == 0 || lda <= maxFloats / spec.m, name, ": A of ", spec.m,
             " rows of ", lda, " floats is too large (2 GiB at most)");
  MLCC_CHECK(spec.m == 0 || ldc <= maxFloats / spec.m, name, ": C of ", spec.m,
             " rows of ", ldc, " floats is too large (2 GiB at most)");
  int64_t panels = (spec.n + kGemmPanel - 1) / kGemmPanel;
  MLCC_CHECK(panels == 0 || spec.k <= maxFloats / (panels * kGemmPanel), name,
             ": packed B of ", spec.k, " x ", spec.n,
             " is too large (2 GiB at most)");
  MLCC_CHECK(spec.kBlock >= 0, name, ": K block ", spec.kBlock,
             " must not be negative");
  MLCC_CHECK(spec.blockRows >= 0 && spec.blockRows <= kMaxBlockRows, name,
             ": block rows ", spec.blockRows, " is not in [0, ", kMaxBlockRows,
             "]");
  MLCC_CHECK(spec.blockVectors >= 0 && spec.blockVectors <= kMaxBlockVectors,
             name, ": block vectors ", spec.blockVectors, " is not in [0, ",
             kMaxBlockVectors, "]");
  for (size_t i = 0; i < spec.epilogue.size(); ++i) {
    const EltwiseOp &op = spec.epilogue[i];
    MLCC_CHECK(static_cast<unsigned>(op.kind) <=
                   static_cast<unsigned>(EltwiseKind::Min),
               name, ": epilogue op ", i, " has unsupported kind ",
               static_cast<unsigned>(op.kind));
    MLCC_CHECK(!isBinary(op.kind) ||
                   op.rhs.kind == EltwiseOperand::Kind::Constant,
               name, ": epilogue op ", i, " (", eltwiseKindName(op.kind),
               ") has a run-time operand; a gemm epilogue takes constants "
               "only");
  }
  return Status::success();
}

class GemmKernel : public JitGenerator {
public:
  GemmKernel(std::vector<uint8_t> &buffer, const GemmSpec &spec, int64_t lda,
             int64_t ldc, int rows, int vectors)
      : JitGenerator(buffer), spec_(spec), lda_(lda), ldc_(ldc), rows_(rows),
        vectors_(vectors), injector_(*this) {}

  void generate();

private:
  const GemmSpec &spec_;
  const int64_t lda_, ldc_;
  const int rows_, vectors_;
  EltwiseInjector injector_;
  /// Panels of the next column block of B each row block prefetches (0:
  /// none).
  int prefetchPanels_ = 0;
  /// The last column block prefetches the next call's B (prefetchNextB).
  bool prefetchNextB_ = false;
  /// K steps of every pass but the last, and the number of passes.
  int64_t passK_ = 0, passes_ = 1;
  /// The pass being generated: its K steps, and whether it is the first
  /// (accumulators from zero) and the last (epilogue).
  int64_t stepsK_ = 0;
  bool firstPass_ = true, lastPass_ = true;

  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regBCol_ = r8;
  const Xbyak::Reg64 regCCol_ = r9;
  const Xbyak::Reg64 regBiasCol_ = r10;
  const Xbyak::Reg64 regARow_ = rsi;
  const Xbyak::Reg64 regCRow_ = rdx;
  const Xbyak::Reg64 regAK_ = rax;
  const Xbyak::Reg64 regBK_ = r11;
  const Xbyak::Reg64 regKIter_ = rcx;
  const Xbyak::Reg64 regRowIter_ = rbx;
  const Xbyak::Reg64 regColIter_ = r12;
  const Xbyak::Reg64 regResidualDelta_ = r13;
  const Xbyak::Reg64 regPrefetch_ = r14;
  const Xbyak::Reg64 regPassA_ = r15;
  const Xbyak::Opmask kTail_ = k1;

  /// One pass of `steps` K steps over all of C.
  void pass(int64_t steps, bool first, bool last);
  /// `count` column blocks of `vectors` vectors; `masked`: the last vector
  /// of the (single) block is the N tail; `last`: these blocks end C
  /// (nothing after them to prefetch).
  void columnBlocks(int64_t count, int vectors, bool masked, bool last);
  void rowBlocks(int vectors, bool masked);
  void runTimeRowBlocks(int vectors, bool masked);
  void runTimeColumnBlocks();
  void microkernel(int rows, int vectors, bool masked);
  /// One k step at `u` steps past the K pointers.
  void kStep(int rows, int vectors, int64_t u);
  void epilogue(int rows, int vectors, bool masked);
  void storeBlock(int rows, int vectors, bool masked);
  void loadBlock(int rows, int vectors, bool masked);
  /// The K loop of a run-time K (the accumulators zeroed before it).
  void runTimeKLoop(int rows, int vectors);
  /// Points r14 at the first panel of the next column block (of `vectors`
  /// panels, like this one); each row block then moves it to the next panel.
  void startPrefetch(int vectors);
  void nextPrefetchPanel(int vectors);

  static Xbyak::Zmm acc(int i, int j, int vectors) {
    return Xbyak::Zmm(i * vectors + j);
  }
};

void GemmKernel::kStep(int rows, int vectors, int64_t u) {
  const int free = rows * vectors;
  for (int j = 0; j < vectors; ++j)
    vmovups(Xbyak::Zmm(free + j),
            ptr[regBK_ + static_cast<int>((j * spec_.k + u) * kZmmBytes)]);
  for (int i = 0; i < rows; ++i) {
    // Two broadcast registers alternate so that row i + 1's load does not
    // wait for row i's FMAs to read theirs.
    Xbyak::Zmm a(free + vectors + i % 2);
    vbroadcastss(a, ptr[regAK_ + static_cast<int>((i * lda_ + u) * 4)]);
    for (int j = 0; j < vectors; ++j)
      vfmadd231ps(acc(i, j, vectors), Xbyak::Zmm(free + j), a);
  }
  for (int p = 0; p < prefetchPanels_; ++p)
    prefetcht1(ptr[regBK_ + regPrefetch_ +
                   static_cast<int>((p * spec_.k + u) * kZmmBytes)]);
}

// B of a GEMM is a weight, usually read from memory on the first row block
// of each column block: that row block alone would stream the column block
// at its FMA rate, more than one core's share of memory bandwidth (BERT's
// fcs measured 10-15% slower with B not cached). Instead every row block
// prefetches panels of the next column block, a line of each per k step,
// so the next block arrives over the whole of this one: one panel per row
// block, or as many as it takes to cover the block with few row blocks.
// Panels rotate with the row blocks; row blocks past the block's width
// fetch lines already cached. Only kernels of several column blocks
// prefetch: a chunk of one block has nothing of its own to fetch ahead.
void GemmKernel::startPrefetch(int vectors) {
  if (prefetchPanels_)
    mov(regPrefetch_, vectors * spec_.k * kZmmBytes);
}

void GemmKernel::nextPrefetchPanel(int vectors) {
  if (!prefetchPanels_)
    return;
  const int64_t blockBytes = vectors * spec_.k * kZmmBytes;
  add(regPrefetch_, static_cast<int>(prefetchPanels_ * spec_.k * kZmmBytes));
  lea(rax, ptr[regPrefetch_ - static_cast<int>(blockBytes)]);
  cmp(regPrefetch_, static_cast<int>(2 * blockBytes));
  cmovge(regPrefetch_, rax);
}

void GemmKernel::epilogue(int rows, int vectors, bool masked) {
  // bias has exactly N elements: the tail is masked like C's. The chain is
  // op-major, as the eltwise kernel: the accumulators' independent chains
  // interleave.
  const Xbyak::Reg64 *bias = spec_.bias ? &regBiasCol_ : nullptr;
  if (!spec_.residual) {
    injector_.blockEpilogue(spec_.epilogue, rows, vectors, bias, masked,
                            kTail_);
    return;
  }
  // acc + bias + residual, in that order (graph.fc's), then the ops. The
  // residual is a memory operand; the masked lanes of the N tail are not
  // read (AVX-512 suppresses their faults).
  injector_.blockEpilogue({}, rows, vectors, bias, masked, kTail_);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Zmm z = acc(i, j, vectors);
      Xbyak::Address r = ptr[regCRow_ + regResidualDelta_ +
                             static_cast<int>(i * ldc_ * 4 + j * kZmmBytes)];
      if (masked && j == vectors - 1)
        vaddps(z | kTail_, z, r);
      else
        vaddps(z, z, r);
    }
  injector_.blockEpilogue(spec_.epilogue, rows, vectors, nullptr, masked,
                          kTail_);
}

void GemmKernel::microkernel(int rows, int vectors, bool masked) {
  if (!firstPass_)
    loadBlock(rows, vectors, masked);
  else
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < vectors; ++j) {
        Xbyak::Zmm z = acc(i, j, vectors);
        vpxord(z, z, z); // vxorps on zmm would need AVX-512DQ
      }
  if (spec_.runTimeK) {
    runTimeKLoop(rows, vectors);
    epilogue(rows, vectors, masked);
    storeBlock(rows, vectors, masked);
    return;
  }
  const int64_t iters = stepsK_ / kUnrollK;
  const int64_t rest = stepsK_ % kUnrollK;
  if (stepsK_ > 0) {
    mov(regAK_, regARow_);
    mov(regBK_, regBCol_);
  }
  if (iters > 0) {
    Xbyak::Label loop;
    if (iters > 1) {
      mov(regKIter_, iters);
      alignCode(32, /*withNops=*/true);
      L(loop);
    }
    for (int64_t u = 0; u < kUnrollK; ++u)
      kStep(rows, vectors, u);
    if (iters > 1 || rest) {
      add(regAK_, static_cast<int>(kUnrollK * 4));
      add(regBK_, static_cast<int>(kUnrollK * kZmmBytes));
    }
    if (iters > 1) {
      dec(regKIter_);
      jnz(loop, T_NEAR);
    }
  }
  for (int64_t u = 0; u < rest; ++u)
    kStep(rows, vectors, u);

  if (lastPass_)
    epilogue(rows, vectors, masked);
  storeBlock(rows, vectors, masked);
  nextPrefetchPanel(vectors);
}

void GemmKernel::loadBlock(int rows, int vectors, bool masked) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Address c =
          ptr[regCRow_ + static_cast<int>(i * ldc_ * 4 + j * kZmmBytes)];
      if (masked && j == vectors - 1)
        vmovups(acc(i, j, vectors) | kTail_ | T_z, c);
      else
        vmovups(acc(i, j, vectors), c);
    }
}

void GemmKernel::storeBlock(int rows, int vectors, bool masked) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Address c =
          ptr[regCRow_ + static_cast<int>(i * ldc_ * 4 + j * kZmmBytes)];
      if (masked && j == vectors - 1)
        vmovups(c | kTail_, acc(i, j, vectors));
      else
        vmovups(c, acc(i, j, vectors));
    }
}

// rcx counts args->k down: kUnrollK steps at a time, then one at a time.
void GemmKernel::runTimeKLoop(int rows, int vectors) {
  Xbyak::Label unrolled, singles, single, done;
  loadAtMost(regKIter_,
             ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, k))],
             spec_.k, regAK_);
  mov(regAK_, regARow_);
  mov(regBK_, regBCol_);
  test(regKIter_, regKIter_);
  jle(done, T_NEAR);
  L(unrolled);
  cmp(regKIter_, kUnrollK);
  jl(singles, T_NEAR);
  for (int64_t u = 0; u < kUnrollK; ++u)
    kStep(rows, vectors, u);
  add(regAK_, static_cast<int>(kUnrollK * 4));
  add(regBK_, static_cast<int>(kUnrollK * kZmmBytes));
  sub(regKIter_, kUnrollK);
  jmp(unrolled, T_NEAR);
  L(singles);
  test(regKIter_, regKIter_);
  jz(done, T_NEAR);
  L(single);
  kStep(rows, vectors, 0);
  add(regAK_, 4);
  add(regBK_, kZmmBytes);
  dec(regKIter_);
  jnz(single, T_NEAR);
  L(done);
}

// rbx counts the rows left.
void GemmKernel::runTimeRowBlocks(int vectors, bool masked) {
  loadAtMost(regRowIter_,
             ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, m))],
             spec_.m, regAK_);
  runTimeRowLoop(
      regRowIter_, rows_, [&](int n) { microkernel(n, vectors, masked); },
      [&] {
        add(regARow_, static_cast<int>(rows_ * lda_ * 4));
        add(regCRow_, static_cast<int>(rows_ * ldc_ * 4));
      });
}

void GemmKernel::rowBlocks(int vectors, bool masked) {
  mov(regARow_, ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, a))]);
  if (passes_ > 1)
    add(regARow_, regPassA_);
  mov(regCRow_, regCCol_);
  if (spec_.runTimeM) {
    runTimeRowBlocks(vectors, masked);
    return;
  }
  const int64_t full = spec_.m / rows_;
  const int tail = static_cast<int>(spec_.m % rows_);
  if (full > 0) {
    Xbyak::Label loop;
    if (full > 1) {
      mov(regRowIter_, full);
      L(loop);
    }
    microkernel(rows_, vectors, masked);
    if (full > 1 || tail) {
      add(regARow_, static_cast<int>(rows_ * lda_ * 4));
      add(regCRow_, static_cast<int>(rows_ * ldc_ * 4));
    }
    if (full > 1) {
      dec(regRowIter_);
      jnz(loop, T_NEAR);
    }
  }
  if (tail)
    microkernel(tail, vectors, masked);
}

void GemmKernel::columnBlocks(int64_t count, int vectors, bool masked,
                              bool last) {
  if (count == 0)
    return;
  Xbyak::Label loop;
  if (count > 1) {
    mov(regColIter_, count);
    L(loop);
  }
  startPrefetch(vectors);
  // The last block of C prefetches its own lines (cached hits) rather than
  // memory past B, which in a chunk of the columns is another thread's;
  // with prefetchNextB, past B is the next call's B, and it goes there.
  if (prefetchPanels_ && last && !prefetchNextB_) {
    xor_(eax, eax);
    if (count > 1) {
      cmp(regColIter_, 1);
      cmove(regPrefetch_, rax);
    } else {
      mov(regPrefetch_, rax);
    }
  }
  rowBlocks(vectors, masked);
  // Advancing past the last block too keeps the code simple; the pointers
  // are not dereferenced again by this block kind, only by the next one.
  add(regBCol_, static_cast<int>(vectors * spec_.k * kZmmBytes));
  add(regCCol_, vectors * kZmmBytes);
  if (spec_.bias)
    add(regBiasCol_, vectors * kZmmBytes);
  if (count > 1) {
    dec(regColIter_);
    jnz(loop, T_NEAR);
  }
}

// r12 counts the vectors of args->n left: whole blocks while more than a
// block remains, then the last block of its size, its last vector masked
// (all 16 lanes when N is a multiple of 16).
void GemmKernel::runTimeColumnBlocks() {
  Xbyak::Label loop, tails, done;
  loadAtMost(regColIter_,
             ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, n))],
             spec_.n, rax);
  test(regColIter_, regColIter_);
  jle(done, T_NEAR);
  // Lanes of the last vector: (N - 1) % 16 + 1.
  lea(eax, ptr[regColIter_ - 1]);
  and_(eax, kF32Lanes - 1);
  inc(eax);
  mov(r11d, 0xffff);
  bzhi(r11d, r11d, eax);
  kmovw(kTail_, r11d);
  add(regColIter_, kF32Lanes - 1);
  shr(regColIter_, 4);
  L(loop);
  cmp(regColIter_, vectors_);
  jle(tails, T_NEAR);
  startPrefetch(vectors_);
  rowBlocks(vectors_, /*masked=*/false);
  add(regBCol_, static_cast<int>(vectors_ * spec_.k * kZmmBytes));
  add(regCCol_, vectors_ * kZmmBytes);
  if (spec_.bias)
    add(regBiasCol_, vectors_ * kZmmBytes);
  sub(regColIter_, vectors_);
  jmp(loop, T_NEAR);
  L(tails);
  for (int tail = 1; tail <= vectors_; ++tail) {
    Xbyak::Label next;
    cmp(regColIter_, tail);
    jne(next, T_NEAR);
    if (prefetchPanels_ && prefetchNextB_) // as in columnBlocks
      startPrefetch(tail);
    else if (prefetchPanels_)
      xor_(regPrefetch_, regPrefetch_);
    rowBlocks(tail, /*masked=*/true);
    jmp(done, T_NEAR);
    L(next);
  }
  L(done);
}

void GemmKernel::pass(int64_t steps, bool first, bool last) {
  stepsK_ = steps;
  firstPass_ = first;
  lastPass_ = last;
  mov(regBCol_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, packed_b))]);
  if (passes_ > 1) { // B's rows are 64 bytes where A's elements are 4
    lea(rax, ptr[regPassA_ * 8]);
    lea(regBCol_, ptr[regBCol_ + rax * 2]);
  }
  mov(regCCol_, ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, c))]);
  if (spec_.bias)
    mov(regBiasCol_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, bias))]);
  if (spec_.runTimeN) {
    runTimeColumnBlocks();
    return;
  }
  // The masked vector ends the last block: a block of its own kind, whole
  // or short.
  const int64_t nVectors = (spec_.n + kF32Lanes - 1) / kF32Lanes;
  const bool masked = spec_.n % kF32Lanes != 0;
  int64_t fullBlocks = nVectors / vectors_;
  int tailVectors = static_cast<int>(nVectors % vectors_);
  if (masked && tailVectors == 0) {
    --fullBlocks;
    tailVectors = vectors_;
  }
  columnBlocks(fullBlocks, vectors_, /*masked=*/false,
               /*last=*/tailVectors == 0);
  if (tailVectors)
    columnBlocks(1, tailVectors, masked, /*last=*/true);
}

void GemmKernel::generate() {
  // Passes pay when the row blocks reuse the slices of B and prefetch all
  // of the next one; with fewer, B is read about once anyway (measured
  // slower in passes).
  const int64_t rowBlocks = (spec_.m + rows_ - 1) / rows_;
  passK_ = spec_.k;
  if (!spec_.runTimeK && spec_.k > 0) {
    passK_ = spec_.kBlock            ? std::min(spec_.kBlock, spec_.k)
             : rowBlocks >= vectors_ ? defaultPassSteps(spec_.k)
                                     : spec_.k;
    passes_ = (spec_.k + passK_ - 1) / passK_;
  }
  // Prefetching pays when several row blocks share a column block whose
  // slice leaves L2 room for the next one's (a 1 MiB L2 on Zen 4 and 5).
  // The next call's B counts as a next block: one GEMM per Winograd
  // position otherwise starts each position on U from memory (ResNet-50's
  // U is 0.6 to 16 MB a conv, of 100 MB of weights).
  prefetchNextB_ = spec_.prefetchNextB && passes_ == 1;
  const int64_t sliceBytes = vectors_ * passK_ * kZmmBytes;
  if (!spec_.runTimeK && rowBlocks > 1 &&
      (spec_.n > vectors_ * kF32Lanes || prefetchNextB_) &&
      sliceBytes <= kPrefetchSliceBytes &&
      2 * vectors_ * spec_.k * kZmmBytes < kMaxBytes)
    prefetchPanels_ = static_cast<int>((vectors_ + rowBlocks - 1) / rowBlocks);
  std::vector<Xbyak::Reg64> saved{rbx, r12};
  if (spec_.residual)
    saved.push_back(regResidualDelta_);
  if (prefetchPanels_)
    saved.push_back(regPrefetch_);
  if (passes_ > 1)
    saved.push_back(regPassA_);
  preamble(saved);
  if (spec_.m == 0 || spec_.n == 0) {
    postamble();
    return;
  }
  if (spec_.residual) {
    mov(regResidualDelta_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, residual))]);
    sub(regResidualDelta_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_gemm_args, c))]);
  }
  if (const int rem = static_cast<int>(spec_.n % kF32Lanes);
      rem && !spec_.runTimeN) {
    mov(eax, (1u << rem) - 1);
    kmovw(kTail_, eax);
  }
  if (passes_ == 1) {
    pass(spec_.k, /*first=*/true, /*last=*/true);
    postamble();
    return;
  }
  // r15 is the first k of the pass, in bytes of A: the passes between the
  // first and the last share one body.
  xor_(regPassA_, regPassA_);
  pass(passK_, /*first=*/true, /*last=*/false);
  if (passes_ > 2) {
    Xbyak::Label loop;
    L(loop);
    add(regPassA_, static_cast<int>(passK_ * 4));
    pass(passK_, /*first=*/false, /*last=*/false);
    cmp(regPassA_, static_cast<int>((passes_ - 2) * passK_ * 4));
    jl(loop, T_NEAR);
  }
  mov(regPassA_, static_cast<int>((passes_ - 1) * passK_ * 4));
  pass(spec_.k - (passes_ - 1) * passK_, /*first=*/false, /*last=*/true);
  postamble();
}

Status emit(const GemmSpec &spec, int64_t lda, int64_t ldc, int rows,
            int vectors, std::vector<uint8_t> &code) {
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        GemmKernel kernel(buffer, spec, lda, ldc, rows, vectors);
        kernel.generate();
        return kernel.finish(spec.name, code);
      });
}

} // namespace

Status generateGemm(const GemmSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  const int64_t lda = spec.lda ? spec.lda : spec.k;
  const int64_t ldc = spec.ldc ? spec.ldc : spec.n;
  MLCC_RETURN_IF_ERROR(validate(spec, lda, ldc));
  // 6 x 4 keeps 24 accumulators, enough independent FMAs to cover the FMA
  // latency at two FMAs a cycle, with one A broadcast per 4 FMAs (measured
  // within 10% of peak on Zen 5). With M <= 2 there are too few rows for
  // that: the block widens to 8 vectors. gemv is bound by streaming B
  // anyway (1 x 4 and 1 x 8 measure the same); M = 3 to 5 use M x 4.
  int rows = spec.blockRows ? spec.blockRows
                            : static_cast<int>(std::min<int64_t>(
                                  spec.m <= 2 ? 2 : kMaxBlockRows, spec.m));
  rows = std::max(rows, 1);
  int vectors = spec.blockVectors ? spec.blockVectors : (rows <= 2 ? 8 : 4);
  int temps = 0;
  for (const EltwiseOp &op : spec.epilogue)
    temps = std::max(temps, EltwiseInjector::tempsNeeded(op));
  MLCC_CHECK(blockRegisters(rows, vectors) <= kNumZmm &&
                 rows * vectors + std::max(temps, spec.bias ? vectors : 0) <=
                     kNumZmm,
             spec.name, ": a block of ", rows, " rows x ", vectors,
             " vectors needs more than ", kNumZmm, " zmm registers");
  return emit(spec, lda, ldc, rows, vectors, code);
}

void packB(const float *b, int64_t k, int64_t n, int64_t ldb, bool transB,
           std::vector<float> &packed) {
  packed.assign(static_cast<size_t>(packedBSize(k, n)), 0.0f);
  const int64_t panels = (n + kGemmPanel - 1) / kGemmPanel;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t kk = 0; kk < k; ++kk) {
      float *dst = packed.data() + (p * k + kk) * kGemmPanel;
      for (int64_t j = 0; j < kGemmPanel && p * kGemmPanel + j < n; ++j) {
        int64_t col = p * kGemmPanel + j;
        dst[j] = transB ? b[col * ldb + kk] : b[kk * ldb + col];
      }
    }
}

} // namespace mlcc::avx512
