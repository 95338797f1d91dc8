//===- Recurrent.cpp - AVX-512 f32 LSTM, GRU and RNN time steps -----------===//
//
// The product H_{t-1} R^T is the GEMM kernel's microkernel (Gemm.cpp) with
// one column block per unit block: `rows` batch rows x G gate vectors of
// accumulators for the whole K loop. With few rows (batch 1, a GEMV) those
// are too few independent FMA chains to cover the FMA latency, so the K
// steps alternate between S sets of accumulators (k % S), summed after the
// loop. Then, row by row, the gates go through the eltwise injector in
// place and the new state is stored (masked in the last unit block).
//
// Register plan (rbx and r12-r15 are saved, the rest is caller-saved):
//   rdi  args          r8  R^T at the unit block   r9  unit block * 64
//   r10  xw column of the unit block, bytes        r11 Rbh at the unit block
//   rsi  h_prev row    rdx xw row                  r12 c row   r13 h row
//   rax  h_prev at k   rbx R^T at k                rcx k loop counter
//   r14  row counter   r15 unit counter
//   k1   mask of the last unit block               k2  injector scratch
//   zmm  accumulators from 0; in the K loop G R^T vectors and two
//        broadcasts above them; after it the injector's four temporaries
//        and one state register.
//
//===----------------------------------------------------------------------===//

#include "Recurrent.h"
#include "EltwiseInjector.h"
#include "Gemm.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>

namespace mlcc::avx512 {

namespace {

using Xbyak::Zmm;

constexpr int kNumZmm = 32;
constexpr int kMaxBlockRows = 6;
/// Independent FMA chains that cover the FMA latency (4 cycles, 2 a cycle).
constexpr int kMinChains = 8;
constexpr int64_t kMaxBytes = int64_t(1) << 31;
/// Registers above the accumulators after the K loop: the injector's
/// temporaries and the state (c or h_prev) being combined.
constexpr int kEpilogueRegs = kEltwiseMaxTemps + 1;

int64_t unitBlocks(int64_t hidden) { return (hidden + 15) / 16; }

class RecurrentStepKernel : public JitGenerator {
public:
  RecurrentStepKernel(std::vector<uint8_t> &buffer,
                      const RecurrentStepSpec &spec, int rows, int splits)
      : JitGenerator(buffer), spec_(spec),
        gates_(static_cast<int>(recurrentGates(spec.cell))), rows_(rows),
        splits_(splits), injector_(*this) {}

  void generate();

private:
  const RecurrentStepSpec &spec_;
  const int gates_, rows_, splits_;
  EltwiseInjector injector_;

  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regRUnit_ = r8;
  const Xbyak::Reg64 regCol_ = r9;
  const Xbyak::Reg64 regXwCol_ = r10;
  const Xbyak::Reg64 regBias_ = r11;
  const Xbyak::Reg64 regHPrev_ = rsi;
  const Xbyak::Reg64 regXw_ = rdx;
  const Xbyak::Reg64 regC_ = r12;
  const Xbyak::Reg64 regH_ = r13;
  const Xbyak::Reg64 regHK_ = rax;
  const Xbyak::Reg64 regRK_ = rbx;
  const Xbyak::Reg64 regKIter_ = rcx;
  const Xbyak::Reg64 regRowIter_ = r14;
  const Xbyak::Reg64 regUnitIter_ = r15;
  const Xbyak::Opmask kTail_ = k1;

  int64_t k() const { return spec_.hidden; }
  /// Accumulator of row i, gate g, K set s.
  Zmm acc(int rows, int i, int g, int s) const {
    return Zmm((s * rows + i) * gates_ + g);
  }
  Xbyak::Address field(size_t offset) {
    return ptr[regArgs_ + static_cast<int>(offset)];
  }
  /// Element (row i, unit block column) of a [batch, hidden] array whose
  /// row block starts at `row`.
  Xbyak::Address stateAt(const Xbyak::Reg64 &row, int i) {
    return ptr[row + regCol_ + static_cast<int>(i * spec_.hidden * 4)];
  }

  void unitLoop(int64_t count, bool masked);
  void rowLoop(bool masked);
  void block(int rows, bool masked);
  void kStep(int rows, int64_t u, int s);
  void rowEpilogue(int rows, int i, bool masked);
  /// x = chain(x), with the temporaries above the accumulators.
  void apply(const std::vector<EltwiseOp> &chain, const Zmm &x, int free);
  void loadState(const Zmm &dst, const Xbyak::Address &src, bool masked);
  void storeState(const Xbyak::Address &dst, const Zmm &src, bool masked);
};

void RecurrentStepKernel::apply(const std::vector<EltwiseOp> &chain,
                                const Zmm &x, int free) {
  EltwiseLane l;
  l.x = x;
  for (int t = 0; t < kEltwiseMaxTemps; ++t)
    l.t[t] = Zmm(free + t);
  l.k = k2;
  for (const EltwiseOp &op : chain)
    injector_.unary(op, l);
}

void RecurrentStepKernel::loadState(const Zmm &dst, const Xbyak::Address &src,
                                    bool masked) {
  if (masked)
    vmovups(dst | kTail_ | Xbyak::util::T_z, src);
  else
    vmovups(dst, src);
}

void RecurrentStepKernel::storeState(const Xbyak::Address &dst, const Zmm &src,
                                     bool masked) {
  if (masked)
    vmovups(dst | kTail_, src);
  else
    vmovups(dst, src);
}

void RecurrentStepKernel::kStep(int rows, int64_t u, int s) {
  const int free = splits_ * rows * gates_;
  for (int g = 0; g < gates_; ++g)
    vmovups(Zmm(free + g),
            ptr[regRK_ + static_cast<int>((g * k() + u) * kZmmBytes)]);
  for (int i = 0; i < rows; ++i) {
    Zmm a(free + gates_ + i % 2);
    vbroadcastss(a, ptr[regHK_ + static_cast<int>((i * k() + u) * 4)]);
    for (int g = 0; g < gates_; ++g)
      vfmadd231ps(acc(rows, i, g, s), Zmm(free + g), a);
  }
}

void RecurrentStepKernel::rowEpilogue(int rows, int i, bool masked) {
  const int free = splits_ * rows * gates_;
  const Zmm state(free + kEltwiseMaxTemps);
  auto a = [&](int g) { return acc(rows, i, g, 0); };
  // The gate's column of xw: whole vectors, the layout pads the last unit
  // block.
  auto xw = [&](int g) {
    return ptr[regXw_ + regXwCol_ +
               static_cast<int>((i * spec_.xwStride + g * 16) * 4)];
  };
  switch (spec_.cell) {
  case RecurrentCell::Lstm: {
    for (int g = 0; g < 4; ++g) {
      vaddps(a(g), a(g), xw(g));
      apply(g == 3 ? spec_.g : spec_.f, a(g), free);
    }
    // c = f c + i g, stored; h = o h(c).
    loadState(state, stateAt(regC_, i), masked);
    vmulps(a(2), a(2), state);
    vfmadd231ps(a(2), a(0), a(3));
    storeState(stateAt(regC_, i), a(2), masked);
    apply(spec_.h, a(2), free);
    vmulps(a(1), a(1), a(2));
    storeState(stateAt(regH_, i), a(1), masked);
    return;
  }
  case RecurrentCell::Gru:
    for (int g = 0; g < 2; ++g) {
      vaddps(a(g), a(g), xw(g));
      apply(spec_.f, a(g), free);
    }
    // h~ = g(xw_h + r (H Rh^T + Rbh)); h = h~ + z (H - h~).
    if (spec_.bias)
      vaddps(a(2), a(2), ptr[regBias_]);
    vmulps(a(2), a(2), a(1));
    vaddps(a(2), a(2), xw(2));
    apply(spec_.g, a(2), free);
    loadState(state, stateAt(regHPrev_, i), masked);
    vsubps(state, state, a(2));
    vfmadd231ps(a(2), a(0), state);
    storeState(stateAt(regH_, i), a(2), masked);
    return;
  case RecurrentCell::Rnn:
    vaddps(a(0), a(0), xw(0));
    apply(spec_.f, a(0), free);
    storeState(stateAt(regH_, i), a(0), masked);
    return;
  }
}

void RecurrentStepKernel::block(int rows, bool masked) {
  for (int s = 0; s < splits_; ++s)
    for (int i = 0; i < rows; ++i)
      for (int g = 0; g < gates_; ++g) {
        Zmm z = acc(rows, i, g, s);
        vpxord(z, z, z);
      }
  // The unroll is a multiple of the splits, so step u of every iteration
  // (and of the rest) is in set u % splits.
  const int64_t unroll = splits_ * ((4 + splits_ - 1) / splits_);
  const int64_t iters = k() / unroll, rest = k() % unroll;
  mov(regHK_, regHPrev_);
  mov(regRK_, regRUnit_);
  if (iters > 0) {
    Xbyak::Label loop;
    if (iters > 1) {
      mov(regKIter_, iters);
      alignCode(32, /*withNops=*/true);
      L(loop);
    }
    for (int64_t u = 0; u < unroll; ++u)
      kStep(rows, u, static_cast<int>(u % splits_));
    if (iters > 1 || rest) {
      add(regHK_, static_cast<int>(unroll * 4));
      add(regRK_, static_cast<int>(unroll * kZmmBytes));
    }
    if (iters > 1) {
      dec(regKIter_);
      jnz(loop, T_NEAR);
    }
  }
  for (int64_t u = 0; u < rest; ++u)
    kStep(rows, u, static_cast<int>(u % splits_));
  for (int s = 1; s < splits_; ++s)
    for (int i = 0; i < rows; ++i)
      for (int g = 0; g < gates_; ++g)
        vaddps(acc(rows, i, g, 0), acc(rows, i, g, 0), acc(rows, i, g, s));
  for (int i = 0; i < rows; ++i)
    rowEpilogue(rows, i, masked);
}

void RecurrentStepKernel::rowLoop(bool masked) {
  mov(regHPrev_, field(offsetof(mlcc_rnn_step_args, h_prev)));
  mov(regXw_, field(offsetof(mlcc_rnn_step_args, xw)));
  if (spec_.cell == RecurrentCell::Lstm)
    mov(regC_, field(offsetof(mlcc_rnn_step_args, c)));
  mov(regH_, field(offsetof(mlcc_rnn_step_args, h)));
  const int64_t full = spec_.batch / rows_;
  const int tail = static_cast<int>(spec_.batch % rows_);
  if (full > 0) {
    Xbyak::Label loop;
    if (full > 1) {
      mov(regRowIter_, full);
      L(loop);
    }
    block(rows_, masked);
    if (full > 1 || tail) {
      const int stateBytes = static_cast<int>(rows_ * spec_.hidden * 4);
      add(regHPrev_, stateBytes);
      add(regXw_, static_cast<int>(rows_ * spec_.xwStride * 4));
      if (spec_.cell == RecurrentCell::Lstm)
        add(regC_, stateBytes);
      add(regH_, stateBytes);
    }
    if (full > 1) {
      dec(regRowIter_);
      jnz(loop, T_NEAR);
    }
  }
  if (tail)
    block(tail, masked);
}

void RecurrentStepKernel::unitLoop(int64_t count, bool masked) {
  if (count == 0)
    return;
  Xbyak::Label loop;
  if (count > 1) {
    mov(regUnitIter_, count);
    L(loop);
  }
  rowLoop(masked);
  // Past the last block too, as the GEMM kernel: only the next kind of
  // block reads the pointers again.
  add(regRUnit_, static_cast<int>(gates_ * k() * kZmmBytes));
  add(regCol_, kZmmBytes);
  add(regXwCol_, gates_ * kZmmBytes);
  if (spec_.bias)
    add(regBias_, kZmmBytes);
  if (count > 1) {
    dec(regUnitIter_);
    jnz(loop, T_NEAR);
  }
}

void RecurrentStepKernel::generate() {
  preamble({rbx, r12, r13, r14, r15});
  mov(regRUnit_, field(offsetof(mlcc_rnn_step_args, packed_r)));
  if (spec_.bias)
    mov(regBias_, field(offsetof(mlcc_rnn_step_args, bias)));
  xor_(regCol_, regCol_);
  xor_(regXwCol_, regXwCol_);
  const int rem = static_cast<int>(spec_.hidden % 16);
  if (rem) {
    mov(eax, (1u << rem) - 1);
    kmovw(kTail_, eax);
  }
  const int64_t units = unitBlocks(spec_.hidden);
  unitLoop(rem ? units - 1 : units, /*masked=*/false);
  if (rem)
    unitLoop(1, /*masked=*/true);
  postamble();
}

Status validate(const RecurrentStepSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.batch > 0 && spec.hidden > 0, name, ": batch ", spec.batch,
             " and hidden ", spec.hidden, " must be positive");
  int64_t columns = recurrentColumns(spec.cell, spec.hidden);
  MLCC_CHECK(spec.xwStride >= columns, name, ": xw stride ", spec.xwStride,
             " is smaller than the ", columns, " gate columns");
  const int64_t maxFloats = kMaxBytes / 4;
  MLCC_CHECK(spec.xwStride <= maxFloats / spec.batch &&
                 spec.hidden <= maxFloats / spec.batch &&
                 spec.hidden <= maxFloats / columns,
             name, ": a step of ", spec.batch, " x ", spec.hidden,
             " units is too large (2 GiB at most)");
  MLCC_CHECK(spec.blockRows >= 0 && spec.blockRows <= kMaxBlockRows, name,
             ": block rows ", spec.blockRows, " is not in [0, ", kMaxBlockRows,
             "]");
  for (const auto *chain : {&spec.f, &spec.g, &spec.h})
    for (const EltwiseOp &op : *chain)
      MLCC_CHECK(!isBinary(op.kind), name, ": activation op ",
                 eltwiseKindName(op.kind), " is not unary");
  return Status::success();
}

} // namespace

int64_t recurrentGates(RecurrentCell cell) {
  return cell == RecurrentCell::Lstm ? 4 : cell == RecurrentCell::Gru ? 3 : 1;
}

int64_t recurrentColumns(RecurrentCell cell, int64_t hidden) {
  return unitBlocks(hidden) * 16 * recurrentGates(cell);
}

void packRecurrentWeights(RecurrentCell cell, const float *w, int64_t hidden,
                          int64_t k, std::vector<float> &packed) {
  const int64_t gates = recurrentGates(cell);
  const int64_t columns = recurrentColumns(cell, hidden);
  // w's rows in the interleaved column order (zero rows for the padding),
  // then packed as a transposed B.
  std::vector<float> rows(static_cast<size_t>(columns * k), 0.0f);
  for (int64_t g = 0; g < gates; ++g)
    for (int64_t j = 0; j < hidden; ++j)
      std::copy_n(w + (g * hidden + j) * k, k,
                  rows.begin() + recurrentColumn(gates, g, j) * k);
  packB(rows.data(), k, columns, k, /*transB=*/true, packed);
}

Status generateRecurrentStep(const RecurrentStepSpec &spec,
                             std::vector<uint8_t> &code) {
  code.clear();
  const int64_t gates = recurrentGates(spec.cell);
  MLCC_RETURN_IF_ERROR(validate(spec));
  // Rows as the GEMM kernel's, within the registers: G R^T vectors and two
  // broadcasts in the K loop, the epilogue's registers after it.
  int rows =
      spec.blockRows
          ? spec.blockRows
          : static_cast<int>(std::min<int64_t>(kMaxBlockRows, spec.batch));
  int splits = static_cast<int>(std::min<int64_t>(
      kMinChains, (kMinChains + rows * gates - 1) / (rows * gates)));
  int accs = splits * rows * static_cast<int>(gates);
  MLCC_CHECK(accs + std::max<int>(gates + 2, kEpilogueRegs) <= kNumZmm,
             spec.name, ": a block of ", rows, " rows x ", gates,
             " gates needs more than ", kNumZmm, " zmm registers");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    RecurrentStepKernel kernel(buffer, spec, rows, splits);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
