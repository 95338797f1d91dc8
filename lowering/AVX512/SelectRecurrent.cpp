//===- SelectRecurrent.cpp - LSTM, GRU and RNN -> AVX-512 kernels ---------===//
//
// f32 cells with constant weights, computed as oneDNN's RNN primitive does:
//
//   xw = X W^T + Wb (+ Rb)   every step and direction: one GEMM kernel call,
//                            W packed now in the interleaved gate layout
//                            (Kernels/Recurrent.h), into an arena scratch
//                            [seq, batch, dirs, gates]
//   for step in [0, seq):    scf.for in the host function
//     per direction: one step kernel, H_{t-1} R^T with R packed now, the
//     gates' activations and the state update in registers, writing Y[t]
//
// Y (the op's, or a scratch when it is absent) holds every step's h: a
// step reads H_{t-1} from the previous step's Y (initial_h, or zeros, at
// the first), so no state is copied between steps. The LSTM's c is updated
// in place, in Y_c's buffer when the op has it. Rb is folded into xw's bias
// but for the GRU's h gate, which the reset gate scales.
//
// The kernels take sigmoid, tanh and relu activations (and clip), the
// forward, reverse and bidirectional directions, layout 0. Everything else
// (peepholes, input_forget, sequence_lens, the GRU without
// linear_before_reset, other activations, run-time weights) is declined
// and goes through the portable lowering (Portable/Recurrent.cpp).
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "KernelABI.h"
#include "Recurrent.h"
#include "SelectionUtils.h"

#include "GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>
#include <type_traits>

using namespace mlir;

namespace mlcc::avx512 {

namespace {

// Operand positions shared by the three ops.
enum { kX = 0, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };

bool present(Value v) { return v && !isa<NoneType>(v.getType()); }

struct CellPlan {
  RecurrentCell cell = RecurrentCell::Lstm;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse = false;       // direction = "reverse"
  std::vector<float> w, r, b; // b empty when absent
  std::vector<EltwiseOp> f, g, h;
};

/// The activation named `name` (ONNX's spelling), after the clip when the
/// op has one; false for one the kernel lacks.
bool activationChain(StringRef name, std::optional<float> clip,
                     std::vector<EltwiseOp> &chain) {
  std::string n = name.lower();
  EltwiseKind kind;
  if (n == "sigmoid")
    kind = EltwiseKind::Sigmoid;
  else if (n == "tanh")
    kind = EltwiseKind::Tanh;
  else if (n == "relu")
    kind = EltwiseKind::Relu;
  else
    return false;
  chain.clear();
  if (clip)
    chain.push_back(EltwiseOp::clip(-*clip, *clip));
  chain.push_back(EltwiseOp::unary(kind));
  return true;
}

/// f, g, h from `activations` (the ONNX defaults without it); false when
/// the directions differ or one is not the kernel's.
bool planActivations(CellPlan &plan, ArrayAttr names,
                     std::optional<float> clip) {
  SmallVector<StringRef> list;
  if (names) {
    for (Attribute a : names)
      list.push_back(cast<StringAttr>(a).getValue());
  } else if (plan.cell == RecurrentCell::Lstm) {
    list = {"Sigmoid", "Tanh", "Tanh"};
  } else if (plan.cell == RecurrentCell::Gru) {
    list = {"Sigmoid", "Tanh"};
  } else {
    list = {"Tanh"};
  }
  size_t perDir = plan.cell == RecurrentCell::Lstm  ? 3
                  : plan.cell == RecurrentCell::Gru ? 2
                                                    : 1;
  // One set for both directions, or one per direction, equal.
  if (list.size() != perDir &&
      (list.size() != 2 * perDir || plan.dirs != 2 ||
       !llvm::equal(
           ArrayRef(list).take_front(perDir), ArrayRef(list).drop_front(perDir),
           [](StringRef a, StringRef b) { return a.equals_insensitive(b); })))
    return false;
  std::vector<EltwiseOp> *chains[] = {&plan.f, &plan.g, &plan.h};
  for (size_t i = 0; i < perDir; ++i)
    if (!activationChain(list[i], clip, *chains[i]))
      return false;
  return true;
}

template <typename OpT>
bool planCell(OpT op, OpLoweringContext &ctx, CellPlan &plan) {
  Operation *o = op.getOperation();
  if constexpr (std::is_same_v<OpT, graph::LSTMOp>) {
    plan.cell = RecurrentCell::Lstm;
    if (op.getInputForget().value_or(0) != 0 || present(op.getP()))
      return false;
  } else if constexpr (std::is_same_v<OpT, graph::GRUOp>) {
    plan.cell = RecurrentCell::Gru;
    if (op.getLinearBeforeReset().value_or(0) == 0)
      return false;
  } else {
    plan.cell = RecurrentCell::Rnn;
  }
  StringRef dir = op.getDirection().value_or("forward");
  plan.dirs = dir == "bidirectional" ? 2 : 1;
  plan.reverse = dir == "reverse";
  if ((dir != "forward" && dir != "reverse" && plan.dirs != 2) ||
      op.getLayout().value_or(0) != 0 || present(o->getOperand(kSeqLens)))
    return false;
  std::optional<float> clip;
  if (FloatAttr c = op.getClipAttr()) {
    if (!(c.getValueAsDouble() > 0))
      return false;
    clip = static_cast<float>(c.getValueAsDouble());
  }
  if (!planActivations(plan, op.getActivationsAttr(), clip))
    return false;

  for (unsigned i = 0; i < o->getNumOperands(); ++i)
    if (i != kSeqLens && present(o->getOperand(i)) &&
        !isF32Tensor(o->getOperand(i)))
      return false;
  for (Value r : o->getResults())
    if (present(r) && !isF32Tensor(r))
      return false;
  ArrayRef<int64_t> xs = shapeOf(op.getX()), rs = shapeOf(op.getR());
  if (xs.size() != 3 || rs.size() != 3)
    return false;
  plan.seq = xs[0];
  plan.batch = xs[1];
  plan.input = xs[2];
  plan.hidden = rs[2];
  int64_t gh = recurrentGates(plan.cell) * plan.hidden, dirs = plan.dirs;
  SmallVector<int64_t> state{dirs, plan.batch, plan.hidden};
  auto shapeIs = [&](unsigned i, ArrayRef<int64_t> want) {
    return !present(o->getOperand(i)) || shapeOf(o->getOperand(i)) == want;
  };
  auto resultIs = [&](unsigned i, ArrayRef<int64_t> want) {
    return !present(o->getResult(i)) || shapeOf(o->getResult(i)) == want;
  };
  // Shapes the portable lowering rejects (with an error) are its to report.
  if (plan.seq <= 0 || plan.batch <= 0 || plan.input <= 0 || plan.hidden <= 0 ||
      op.getHiddenSize().value_or(plan.hidden) !=
          static_cast<uint64_t>(plan.hidden) ||
      !shapeIs(kW, {dirs, gh, plan.input}) ||
      !shapeIs(kR, {dirs, gh, plan.hidden}) || !shapeIs(kB, {dirs, 2 * gh}) ||
      !shapeIs(kInitH, state) ||
      (plan.cell == RecurrentCell::Lstm && !shapeIs(kInitC, state)) ||
      !resultIs(0, {plan.seq, dirs, plan.batch, plan.hidden}) ||
      !resultIs(1, state) ||
      (plan.cell == RecurrentCell::Lstm && !resultIs(2, state)))
    return false;
  return constantFloats(ctx, op.getW(), plan.w) &&
         constantFloats(ctx, op.getR(), plan.r) &&
         (!present(op.getB()) || constantFloats(ctx, op.getB(), plan.b));
}

/// i64 arithmetic on addresses and offsets.
struct Addr {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 64); }
  Value add(Value l, Value r) { return b.create<arith::AddIOp>(loc, l, r); }
  Value mul(Value l, int64_t r) {
    return b.create<arith::MulIOp>(loc, l, c(r));
  }
  /// base + floats * 4.
  Value at(Value base, Value floats) { return add(base, mul(floats, 4)); }
  Value at(Value base, int64_t floats) { return add(base, c(floats * 4)); }
};

/// `buffer` (a static memref of f32) seen as the `n` floats from `offset`.
Value flatView(OpBuilder &b, Location loc, Value buffer, int64_t offset,
               int64_t n) {
  auto type = MemRefType::get(
      {n}, b.getF32Type(),
      StridedLayoutAttr::get(b.getContext(), offset, ArrayRef<int64_t>{1}));
  return b.create<memref::ReinterpretCastOp>(
      loc, type, buffer, offset, ArrayRef<int64_t>{n}, ArrayRef<int64_t>{1});
}

TargetLowering lowerCell(Operation *op, OpLoweringContext &ctx,
                         const CellPlan &plan) {
  const int64_t gates = recurrentGates(plan.cell), hs = plan.hidden;
  const int64_t cols = recurrentColumns(plan.cell, hs);
  const int64_t dirs = plan.dirs, batch = plan.batch, seq = plan.seq;
  const int64_t units = cols / gates; // hidden rounded up to 16
  const int64_t stateFloats = batch * hs;
  const bool gruBias = plan.cell == RecurrentCell::Gru && !plan.b.empty();

  // W and R of every direction packed, one after the other: cols is whole
  // panels, so the directions' W are the column blocks of one B.
  std::vector<float> packedW, packedR, part;
  for (int64_t d = 0; d < dirs; ++d) {
    packRecurrentWeights(plan.cell, plan.w.data() + d * gates * hs * plan.input,
                         hs, plan.input, part);
    packedW.insert(packedW.end(), part.begin(), part.end());
    packRecurrentWeights(plan.cell, plan.r.data() + d * gates * hs * hs, hs, hs,
                         part);
    packedR.insert(packedR.end(), part.begin(), part.end());
  }
  const int64_t rFloats = packedBSize(hs, cols);
  // xw's bias Wb + Rb, and the GRU's Rbh apart, in the interleaved layout.
  std::vector<float> xwBias, rbh;
  if (!plan.b.empty()) {
    xwBias.assign(dirs * cols, 0.0f);
    rbh.assign(dirs * units, 0.0f);
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t g = 0; g < gates; ++g)
        for (int64_t j = 0; j < hs; ++j) {
          const float *wb = plan.b.data() + d * 2 * gates * hs;
          float rb = wb[gates * hs + g * hs + j];
          bool apart = plan.cell == RecurrentCell::Gru && g == 2;
          xwBias[d * cols + recurrentColumn(gates, g, j)] =
              wb[g * hs + j] + (apart ? 0.0f : rb);
          if (apart)
            rbh[d * units + j] = rb;
        }
  }

  std::string name = nodeName(op);
  GemmSpec proj;
  proj.name = name;
  proj.m = seq * batch;
  proj.n = dirs * cols;
  proj.k = plan.input;
  proj.bias = !xwBias.empty();
  RecurrentStepSpec step;
  step.name = name;
  step.cell = plan.cell;
  step.batch = batch;
  step.hidden = hs;
  step.xwStride = dirs * cols;
  step.f = plan.f;
  step.g = plan.g;
  step.h = plan.h;
  step.bias = gruBias;
  std::vector<uint8_t> projCode, stepCode;
  if (ref::Status s = generateGemm(proj, projCode); s.failed())
    return failed(op, s);
  if (ref::Status s = generateRecurrentStep(step, stepCode); s.failed())
    return failed(op, s);
  std::string projKernel = ctx.addKernel(name + "_xw", std::move(projCode));
  std::string stepKernel = ctx.addKernel(name + "_step", std::move(stepCode));

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Addr a{b, loc};
  Type f32 = b.getF32Type();
  Value zero = a.c(0);
  Value fzero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));

  // xw = X W^T + bias, [seq * batch, dirs * cols].
  Value xw = ctx.scratch(MemRefType::get({seq * batch, dirs * cols}, f32));
  Value xwAddr = ctx.address(xw);
  // mlcc_gemm_args: a, packed_b, bias, c.
  ctx.callKernel(
      projKernel,
      {ctx.address(ctx.buffer(op->getOperand(kX))),
       ctx.addData(name + "_w_packed", bytesOf(packedW)),
       proj.bias ? ctx.addData(name + "_bias", bytesOf(xwBias)) : zero,
       xwAddr});

  // The states: Y, h at the first step, c.
  SmallVector<int64_t> stateShape{dirs, batch, hs};
  Value y = present(op->getResult(0))
                ? ctx.buffer(op->getResult(0))
                : ctx.scratch(MemRefType::get({seq, dirs, batch, hs}, f32));
  Value h0;
  if (present(op->getOperand(kInitH))) {
    h0 = ctx.buffer(op->getOperand(kInitH));
  } else {
    h0 = ctx.scratch(MemRefType::get(stateShape, f32));
    b.create<linalg::FillOp>(loc, fzero, h0);
  }
  Value c;
  if (plan.cell == RecurrentCell::Lstm) {
    c = present(op->getResult(2))
            ? ctx.buffer(op->getResult(2))
            : ctx.scratch(MemRefType::get(stateShape, f32));
    if (present(op->getOperand(kInitC)))
      b.create<memref::CopyOp>(loc, ctx.buffer(op->getOperand(kInitC)), c);
    else
      b.create<linalg::FillOp>(loc, fzero, c);
  }
  Value yAddr = ctx.address(y), h0Addr = ctx.address(h0);
  Value cAddr = c ? ctx.address(c) : zero;
  Value rAddr = ctx.addData(name + "_r_packed", bytesOf(packedR));
  Value rbhAddr = gruBias ? ctx.addData(name + "_rbh", bytesOf(rbh)) : zero;

  auto loop =
      b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0),
                           b.create<arith::ConstantIndexOp>(loc, seq),
                           b.create<arith::ConstantIndexOp>(loc, 1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value s = b.create<arith::IndexCastOp>(loc, b.getI64Type(),
                                           loop.getInductionVar());
    Value first =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, s, zero);
    for (int64_t d = 0; d < dirs; ++d) {
      // The reverse direction walks t = seq - 1 - s and reads Y[t + 1].
      bool back = plan.reverse || d == 1;
      Value t = back ? b.create<arith::SubIOp>(loc, a.c(seq - 1), s) : s;
      Value prev = a.add(t, a.c(back ? 1 : -1));
      auto yAt = [&](Value time) {
        return a.at(yAddr, a.add(a.mul(time, dirs * stateFloats),
                                 a.c(d * stateFloats)));
      };
      Value hPrev = b.create<arith::SelectOp>(
          loc, first, a.at(h0Addr, d * stateFloats), yAt(prev));
      Value xwAt =
          a.at(xwAddr, a.add(a.mul(t, batch * dirs * cols), a.c(d * cols)));
      // mlcc_rnn_step_args: h_prev, xw, packed_r, bias, c, h.
      ctx.callKernel(stepKernel,
                     {hPrev, xwAt, a.at(rAddr, d * rFloats),
                      gruBias ? a.at(rbhAddr, d * units) : zero,
                      c ? a.at(cAddr, d * stateFloats) : zero, yAt(t)});
    }
  }

  // Y_h: each direction's h after its last step.
  if (present(op->getResult(1))) {
    Value yh = ctx.buffer(op->getResult(1));
    for (int64_t d = 0; d < dirs; ++d) {
      int64_t last = plan.reverse || d == 1 ? 0 : seq - 1;
      b.create<linalg::CopyOp>(
          loc,
          flatView(b, loc, y, (last * dirs + d) * stateFloats, stateFloats),
          flatView(b, loc, yh, d * stateFloats, stateFloats));
    }
  }
  return TargetLowering::Lowered;
}

template <typename OpT>
TargetLowering selectCell(OpT op, OpLoweringContext &ctx) {
  CellPlan plan;
  if (!planCell(op, ctx, plan))
    return TargetLowering::Declined;
  return lowerCell(op.getOperation(), ctx, plan);
}

} // namespace

TargetLowering selectRecurrent(Operation *op, OpLoweringContext &ctx,
                               SelectionState &) {
  if (auto lstm = dyn_cast<graph::LSTMOp>(op))
    return selectCell(lstm, ctx);
  if (auto gru = dyn_cast<graph::GRUOp>(op))
    return selectCell(gru, ctx);
  if (auto rnn = dyn_cast<graph::RNNOp>(op))
    return selectCell(rnn, ctx);
  return TargetLowering::Declined;
}

} // namespace mlcc::avx512
